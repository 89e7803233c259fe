/* time32count - every 32-bit time call and truncation of a program and of
 * every process it starts, counted by the kernel, none lost: the runtime
 * audit's lossless channel (sandbox/audit/runtime/plan.py).
 *
 * usage: time32count <out> <program> [arg]...
 *
 * The series kernel counts, per process (thread group), the 32-bit time
 * system calls it made and the times it was handed truncated to 32 bits
 * (or passed as a negative 32-bit time) since its last execve:
 * "Time32_syscalls:" and "Time32_truncations:" in /proc/<pid>/status
 * (kernel-series/0015). Unlike the `log` policy's kernel lines, which are
 * ratelimited, the counts are never dropped; they go when the process does.
 * So the program runs traced (ptrace, with every fork, vfork, clone, exec
 * and exit reported), and when a process is about to exit (the
 * PTRACE_EVENT_EXIT stop of its thread group's leader: the counts are the
 * group's) its counts are read and one line appended to <out>:
 *
 *     time32count <pid> <syscalls> <truncations> <comm>
 *
 * (-1 -1 on a kernel without the counts). What it cannot see: a process
 * image replaced by execve counts again from 0 before any ptrace stop
 * (the stop at an execve's entry needs seccomp, which the series kernels
 * leave out), so only each process's last image is read; and a process
 * still running when the program itself has ended (a daemon) is left
 * untraced, unread.
 *
 * Nothing is written to the program's stdout or stderr. The exit status is
 * the program's (128 + the signal that killed it, as a shell's); 125 for
 * its own failures, one line on stderr.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "usage: time32count <out> <program> [arg]..."
#define SETUP_FAILED 125
#define OPTIONS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | \
		 PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT)
#define SEEN_SLOTS 8192   /* open addressing, pids seen stopping (a power of two) */

static pid_t seen[SEEN_SLOTS];

/* Whether pid has stopped before; records it. A tracee's first stop is the
 * SIGSTOP the kernel gives a new traced process, not a signal to deliver. */
static int seen_before(pid_t pid)
{
	unsigned int i = (unsigned int)pid & (SEEN_SLOTS - 1);
	unsigned int n;

	for (n = 0; n < SEEN_SLOTS; n++, i = (i + 1) & (SEEN_SLOTS - 1)) {
		if (seen[i] == pid)
			return 1;
		if (seen[i] == 0) {
			seen[i] = pid;
			return 0;
		}
	}
	return 1;   /* full: treat as seen (a stop signal is delivered) */
}

static void forget(pid_t pid)
{
	unsigned int i = (unsigned int)pid & (SEEN_SLOTS - 1);
	unsigned int n;

	for (n = 0; n < SEEN_SLOTS && seen[i] != 0; n++, i = (i + 1) & (SEEN_SLOTS - 1))
		if (seen[i] == pid) {
			seen[i] = -1;   /* a tombstone: later pids probe past it */
			return;
		}
}

/* A field of /proc/<pid>/status as a number, -1 when absent. */
static long long field(const char *status, const char *name)
{
	const char *at = strstr(status, name);

	return at ? strtoll(at + strlen(name), NULL, 10) : -1;
}

/* The line of a thread group's leader about to exit; other threads' exits
 * say nothing (their group's counts are the leader's to report). */
static void report(int out, pid_t pid)
{
	char path[64], status[4096], comm[64] = "?";
	const char *name;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	if (n <= 0)
		return;
	status[n] = '\0';
	if (field(status, "\nTgid:") != pid)
		return;
	name = strncmp(status, "Name:", 5) == 0 ? status + 5 : NULL;
	if (name && sscanf(name, " %63[^\n]", comm) != 1)
		strcpy(comm, "?");
	dprintf(out, "time32count %d %lld %lld %s\n", (int)pid, field(status, "\nTime32_syscalls:"),
		field(status, "\nTime32_truncations:"), comm);
}

static int start(char **argv)
{
	pid_t child = fork();

	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0 || raise(SIGSTOP) != 0)
			_exit(SETUP_FAILED);
		execvp(argv[0], argv);
		fprintf(stderr, "time32count: '%s': %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	return child;
}

/* Every tracee's stops until the program itself has exited: its status. */
static int trace(int out, pid_t program)
{
	int status, code = SETUP_FAILED;
	pid_t pid;

	while ((pid = waitpid(-1, &status, __WALL)) > 0) {
		int signal = 0, event = status >> 16;

		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			forget(pid);
			if (pid == program) {
				code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
				break;   /* what outlives it goes on untraced */
			}
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (event == PTRACE_EVENT_EXIT)
			report(out, pid);
		else if (event == 0 && !seen_before(pid) && WSTOPSIG(status) == SIGSTOP)
			;   /* a new tracee's first stop */
		else if (event == 0)
			signal = WSTOPSIG(status);
		seen_before(pid);
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)signal);
	}
	return code;
}

static int command(const struct probe *p, int argc, char **argv)
{
	pid_t program;
	int out, status;

	(void)p;
	if (argc < 3) {
		fprintf(stderr, "time32count: too few arguments\n" USAGE "\n");
		return SETUP_FAILED;
	}
	out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "time32count: cannot write '%s': %s\n", argv[1], strerror(errno));
		return SETUP_FAILED;
	}
	program = start(argv + 2);
	if (program < 0 || waitpid(program, &status, 0) != program || !WIFSTOPPED(status)) {
		fprintf(stderr, "time32count: cannot start '%s'\n", argv[2]);
		return SETUP_FAILED;
	}
	seen_before(program);
	if (ptrace(PTRACE_SETOPTIONS, program, NULL, (void *)(long)OPTIONS) != 0) {
		fprintf(stderr, "time32count: cannot trace '%s': %s\n", argv[2], strerror(errno));
		kill(program, SIGKILL);
		return SETUP_FAILED;
	}
	ptrace(PTRACE_CONT, program, NULL, NULL);
	return trace(out, program);
}

/* No calls: it prints nothing of its own on stdout. */
static const struct probe time32count = {
	.name = "time32count",
	.usage = USAGE,
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &time32count);
}
