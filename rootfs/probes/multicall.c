/* multicall.c - one static binary for every probe of a flavour (and, in the
 * tools' flavour, every tool): rootfs/Makefile (MULTICALL=1) compiles each
 * program's main() as multicall_<name>() and links them here with a table
 * of names, multicall-table.h, one MULTICALL(name, function) line each.
 * Every /probes/<flavour>/<name> (and /tools/<name>) is a symlink to this
 * binary; argv[0]'s last part says which program runs.
 *
 * One static glibc per flavour instead of one per probe: the initramfs
 * shrinks from about 38 MiB to under 10 (x86_64).
 */
#include <stdio.h>
#include <string.h>

#define MULTICALL(name, function) int function(int argc, char **argv);
#include "multicall-table.h"
#undef MULTICALL

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} programs[] = {
#define MULTICALL(name, function) { #name, function },
#include "multicall-table.h"
#undef MULTICALL
};

int main(int argc, char **argv)
{
	const char *called = argc > 0 && argv[0] ? argv[0] : "";
	const char *slash = strrchr(called, '/');
	const char *name = slash ? slash + 1 : called;
	size_t i;

	for (i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		if (strcmp(name, programs[i].name) == 0)
			return programs[i].main(argc, argv);
	fprintf(stderr, "multicall: no program named '%s'; run it as one of:", name);
	for (i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		fprintf(stderr, " %s", programs[i].name);
	fputc('\n', stderr);
	return 127;
}
