/* filetimes - set a file's times with utimensat(), futimens() and utimes(),
 * read them back with stat() and statx(), as a program of this flavour does,
 * on the filesystem that holds DIR.
 *
 * Long on purpose: three setters and two readers, each in the legacy and the
 * libc form, plus the mount warning read from /dev/kmsg.
 *
 * usage: filetimes DIR [TIME] [call...]
 *        filetimes              (self test: the default calls at
 *                                2038-01-19T03:14:08Z in a fresh folder
 *                                under $TMPDIR, removed afterwards)
 *        filetimes --list       the calls it prints
 *   DIR    a directory on the filesystem under test (e.g. /mnt/ext4-128);
 *          the probe writes filetimes-<flavour>-<call> files there
 *   TIME   the atime and mtime to set, YYYY-MM-DDTHH:MM:SS[Z] (UTC, any
 *          year), always with .5 s (500000000 ns, or 500000 us for utimes)
 *   call   utimensat futimens utimes stat statx mount_warning reread mtime
 *          created (default: every call but the last four; all but those
 *          four need TIME)
 *
 * One JSON line per call; "seconds" and "nsec" are always the file's mtime:
 *   setters  utimensat, futimens, utimes: set TIME through the flavour's
 *            call, then read the mtime back with the raw statx syscall
 *            (64-bit seconds in every ABI), so the line shows what the
 *            filesystem kept. "sent" is the seconds value the program
 *            passed: a 32-bit time_t cannot hold a time past 2038, so in
 *            the time32 flavours it is TIME wrapped to 32 bits, which is
 *            what an old program computing that time ends up passing.
 *              {"probe":"filetimes","flavour":"time32-libc","call":"utimes",
 *               "sent":-2085978496,"seconds":-2085978496,"nsec":500000000}
 *   readers  stat, statx: read a file whose times were set to the full
 *            64-bit TIME with the raw 64-bit utimensat syscall (as a 64-bit
 *            program, tar or another machine would leave it), so the line
 *            shows what this reader makes of it.
 *              {"probe":"filetimes","flavour":"time32-libc","call":"stat","errno":"EOVERFLOW"}
 *   mount_warning  the kernel's "... filesystem being mounted at DIR
 *            supports timestamps until <date> (0x<s_time_max>)" line
 *            (fs/namespace.c mnt_warn_timestamp_expiry()), read with
 *            klogctl(): "warned" 1 or 0, and when 1, "fs" and "until"
 *            (s_time_max, in seconds).
 *   reread   unmount the filesystem at DIR and mount it again (its source
 *            and type from /proc/self/mounts, default options), then read
 *            the mtime of DIR/filetimes-<flavour>-utimensat, left by an
 *            earlier utimensat call, with statx: what the filesystem
 *            decodes from disk, not what the inode cache kept. tmpfs
 *            forgets everything: "errno":"ENOENT".
 *   mtime    the mtime of DIR itself, read with statx (a directory the
 *            initramfs brought, with the mtime its cpio header gave it).
 *   created  a fresh file's mtime, stamped by the kernel's clock, read with
 *            the flavour's stat (libc's, or stat64(2) in time32-syscall):
 *            what a program sees of a file it has just written.
 *
 * Like LTP, each call has variants and the flavour picks one:
 *   time32-syscall  the legacy i386/arm syscalls with 32-bit structs, as
 *                   glibc < 2.34, klibc, uClibc and old musl call them:
 *                   utimensat(2) with old_timespec32 (futimens is
 *                   utimensat(fd, NULL)), utimes(2) with old_timeval32,
 *                   stat64(2) with the kernel's struct stat64 (32-bit
 *                   st_mtime, read as old glibc's signed time_t), statx(2).
 *   others          the libc API, with whatever time_t the flavour has.
 *
 * Exit status: 0 when every requested call was attempted (a call failing
 * with an errno is an observation), 1 when DIR is unusable, 2 on usage
 * errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mntent.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PROBE "filetimes"
#define NSEC 500000000L          /* the fraction every setter asks for */

struct ctx {
	const char *dir;
	int64_t target;          /* TIME in seconds since the epoch */
	int have_target;
	int self_test;           /* no arguments: DIR is a fresh folder of our own */
	char self_dir[4096];
};

/* A setter stores TIME (and NSEC) as atime and mtime of path; it returns 0
 * or an errno and says in *sent which seconds value it passed. */
typedef int (*setter_fn)(const char *path, int64_t target, long long *sent);
/* A reader returns 0 or an errno, and the mtime it sees. */
typedef int (*reader_fn)(const char *path, long long *sec, long long *nsec);

/* ---- the raw syscalls every flavour shares ----------------------------- */

