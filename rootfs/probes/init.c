/* init - /init of the y2038 sandbox guest (PID 1).
 *
 * usage: /init         as the kernel starts it (PID 1): it reads the kernel
 *                      command line (/proc/cmdline) and ignores its own
 *                      arguments (the words of it the kernel did not know);
 *                      as any other process it does nothing and exits 2
 *        init --list   the calls it prints as JSON lines: none
 *
 *  1. PATH and HOME for everything it starts; busybox's applet links made
 *     when the initramfs has none (a busybox of a foreign architecture
 *     could not list them when the initramfs was built).
 *  2. /proc, /sys, /dev (devtmpfs; busybox's mdev when that fails) and
 *     /tmp mounted.
 *  3. y2038.seed=<64 hex digits> credited to the kernel's random pool
 *     (seed.c; seedrng.c says why), y2038.agent=<tty> (default ttyS1) and
 *     y2038.warp=1 read from the command line.
 *  4. "Y2038-INIT: up" on the console, then the agent (/tools/agent <tty>,
 *     with "spin" under time warp: agent.c says why) as its child.
 *  5. Every child reaped until the agent's exit, which it reports; then the
 *     machine reboots, which QEMU's -no-reboot turns into QEMU's exit.
 *
 * One static exec where busybox's sh ran the same steps as a script with
 * five execs of its own: /init to "up" in about 0.04 s instead of 0.13 s
 * of every boot under TCG (docs/time-warp.md).
 */
#define _GNU_SOURCE
#include "seed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CMDLINE_BYTES 4096
#define USAGE "usage: /init, started by the kernel as PID 1 (or: init --list)"

struct options {
	char tty[64];
	char seed[4 * SEED_BYTES];  /* room for a seed too long, which seed_parse refuses */
	int warp;
};

/* Starts argv[0] with these arguments: its pid, or -1 (said on stderr). */
static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		fprintf(stderr, "init: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		fprintf(stderr, "init: fork: %s\n", strerror(errno));
	return pid;
}

/* Runs argv[0] with these arguments and waits for it. */
static void run(char *const argv[])
{
	int status;
	pid_t pid = spawn(argv);

	if (pid > 0)
		waitpid(pid, &status, 0);
}

static void mount_or_say(const char *source, const char *target, const char *type, const char *data)
{
	if (mount(source, target, type, 0, data) != 0)
		fprintf(stderr, "init: mount %s on %s: %s\n", type, target, strerror(errno));
}

static void mount_pseudo_filesystems(void)
{
	static char *const mdev[] = { "/bin/busybox", "mdev", "-s", NULL };

	mount_or_say("proc", "/proc", "proc", NULL);
	mount_or_say("sysfs", "/sys", "sysfs", NULL);
	if (mount("devtmpfs", "/dev", "devtmpfs", 0, NULL) != 0)
		run(mdev);
	mount_or_say("tmpfs", "/tmp", "tmpfs", "mode=1777");
}

/* value of "<name>=<value>" into out (at most size - 1 bytes); 1 if it matched */
static int take(const char *word, const char *name, char *out, size_t size)
{
	size_t length = strlen(name);

	if (strncmp(word, name, length) != 0 || word[length] != '=')
		return 0;
	snprintf(out, size, "%s", word + length + 1);
	return 1;
}

static void read_options(struct options *o)
{
	char cmdline[CMDLINE_BYTES] = "";
	char *word, *rest;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	snprintf(o->tty, sizeof(o->tty), "ttyS1");
	if (fd >= 0) {
		ssize_t got = read(fd, cmdline, sizeof(cmdline) - 1);

		cmdline[got > 0 ? got : 0] = '\0';
		close(fd);
	}
	for (word = strtok_r(cmdline, " \n", &rest); word; word = strtok_r(NULL, " \n", &rest)) {
		if (take(word, "y2038.agent", o->tty, sizeof(o->tty)) ||
		    take(word, "y2038.seed", o->seed, sizeof(o->seed)))
			continue;
		if (strcmp(word, "y2038.warp=1") == 0)
			o->warp = 1;
	}
}

static void credit_seed(const char *hex)
{
	unsigned char seed[SEED_BYTES];
	int err = seed_parse(hex, seed);

	if (err == 0)
		err = seed_credit(seed);
	if (err)
		fprintf(stderr, "init: y2038.seed: %s\n", strerror(err));
}

/* Reaps every child (the agent's orphans come to PID 1) until the agent
 * ends; its status as a shell's $? would be. */
static int wait_for(pid_t agent)
{
	int status;
	pid_t pid;

	for (;;) {
		pid = wait(&status);
		if (pid == agent)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (pid < 0 && errno != EINTR)
			return 127;
	}
}

int main(int argc, char **argv)
{
	static char *const install[] = { "/bin/busybox", "--install", "-s", NULL };
	struct options o = { .warp = 0 };
	struct stat st;
	pid_t agent;
	int status = 127;

	/* It mounts, and at the end reboots the machine: never anywhere but
	 * in the guest, as the kernel's first process. As that, it takes no
	 * arguments but ignores what it gets: the kernel hands init every
	 * word of its command line it does not know (a scenario's
	 * kernel-args), and PID 1 exiting is a panic. */
	if (getpid() != 1) {
		if (argc == 2 && strcmp(argv[1], "--list") == 0)
			return 0;  /* the calls it prints as JSON lines: none */
		fprintf(stderr, "init: %s\n", USAGE);
		return 2;
	}
	setenv("PATH", "/bin:/sbin:/usr/bin:/usr/sbin", 1);
	setenv("HOME", "/root", 1);
	if (lstat("/bin/mount", &st) != 0)
		run(install);
	mount_pseudo_filesystems();
	read_options(&o);
	if (o.seed[0])
		credit_seed(o.seed);
	printf("Y2038-INIT: up\n");
	fflush(stdout);
	char *agent_argv[] = { "/tools/agent", o.tty, o.warp ? "spin" : NULL, NULL };

	agent = spawn(agent_argv);
	if (agent > 0)
		status = wait_for(agent);
	printf("Y2038-INIT: agent on /dev/%s exited with status %d\n", o.tty, status);
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	return 1;
}
