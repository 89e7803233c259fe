/* forks - many processes at once, each making one 32-bit time system call:
 * what the runtime audit's lossless channel must count without loss
 * (probes/time32count.c; pytest/integration/test_time32count.py).
 *
 * usage: forks <n>
 *
 * Forks n children without waiting between them; each makes one raw
 * clock_gettime system call by its old number (on i386 and armhf the
 * 32-bit time call, clock_gettime32 to the kernel, whatever this program's
 * time_t; on x86_64 a 64-bit one) and exits; then reaps them all. Prints
 * nothing; exit status 0 when all n were forked and reaped, 1 otherwise,
 * 125 on usage errors.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "usage: forks <n>"

static int command(const struct probe *p, int argc, char **argv)
{
	long n, forked = 0, reaped = 0, i;
	char *end = NULL;

	(void)p;
	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 1 || n > 100000 || *end) {
		fprintf(stderr, "forks: <n> must be a number from 1 to 100000\n" USAGE "\n");
		return 125;
	}
	for (i = 0; i < n; i++) {
		pid_t child = fork();

		if (child == 0) {
			long words[4] = { 0 };   /* room for either struct timespec */

			syscall(SYS_clock_gettime, 0 /* CLOCK_REALTIME */, words);
			_exit(0);
		}
		forked += child > 0;
	}
	for (;;) {
		if (wait(NULL) > 0)
			reaped++;
		else if (errno != EINTR)
			break;
	}
	return forked == n && reaped == n ? 0 : 1;
}

/* No calls: it prints nothing. */
static const struct probe forks = {
	.name = "forks",
	.usage = USAGE,
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &forks);
}