/* statx: 64-bit seconds in every ABI (include/uapi/linux/stat.h). */
static int statx_raw(const char *path, long long *sec, long long *nsec)
{
	struct statx stx;

	if (syscall(__NR_statx, AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MTIME, &stx) != 0)
		return errno;
	*sec = stx.stx_mtime.tv_sec;
	*nsec = stx.stx_mtime.tv_nsec;
	return 0;
}

/* utimensat with the full 64-bit TIME: the kernel's __kernel_timespec
 * through utimensat_time64 (412) on 32-bit ABIs, the native call on 64-bit. */
static int set_full(const char *path, int64_t target)
{
#if __SIZEOF_LONG__ == 4
	struct { int64_t tv_sec; int64_t tv_nsec; } ts[2] = {
		{ target, NSEC }, { target, NSEC } };
	long nr = __NR_utimensat_time64;
#else
	struct timespec ts[2] = { { target, NSEC }, { target, NSEC } };
	long nr = __NR_utimensat;
#endif
	return syscall(nr, AT_FDCWD, path, ts, 0) == 0 ? 0 : errno;
}

#ifdef PROBE_TIME32_SYSCALL
/* ---- time32-syscall: the legacy entry points --------------------------- */

/* old_timespec32, old_timeval32, kernel_stat64: abi32.h */

static int utimensat_sys32(const char *path, int64_t target, long long *sent)
{
	struct old_timespec32 ts[2] = {
		{ (int32_t)target, NSEC }, { (int32_t)target, NSEC } };

	*sent = ts[1].tv_sec;
	return syscall(__NR_utimensat, AT_FDCWD, path, ts, 0) == 0 ? 0 : errno;
}

static int futimens_sys32(const char *path, int64_t target, long long *sent)
{
	struct old_timespec32 ts[2] = {
		{ (int32_t)target, NSEC }, { (int32_t)target, NSEC } };
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err;

	*sent = ts[1].tv_sec;
	if (fd < 0)
		return errno;
	/* glibc < 2.34 futimens(): utimensat(fd, NULL, times, 0) */
	err = syscall(__NR_utimensat, fd, NULL, ts, 0) == 0 ? 0 : errno;
	close(fd);
	return err;
}

static int utimes_sys32(const char *path, int64_t target, long long *sent)
{
	struct old_timeval32 tv[2] = {
		{ (int32_t)target, NSEC / 1000 }, { (int32_t)target, NSEC / 1000 } };

	*sent = tv[1].tv_sec;
	return syscall(__NR_utimes, path, tv) == 0 ? 0 : errno;
}

static int stat_sys32(const char *path, long long *sec, long long *nsec)
{
	struct kernel_stat64 st;

	if (syscall(__NR_stat64, path, &st) != 0)
		return errno;
	*sec = (int32_t)st.k_mtime;
	*nsec = (long long)st.k_mtime_nsec;
	return 0;
}

#define VARIANT(call) call##_sys32
#define statx_sys32 statx_raw

#else /* the libc API */

static int utimensat_libc(const char *path, int64_t target, long long *sent)
{
	/* (time_t)target: a 32-bit time_t wraps, as in an old program. */
	struct timespec ts[2] = {
		{ (time_t)target, NSEC }, { (time_t)target, NSEC } };

	*sent = (long long)ts[1].tv_sec;
	return utimensat(AT_FDCWD, path, ts, 0) == 0 ? 0 : errno;
}

static int futimens_libc(const char *path, int64_t target, long long *sent)
{
	struct timespec ts[2] = {
		{ (time_t)target, NSEC }, { (time_t)target, NSEC } };
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int err;

	*sent = (long long)ts[1].tv_sec;
	if (fd < 0)
		return errno;
	err = futimens(fd, ts) == 0 ? 0 : errno;
	close(fd);
	return err;
}

static int utimes_libc(const char *path, int64_t target, long long *sent)
{
	struct timeval tv[2] = {
		{ (time_t)target, NSEC / 1000 }, { (time_t)target, NSEC / 1000 } };

	*sent = (long long)tv[1].tv_sec;
	return utimes(path, tv) == 0 ? 0 : errno;
}

static int stat_libc(const char *path, long long *sec, long long *nsec)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno;
	*sec = (long long)st.st_mtim.tv_sec;
	*nsec = st.st_mtim.tv_nsec;
	return 0;
}

static int statx_libc(const char *path, long long *sec, long long *nsec)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MTIME, &stx) != 0)
		return errno;
	*sec = stx.stx_mtime.tv_sec;
	*nsec = stx.stx_mtime.tv_nsec;
	return 0;
}

#define VARIANT(call) call##_libc
#endif

/* ---- running a call ---------------------------------------------------- */

