/* sysctl - write a kernel setting under /proc/sys and read it back.
 *
 * usage: sysctl <dotted.name> <value>
 *        sysctl --list                the calls it prints
 *
 * Writes <value> and a newline to /proc/sys/<name, dots as slashes> (one
 * write(), as `echo value > file` does), reads the file back and prints one
 * JSON line with what it read, trailing newlines stripped:
 *   {"probe":"sysctl","flavour":"native64","call":"sysctl",
 *    "name":"kernel.time32_syscalls","value":"deny"}
 * The runner's plan runs it for the `sysctl` scenario step (sandbox/run/plan.py), so
 * that the step's observation is written and escaped by the same code as
 * every other line. Built once, as a tool, in the machine's 64-bit time_t
 * flavour.
 * Exit status: 0 done; 1 the write or the read failed (a message with the
 * errno name on stderr, nothing on stdout); 2 usage error.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE "usage: sysctl <dotted.name> <value>"
#define PROC_SYS "/proc/sys/"

struct setting {
	const char *name;
	const char *value;
	char path[4096];
	int status;
};

static struct setting setting;

/* "kernel.time32_syscalls" -> "/proc/sys/kernel/time32_syscalls". Refuses
 * what is not a plain dotted name (empty parts, "..", a slash): the file
 * must stay under /proc/sys. */
static int name_to_path(const char *name, char *path, size_t size)
{
	size_t len = strlen(name), i;

	if (len == 0 || name[0] == '.' || name[len - 1] == '.' || strstr(name, "..") ||
	    strchr(name, '/') || sizeof(PROC_SYS) + len > size)
		return 0;
	memcpy(path, PROC_SYS, sizeof(PROC_SYS) - 1);
	for (i = 0; i <= len; i++)
		path[sizeof(PROC_SYS) - 1 + i] = name[i] == '.' ? '/' : name[i];
	return 1;
}

static int fail(struct setting *s, const char *what, int err)
{
	fprintf(stderr, "sysctl: %s %s: %s\n", what, s->path, probe_errname(err));
	s->status = 1;
	return err;
}

static int write_value(struct setting *s)
{
	size_t len = strlen(s->value);
	char *text = malloc(len + 2);
	ssize_t put;
	int fd, err = 0;

	if (!text)
		return fail(s, "write", ENOMEM);
	memcpy(text, s->value, len);
	memcpy(text + len, "\n", 2);
	fd = open(s->path, O_WRONLY | O_TRUNC | O_CLOEXEC);   /* as `echo > file` */
	if (fd < 0) {
		err = errno;
	} else {
		put = write(fd, text, len + 1);
		if (put < 0)
			err = errno;
		else if ((size_t)put != len + 1)
			err = EIO;      /* a /proc/sys file takes one write whole */
		if (close(fd) != 0 && !err)
			err = errno;
	}
	free(text);
	return err ? fail(s, "write", err) : 0;
}

/* The file's text, trailing newlines stripped, into buf. */
static int read_value(struct setting *s, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t got;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return fail(s, "read", errno);
	while (used + 1 < size && (got = read(fd, buf + used, size - 1 - used)) != 0) {
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		used += (size_t)got;
	}
	close(fd);
	if (err)
		return fail(s, "read", err);
	while (used > 0 && buf[used - 1] == '\n')
		used--;
	buf[used] = '\0';
	return 0;
}

static void sysctl_run(void *ctx)
{
	struct setting *s = ctx;
	char value[4096];

	if (write_value(s) || read_value(s, value, sizeof(value)))
		return;
	probe_begin("sysctl", "sysctl");
	probe_str("name", s->name);
	probe_str("value", value);
	probe_end();
}

static int parse(const struct probe *p, int argc, char **argv)
{
	struct setting *s = p->ctx;

	if (argc != 3)
		probe_usage("sysctl", USAGE);
	if (!name_to_path(argv[1], s->path, sizeof(s->path)))
		probe_usage("sysctl", "the name is dotted words (kernel.time32_syscalls); " USAGE);
	s->name = argv[1];
	s->value = argv[2];
	return 2;
}

static int status(const struct probe *p)
{
	const struct setting *s = p->ctx;

	return s->status;
}

static const struct probe_call calls[] = {
	{ "sysctl", sysctl_run, NULL, 0 },
};

static const struct probe sysctl = {
	.name = "sysctl",
	.usage = USAGE,
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.ctx = &setting,
	.parse = parse,
	.finish = status,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &sysctl);
}
