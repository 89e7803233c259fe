/* time32-refusals.so - note glibc's own EOVERFLOW refusals, for the runtime
 * audit (`just rehearse`, sandbox/audit/shim.py builds it, docs/rehearse.md).
 *
 * A glibc 2.34+ program built with 32-bit time_t reads the 64-bit time (the
 * time64 syscall or the vDSO) and, once the value no longer fits, gets
 * EOVERFLOW from glibc itself: the kernel hands nothing truncated back and
 * cannot see the failure. Preloaded (LD_PRELOAD) into such a program, this
 * library wraps the 32-bit time_t entry points that can fail that way and,
 * when one returns EOVERFLOW, appends one line to the file named by
 * $Y2038_SHIM_LOG:
 *
 *     <pid> <program> <function>
 *
 * once per process and function. The call's result and errno are passed on
 * untouched: the program behaves as it would without the shim.
 *
 * Built against the 32-bit time_t ABI (no _TIME_BITS=64): the names wrapped
 * are the ones a 32-bit time_t program binds (clock_gettime, stat64, ...);
 * a program built with _TIME_BITS=64 binds __clock_gettime64 and friends,
 * which are not wrapped, and cannot overflow anyway.
 *
 * It misses: static programs (nothing is preloaded), calls inside glibc
 * itself (no PLT between them), system calls made by number (syscall(),
 * klibc, Go), and truncations that glibc does without an error (IPC_STAT's
 * *_high fields, utmp records).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#if defined(_TIME_BITS) && _TIME_BITS == 64
#error "build with 32-bit time_t: the wrapped names are the 32-bit ones"
#endif

enum { MAX_NOTED = 32 };
static const char *noted[MAX_NOTED];
static pid_t noted_pid;

static int already_noted(const char *function)
{
	int i;

	if (noted_pid != getpid()) {   /* a forked child notes for itself */
		memset(noted, 0, sizeof(noted));
		noted_pid = getpid();
	}
	for (i = 0; i < MAX_NOTED && noted[i]; i++)
		if (noted[i] == function)
			return 1;
	if (i < MAX_NOTED)
		noted[i] = function;
	return 0;
}

static size_t put(char *buf, size_t at, size_t size, const char *text)
{
	while (*text && at + 1 < size)
		buf[at++] = *text++;
	return at;
}

static void note(const char *function)
{
	const char *path = getenv("Y2038_SHIM_LOG");
	/* glibc's name of the program (argv[0]'s last part), not
	 * /proc/self/comm: a program run before may have unmounted /proc
	 * (klibc's kinit does, run in the same root) */
	const char *name = program_invocation_short_name;
	char line[160], number[16];
	size_t at = 0, n = sizeof(number);
	unsigned long pid = (unsigned long)getpid();
	int fd;

	if (!path || already_noted(function))
		return;
	number[--n] = '\0';
	do {
		number[--n] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid && n);
	at = put(line, at, sizeof(line), number + n);
	at = put(line, at, sizeof(line), " ");
	at = put(line, at, sizeof(line), name && name[0] && !strchr(name, ' ') ? name : "?");
	at = put(line, at, sizeof(line), " ");
	at = put(line, at, sizeof(line), function);
	at = put(line, at, sizeof(line), "\n");
	/* open and write only: a stat() of the log would fail past 2038 too */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, at) < 0) {
			/* nowhere to say it: the program goes on as it would */
		}
		close(fd);
	}
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* A wrapper for a function that returns `failed` with errno set. */
#define WRAP(type, name, failed, params, args)                                   \
	type name params                                                             \
	{                                                                            \
		static type (*real) params;                                              \
		type result;                                                             \
		int saved;                                                               \
		if (!real)                                                               \
			real = (type (*) params)next(#name);                                 \
		if (!real) {                                                             \
			errno = ENOSYS;                                                      \
			return failed;                                                       \
		}                                                                        \
		result = real args;                                                      \
		if (result == failed && errno == EOVERFLOW) {                            \
			saved = errno;                                                       \
			note(#name);                                                         \
			errno = saved;                                                       \
		}                                                                        \
		return result;                                                           \
	}

/* the clock */
WRAP(time_t, time, (time_t)-1, (time_t *t), (t))
WRAP(int, gettimeofday, -1, (struct timeval *restrict tv, void *restrict tz), (tv, tz))
WRAP(int, clock_gettime, -1, (clockid_t id, struct timespec *ts), (id, ts))
WRAP(int, timespec_get, 0, (struct timespec *ts, int base), (ts, base))
/* broken-down time to time_t: a date past 2038 does not fit */
WRAP(time_t, mktime, (time_t)-1, (struct tm *tm), (tm))
WRAP(time_t, timegm, (time_t)-1, (struct tm *tm), (tm))
/* file times: a file touched past 2038 cannot be stat()ed */
WRAP(int, stat, -1, (const char *restrict path, struct stat *restrict buf), (path, buf))
WRAP(int, lstat, -1, (const char *restrict path, struct stat *restrict buf), (path, buf))
WRAP(int, fstat, -1, (int fd, struct stat *buf), (fd, buf))
WRAP(int, fstatat, -1, (int dirfd, const char *restrict path, struct stat *restrict buf, int flags),
     (dirfd, path, buf, flags))
WRAP(int, stat64, -1, (const char *restrict path, struct stat64 *restrict buf), (path, buf))
WRAP(int, lstat64, -1, (const char *restrict path, struct stat64 *restrict buf), (path, buf))
WRAP(int, fstat64, -1, (int fd, struct stat64 *buf), (fd, buf))
WRAP(int, fstatat64, -1, (int dirfd, const char *restrict path, struct stat64 *restrict buf, int flags),
     (dirfd, path, buf, flags))
