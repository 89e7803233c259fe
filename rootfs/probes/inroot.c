/* inroot - run a program of a Debian userland: changed root, a clean
 * environment and a time limit, in one static exec (the `run` steps,
 * sandbox/run/plan.py).
 *
 * usage: inroot <root> <seconds> [NAME=VALUE]... -- <program> [arg]...
 *
 * It does what busybox's `env -i`, `timeout -s KILL` and `chroot` and the
 * userland's own `/usr/bin/env` did in four execs, one of them of a dynamic
 * program (about 0.02 s each under TCG, for every program a scenario runs):
 *
 *  1. A watcher, a grandchild left to init, waits on a pidfd of this
 *     process for <seconds> and sends it SIGKILL if it still runs. It
 *     wakes once (poll), where busybox's timeout wakes every second: under
 *     time warp every wake-up is guest time that cannot be skipped.
 *  2. chroot(<root>) and chdir("/").
 *  3. The environment cleared, then each NAME=VALUE set.
 *  4. execvp(): the program found in the new root's PATH, with argv[0] as
 *     given, as a shell there would start it (busybox's chroot would run
 *     its own applet for a bare "date").
 *
 * The program keeps this process's pid, so its exit status, or the signal
 * that ended it (SIGKILL at the limit: 137 in the shell), reaches the
 * caller unchanged. Its own failures, one line on stderr: 125 for usage or
 * set-up errors, 126 when the program cannot run, 127 when it is not found
 * (as env(1)).
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "usage: inroot <root> <seconds> [NAME=VALUE]... -- <program> [arg]..."
#define SETUP_FAILED 125

static int fail(const char *what, const char *arg)
{
	fprintf(stderr, "inroot: %s '%s': %s\n", what, arg, strerror(errno));
	return SETUP_FAILED;
}

static int usage(const char *why)
{
	fprintf(stderr, "inroot: %s\n" USAGE "\n", why);
	return SETUP_FAILED;
}

/* The watcher's whole life: one poll on the pidfd, then SIGKILL if the
 * process outlived the limit. Nothing of the caller's stays open in it. */
static void watch(int pidfd, int milliseconds)
{
	struct pollfd fd = { .fd = pidfd, .events = POLLIN };
	int ready;

	if (pidfd > 0)
		close_range(0, (unsigned int)pidfd - 1, 0);
	close_range((unsigned int)pidfd + 1, ~0U, 0);
	do
		ready = poll(&fd, 1, milliseconds);
	while (ready < 0 && errno == EINTR);
	if (ready == 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	_exit(0);
}

/* Fork the watcher off as a grandchild, so that the program never sees a
 * child it did not make (a shell's `wait` would wait for it). */
static int start_watcher(double seconds)
{
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);   /* 5.3 and later */
	pid_t child;
	int status;

	if (pidfd < 0)
		return fail("cannot watch", "pidfd_open");
	child = fork();
	if (child < 0)
		return fail("cannot watch", "fork");
	if (child == 0) {
		pid_t watcher = fork();

		if (watcher == 0)
			watch(pidfd, (int)(seconds * 1000.0));
		_exit(watcher < 0 ? SETUP_FAILED : 0);
	}
	close(pidfd);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return usage("cannot start the watcher");
	return 0;
}

static int command(const struct probe *p, int argc, char **argv)
{
	char *end = NULL;
	double seconds;
	int a, failed;

	(void)p;
	if (argc < 5)
		return usage("too few arguments");
	errno = 0;
	seconds = strtod(argv[2], &end);
	if (errno || end == argv[2] || *end || !(seconds > 0) || seconds > INT_MAX / 1000)
		return usage("<seconds> must be a number above 0, at most 2147483");
	for (a = 3; a < argc && strcmp(argv[a], "--") != 0; a++)
		if (!strchr(argv[a], '=') || argv[a][0] == '=')
			return usage("before --, only NAME=VALUE");
	if (a + 1 >= argc)
		return usage("no program after --");
	if ((failed = start_watcher(seconds)) != 0)
		return failed;
	if (chroot(argv[1]) != 0)
		return fail("cannot change root to", argv[1]);
	if (chdir("/") != 0)
		return fail("cannot change directory to", "/");
	if (clearenv() != 0)
		return usage("cannot clear the environment");
	for (a = 3; strcmp(argv[a], "--") != 0; a++)
		if (putenv(argv[a]) != 0)
			return fail("cannot set", argv[a]);
	execvp(argv[a + 1], argv + a + 1);
	failed = errno;   /* before stdio can touch errno */
	fprintf(stderr, "inroot: '%s': %s\n", argv[a + 1], strerror(failed));
	return failed == ENOENT ? 127 : 126;
}

/* No calls: it prints nothing of its own. */
static const struct probe inroot = {
	.name = "inroot",
	.usage = USAGE,
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &inroot);
}
