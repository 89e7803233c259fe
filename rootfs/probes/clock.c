/* clock - read CLOCK_REALTIME through time(), gettimeofday() and
 * clock_gettime(), as a program of this flavour sees it.
 *
 * usage: clock [call...]      (default: every call, in table order)
 *        clock --list         the calls it prints
 *
 * One JSON line per call, e.g.
 *   {"probe":"clock","flavour":"time32-syscall","call":"time","seconds":-2147483620}
 *   {"probe":"clock","flavour":"time32-libc","call":"gettimeofday","errno":"EOVERFLOW"}
 *   {"probe":"clock","flavour":"time64","call":"clock_gettime","seconds":2147483650,"nsec":12345}
 *
 * Like LTP, each call has variants and the flavour picks one:
 *   time32-syscall  the legacy i386 syscalls (__NR_time, __NR_gettimeofday,
 *                   __NR_clock_gettime) with 32-bit structs, as glibc < 2.34,
 *                   klibc, uClibc and old musl call them; the kernel serves
 *                   them from its *_time32 / compat entry points.
 *   others          the libc API, with whatever time_t the flavour has.
 * ARM EABI never had time(2): there the time32-syscall time line is
 * probe_absent()'s ("errno":"ENOSYS","absent":...) and nothing is called.
 *
 * Exit status: 0 when every requested call was attempted (a call failing with
 * an errno is an observation, reported in its line), 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "probe.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

struct observation {
	int err;                 /* errno of a failed call, else 0 */
	const char *absent;      /* why the call does not exist here, else NULL */
	long long seconds;       /* the seconds value as the program sees it */
	const char *frac_name;   /* PROBE_KEY("usec"), PROBE_KEY("nsec") or NULL */
	long long frac;
};

#ifdef PROBE_TIME32_SYSCALL

static void time_sys32(struct observation *o)
{
#ifdef __NR_time
	int32_t t = 0;
	long ret;

	errno = 0;
	ret = syscall(__NR_time, &t);
	/* syscall(2) turns any return value in [-4095, -1] into -1 + errno,
	 * yet a truncated time close below 2106-02-07T06:28:16Z lands there.
	 * The kernel also stores the value in *tloc: trust that unless it was
	 * left untouched. */
	if (ret == -1 && t != -errno) {
		o->err = errno;
		return;
	}
	o->seconds = t;
#else
	o->absent = PROBE_NO_SYSCALL;   /* this ABI never had time(2), e.g. ARM EABI */
#endif
}

static void gettimeofday_sys32(struct observation *o)
{
	struct old_timeval32 tv;

	if (syscall(__NR_gettimeofday, &tv, NULL) != 0) {
		o->err = errno;
		return;
	}
	o->seconds = tv.tv_sec;
	o->frac_name = PROBE_KEY("usec");
	o->frac = tv.tv_usec;
}

static void clock_gettime_sys32(struct observation *o)
{
	struct old_timespec32 ts;

	/* On 32-bit ABIs __NR_clock_gettime is the old 32-bit call; the
	 * time64 one is __NR_clock_gettime64 (403). */
	if (syscall(__NR_clock_gettime, CLOCK_REALTIME, &ts) != 0) {
		o->err = errno;
		return;
	}
	o->seconds = ts.tv_sec;
	o->frac_name = PROBE_KEY("nsec");
	o->frac = ts.tv_nsec;
}
#define VARIANT(call) call##_sys32

#else /* libc API */

static void time_libc(struct observation *o)
{
	time_t t;

	errno = 0;
	t = time(NULL);
	/* (time_t)-1 is also a valid time (1969-12-31T23:59:59Z): only errno
	 * tells a failure (glibc >= 2.34 with 32-bit time_t: EOVERFLOW). */
	if (t == (time_t)-1 && errno != 0) {
		o->err = errno;
		return;
	}
	o->seconds = (long long)t;
}

static void gettimeofday_libc(struct observation *o)
{
	struct timeval tv;

	if (gettimeofday(&tv, NULL) != 0) {
		o->err = errno;
		return;
	}
	o->seconds = (long long)tv.tv_sec;
	o->frac_name = PROBE_KEY("usec");
	o->frac = tv.tv_usec;
}

static void clock_gettime_libc(struct observation *o)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		o->err = errno;
		return;
	}
	o->seconds = (long long)ts.tv_sec;
	o->frac_name = PROBE_KEY("nsec");
	o->frac = ts.tv_nsec;
}
#define VARIANT(call) call##_libc
#endif

static void run_call(const char *call, void (*variant)(struct observation *))
{
	struct observation o = { 0 };

	variant(&o);
	if (o.absent) {
		probe_absent("clock", call, o.absent);
		return;
	}
	if (o.err) {
		probe_errno("clock", call, o.err);
		return;
	}
	probe_begin("clock", call);
	probe_i64("seconds", o.seconds);
	if (o.frac_name)
		probe_i64(o.frac_name, o.frac);
	probe_end();
}

#define CALL(name) \
	static void name##_run(void *ctx) { (void)ctx; run_call(#name, VARIANT(name)); }
CALL(time)
CALL(gettimeofday)
CALL(clock_gettime)

static const struct probe_call calls[] = {
	{ "time",          time_run,          NULL, 0 },
	{ "gettimeofday",  gettimeofday_run,  NULL, 0 },
	{ "clock_gettime", clock_gettime_run, NULL, 0 },
};

static const struct probe clock_probe = {
	.name = "clock",
	.usage = "usage: clock [time|gettimeofday|clock_gettime ...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &clock_probe);
}
