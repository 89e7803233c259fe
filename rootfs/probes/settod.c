/* settod - how far can CLOCK_REALTIME be set? The kernel's upper bound.
 *
 * usage: settod TIME
 *        settod --list      the calls it prints (sets nothing)
 *   TIME   YYYY-MM-DDTHH:MM:SS[Z] (UTC, any year)
 *
 * Two JSON lines: settimeofday() and clock_settime(CLOCK_REALTIME) each try
 * to set the clock to TIME; when one succeeds, the probe reads the clock
 * back ("seconds") and at once sets it back to where it was (the time read
 * before, plus the CLOCK_MONOTONIC time that passed), so later steps see
 * the scenario's clock.
 *   {"probe":"settod","flavour":"native64","call":"settimeofday","sent":8277292035,"seconds":8277292035}
 *   {"probe":"settod","flavour":"native64","call":"clock_settime","sent":8277292036,"errno":"EINVAL"}
 *
 * The kernel refuses a time at or past TIME_SETTOD_SEC_MAX (2232-04-18T23:47:16Z,
 * include/linux/time64.h timespec64_valid_settod(), checked in
 * kernel/time/time.c do_sys_settimeofday64() and kernel/time/timekeeping.c
 * do_settimeofday64()): 30 years before ktime_t ends in 2262, so uptime
 * added to the wall clock cannot overflow it.
 *
 * Meant for the 64-bit time_t flavours (time64, native64: see
 * rootfs/manifest.toml): a 32-bit time_t cannot name such a time, so the
 * time32 builds print "absent" for both calls.
 * Exit status: 0 (a refused time is an observation), 2 on usage errors.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <sys/time.h>
#include <time.h>

#define PROBE "settod"

static long long target;

/* Set CLOCK_REALTIME back to `before` plus the monotonic time since `mono`. */
static void restore(const struct timespec *before, const struct timespec *mono)
{
	struct timespec now, back = *before;

	clock_gettime(CLOCK_MONOTONIC, &now);
	back.tv_sec += now.tv_sec - mono->tv_sec;
	back.tv_nsec += now.tv_nsec - mono->tv_nsec;
	if (back.tv_nsec < 0) {
		back.tv_nsec += 1000000000L;
		back.tv_sec--;
	} else if (back.tv_nsec >= 1000000000L) {
		back.tv_nsec -= 1000000000L;
		back.tv_sec++;
	}
	clock_settime(CLOCK_REALTIME, &back);
}

/* Try one way of setting the clock; report what it did; undo it. */
static void try_set(const char *call, int (*set)(time_t seconds))
{
	struct timespec before, mono, after;
	int err;

	if (sizeof(time_t) < 8) {
		probe_absent(PROBE, call, "a 32-bit time_t cannot name the time");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &before);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	err = set((time_t)target) == 0 ? 0 : errno;
	if (err) {
		probe_begin(PROBE, call);
		probe_i64("sent", target);
		probe_str("errno", probe_errname(err));
		probe_end();
		return;
	}
	clock_gettime(CLOCK_REALTIME, &after);
	restore(&before, &mono);
	probe_begin(PROBE, call);
	probe_i64("sent", target);
	probe_i64("seconds", (long long)after.tv_sec);
	probe_end();
}

static int by_settimeofday(time_t seconds)
{
	struct timeval tv = { .tv_sec = seconds, .tv_usec = 0 };

	return settimeofday(&tv, NULL);
}

static int by_clock_settime(time_t seconds)
{
	struct timespec ts = { .tv_sec = seconds, .tv_nsec = 0 };

	return clock_settime(CLOCK_REALTIME, &ts);
}

static void settimeofday_run(void *ctx)
{
	(void)ctx;
	try_set("settimeofday", by_settimeofday);
}

static void clock_settime_run(void *ctx)
{
	(void)ctx;
	try_set("clock_settime", by_clock_settime);
}

static int parse(const struct probe *p, int argc, char **argv)
{
	(void)p;
	if (argc < 2 || !probe_parse_utc(argv[1], &target))
		probe_usage(PROBE, "usage: settod TIME (YYYY-MM-DDTHH:MM:SS[Z])");
	return 1;
}

static const struct probe_call calls[] = {
	{ "settimeofday",  settimeofday_run,  NULL, 0 },
	{ "clock_settime", clock_settime_run, NULL, 0 },
};

static const struct probe settod = {
	.name = PROBE,
	.usage = "usage: settod TIME [settimeofday|clock_settime ...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
	.parse = parse,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &settod);
}
