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
 * A whole system (sandbox/system/, docs/system-rehearsal.md):
 * y2038.system=<mode> with y2038.sysdisk=<name>,<start>,<size> (phram's
 * parameter: the system's ext4 image, a memory disk) mounts that image
 * read-only at /system/image, a tmpfs at /system/rw and the overlay of the
 * two at /system/root: the image is never written. The agent starts as in
 * 4. Mode "configure" stops there (the agent runs dpkg in /system/root).
 * Mode "boot" then moves the overlay onto / and, as PID 1, execs the
 * system's own /sbin/init: the agent, forked before, keeps the initramfs
 * as its root and reaches the system through /proc/1/root, outside the
 * system's service manager (systemd kills leftover processes only at
 * shutdown). Whatever fails on the way is said on the console as
 * "Y2038-SYSTEM: <cause>", and the agent runs on in the initramfs.
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
	char system[16];    /* "", "configure" or "boot" */
	char sysdisk[128];  /* phram's name,start,size of the system image */
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
		    take(word, "y2038.seed", o->seed, sizeof(o->seed)) ||
		    take(word, "y2038.system", o->system, sizeof(o->system)) ||
		    take(word, "y2038.sysdisk", o->sysdisk, sizeof(o->sysdisk)))
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

static int say_system(const char *what, const char *path)
{
	printf("Y2038-SYSTEM: %s %s: %s\n", what, path, strerror(errno));
	fflush(stdout);
	return -1;
}

/* The system image (a memory disk mapped by phram) read-only, a tmpfs, and
 * their overlay at /system/root; 0, or -1 after saying why. */
static int mount_system(const char *sysdisk)
{
	static const char *const folders[] = { "/system", "/system/image", "/system/rw", "/system/root" };
	int fd = open("/sys/module/phram/parameters/phram", O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, sysdisk, strlen(sysdisk)) < 0)
		return say_system("cannot map", sysdisk);
	close(fd);
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++)
		if (mkdir(folders[i], 0755) != 0 && errno != EEXIST)
			return say_system("cannot make", folders[i]);
	if (mount("/dev/mtdblock0", "/system/image", "ext4", MS_RDONLY, NULL) != 0)
		return say_system("cannot mount the image (not an ext4 file system?)", "/dev/mtdblock0");
	if (mount("tmpfs", "/system/rw", "tmpfs", 0, "mode=0755") != 0)
		return say_system("cannot mount", "/system/rw");
	if (mkdir("/system/rw/upper", 0755) != 0 || mkdir("/system/rw/work", 0755) != 0)
		return say_system("cannot make", "/system/rw/upper");
	if (mount("overlay", "/system/root", "overlay", 0,
		  "lowerdir=/system/image,upperdir=/system/rw/upper,workdir=/system/rw/work") != 0)
		return say_system("cannot mount the overlay on", "/system/root");
	printf("Y2038-SYSTEM: mounted\n");
	fflush(stdout);
	return 0;
}

/* As PID 1: the overlay becomes / and the system's /sbin/init replaces us;
 * returns only when that failed, after saying why. */
static void exec_system_init(void)
{
	static char *const init_argv[] = { "/sbin/init", NULL };

	if (chdir("/system/root") != 0 || mount(".", "/", NULL, MS_MOVE, NULL) != 0 ||
	    chroot(".") != 0 || chdir("/") != 0) {
		say_system("cannot switch the root to", "/system/root");
		return;
	}
	/* Only now: /sbin/init is often an absolute link (/lib/systemd/systemd),
	 * which means the system's root, not ours. */
	if (access(init_argv[0], X_OK) != 0) {
		say_system("no init in the image:", init_argv[0]);
		return;
	}
	printf("Y2038-SYSTEM: exec /sbin/init\n");
	fflush(stdout);
	execv(init_argv[0], init_argv);
	say_system("cannot exec", init_argv[0]);
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
	int system_ready = o.system[0] && mount_system(o.sysdisk) == 0;

	printf("Y2038-INIT: up\n");
	fflush(stdout);
	char *agent_argv[] = { "/tools/agent", o.tty, o.warp ? "spin" : NULL, NULL };

	agent = spawn(agent_argv);
	if (agent > 0 && system_ready && strcmp(o.system, "boot") == 0)
		exec_system_init();  /* returns only when it failed: the agent runs on */
	if (agent > 0)
		status = wait_for(agent);
	printf("Y2038-INIT: agent on /dev/%s exited with status %d\n", o.tty, status);
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	return 1;
}