/* A fresh empty file DIR/filetimes-<flavour>-<call>; 0 or an errno. */
static int fresh_file(const struct ctx *c, const char *call, char *path, size_t size)
{
	int fd;

	if ((size_t)snprintf(path, size, "%s/filetimes-%s-%s", c->dir, PROBE_FLAVOUR, call) >= size)
		return ENAMETOOLONG;
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void report_mtime(const char *call, int with_sent, long long sent,
                         long long sec, long long nsec)
{
	probe_begin(PROBE, call);
	if (with_sent)
		probe_i64("sent", sent);
	probe_i64("seconds", sec);
	probe_i64("nsec", nsec);
	probe_end();
}

static void run_setter(const struct ctx *c, const char *call, setter_fn set)
{
	char path[4096];
	long long sent = 0, sec = 0, nsec = 0;
	int err = fresh_file(c, call, path, sizeof(path));

	if (!err)
		err = set(path, c->target, &sent);
	if (!err && (err = statx_raw(path, &sec, &nsec)) != 0)
		fprintf(stderr, "%s: %s: statx read-back failed\n", PROBE, call);
	if (err)
		probe_errno(PROBE, call, err);
	else
		report_mtime(call, 1, sent, sec, nsec);
}

static void run_reader(const struct ctx *c, const char *call, reader_fn read)
{
	char path[4096];
	long long sec = 0, nsec = 0;
	int err = fresh_file(c, call, path, sizeof(path));

	if (!err && (err = set_full(path, c->target)) != 0)
		fprintf(stderr, "%s: %s: setting the 64-bit time failed\n", PROBE, call);
	if (!err)
		err = read(path, &sec, &nsec);
	if (err)
		probe_errno(PROBE, call, err);
	else
		report_mtime(call, 0, 0, sec, nsec);
}

#define SETTER(call) \
	static void call##_run(void *c) { run_setter(c, #call, VARIANT(call)); }
#define READER(call) \
	static void call##_run(void *c) { run_reader(c, #call, VARIANT(call)); }
SETTER(utimensat)
SETTER(futimens)
SETTER(utimes)
READER(stat)
READER(statx)

/* The last "<fs> filesystem being [re]mounted at <dir> supports timestamps
 * until <date> (0x<max>)" line of the kernel log for this dir. */
static void mount_warning_run(void *ctx)
{
	const struct ctx *c = ctx;
	static const char tail[] = " supports timestamps until ";
	char needle[4200], fs[64] = "";
	unsigned long long until = 0;
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	int warned = 0, len;
	char *buf, *line, *save = NULL;

	if (size <= 0 || !(buf = malloc((size_t)size + 1))) {
		probe_errno(PROBE, "mount_warning", size < 0 ? errno : ENOMEM);
		return;
	}
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (len < 0) {
		probe_errno(PROBE, "mount_warning", errno);
		free(buf);
		return;
	}
	buf[len] = '\0';
	snprintf(needle, sizeof(needle), " at %s%s", c->dir, tail);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *at = strstr(line, needle), *hex, *word;

		if (!at || !strstr(line, " filesystem being ") || !(hex = strstr(at, "(0x")))
			continue;
		/* the word before " filesystem being" is the filesystem type */
		*strstr(line, " filesystem being ") = '\0';
		word = strrchr(line, ' ');
		word = word ? word + 1 : line;
		if (strchr(word, ']'))
			word = strchr(word, ']') + 1;
		snprintf(fs, sizeof(fs), "%s", word);
		until = strtoull(hex + 3, NULL, 16);
		warned = 1;
	}
	free(buf);
	probe_begin(PROBE, "mount_warning");
	probe_i64("warned", warned);
	if (warned) {
		probe_str("fs", fs);
		probe_i64("until", (long long)until);
	}
	probe_end();
}

/* Unmount the filesystem mounted at dir and mount it again with default
 * options; 0 or an errno (EINVAL: dir is no mount point). */
static int remount(const char *dir)
{
	char source[256] = "", type[64] = "";
	struct mntent *entry;
	FILE *mounts = setmntent("/proc/self/mounts", "r");

	if (!mounts)
		return errno;
	while ((entry = getmntent(mounts)) != NULL)
		if (strcmp(entry->mnt_dir, dir) == 0) {
			snprintf(source, sizeof(source), "%s", entry->mnt_fsname);
			snprintf(type, sizeof(type), "%s", entry->mnt_type);
		}
	endmntent(mounts);
	if (!type[0])
		return EINVAL;
	if (umount(dir) != 0 || mount(source, dir, type, 0, NULL) != 0)
		return errno;
	return 0;
}

static void reread_run(void *ctx)
{
	const struct ctx *c = ctx;
	char path[4200];
	long long sec = 0, nsec = 0;
	int err = remount(c->dir);

	snprintf(path, sizeof(path), "%s/filetimes-%s-utimensat", c->dir, PROBE_FLAVOUR);
	if (!err)
		err = statx_raw(path, &sec, &nsec);
	if (err)
		probe_errno(PROBE, "reread", err);
	else
		report_mtime("reread", 0, 0, sec, nsec);
}

static void mtime_run(void *ctx)
{
	const struct ctx *c = ctx;
	long long sec = 0, nsec = 0;
	int err = statx_raw(c->dir, &sec, &nsec);

	if (err)
		probe_errno(PROBE, "mtime", err);
	else
		report_mtime("mtime", 0, 0, sec, nsec);
}

/* A fresh file, stamped by the kernel with its own clock, read back with
 * this flavour's stat: what a program sees of a file it has just written
 * (under libfaketime, the kernel's clock is not the program's). */
static void created_run(void *ctx)
{
	char path[4096];
	long long sec = 0, nsec = 0;
	int err = fresh_file(ctx, "created", path, sizeof(path));

	if (!err)
		err = VARIANT(stat)(path, &sec, &nsec);
	if (err)
		probe_errno(PROBE, "created", err);
	else
		report_mtime("created", 0, 0, sec, nsec);
}

#define NEEDS_TIME PROBE_FLAG_OWN   /* a call that needs TIME */

static const struct probe_call calls[] = {
	{ "utimensat",     utimensat_run,     NULL, NEEDS_TIME },
	{ "futimens",      futimens_run,      NULL, NEEDS_TIME },
	{ "utimes",        utimes_run,        NULL, NEEDS_TIME },
	{ "stat",          stat_run,          NULL, NEEDS_TIME },
	{ "statx",         statx_run,         NULL, NEEDS_TIME },
	{ "mount_warning", mount_warning_run, NULL, PROBE_NAMED_ONLY },
	{ "reread",        reread_run,        NULL, PROBE_NAMED_ONLY },
	{ "mtime",         mtime_run,         NULL, PROBE_NAMED_ONLY },
	{ "created",       created_run,       NULL, PROBE_NAMED_ONLY },
};

/* ---- arguments --------------------------------------------------------- */

static struct ctx state;

/* DIR [TIME]; no arguments: the self test (the default calls at the
 * rollover second, in a fresh folder under $TMPDIR, removed afterwards). */
static int parse(const struct probe *p, int argc, char **argv)
{
	struct ctx *c = p->ctx;
	long long target;

	if (argc < 2) {
		c->self_test = 1;
		c->target = 2147483648LL;
		c->have_target = 1;
		return 0;
	}
	c->dir = argv[1];
	if (argc < 3 || probe_find_call(p, argv[2]))
		return 1;
	if (!probe_parse_utc(argv[2], &target))
		probe_usage(PROBE, "TIME is YYYY-MM-DDTHH:MM:SS[Z], or an unknown call");
	c->target = target;
	c->have_target = 1;
	return 2;
}

static int prepare(const struct probe *p, const struct probe_call *const *run, size_t n)
{
	struct ctx *c = p->ctx;
	const char *tmp = getenv("TMPDIR");
	char path[256];
	size_t i;
	int fd;

	for (i = 0; i < n; i++)
		if ((run[i]->flags & NEEDS_TIME) && !c->have_target) {
			snprintf(path, sizeof(path), "%s needs TIME; %s", run[i]->name, p->usage);
			probe_usage(PROBE, path);
		}
	if (c->self_test) {
		snprintf(c->self_dir, sizeof(c->self_dir), "%s/filetimes.XXXXXX",
		         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(c->self_dir)) {
			fprintf(stderr, "%s: mkdtemp %s: %s\n", PROBE, c->self_dir, strerror(errno));
			return 1;
		}
		c->dir = c->self_dir;
		return 0;
	}
	/* open(), not stat(): a 32-bit stat() of a directory written after
	 * 2038 fails with EOVERFLOW. */
	if ((fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROBE, c->dir, strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

/* The self test removes what it made. */
static int finish(const struct probe *p)
{
	const struct ctx *c = p->ctx;
	char path[4200];
	size_t i;

	if (!c->self_test)
		return 0;
	for (i = 0; i < p->ncalls; i++) {
		snprintf(path, sizeof(path), "%s/filetimes-%s-%s", c->dir, PROBE_FLAVOUR, p->calls[i].name);
		unlink(path);
	}
	return rmdir(c->dir) == 0 ? 0 : 1;
}

static const struct probe filetimes = {
	.name = PROBE,
	.usage = "usage: filetimes DIR [TIME] [utimensat|futimens|utimes|stat|statx|mount_warning|reread|mtime ...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
	.ctx = &state,
	.parse = parse,
	.prepare = prepare,
	.finish = finish,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &filetimes);
}
