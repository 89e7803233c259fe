/* clockstep - what a clock-moving scenario step did, as one JSON line.
 *
 * usage: clockstep wait <seconds>     sleep that long on CLOCK_MONOTONIC
 *        clockstep hwclock <target>   read the RTC and the system clock after
 *                                     `hwclock --set` + `hwclock --hctosys`
 *        clockstep --list             the calls it prints
 *
 * The runner's plan runs it for the `wait` and `hwclock` steps
 * (sandbox/run/plan.py). Built once, as a tool, in the machine's 64-bit time_t
 * flavour, so the times it prints are right on either side of 2038:
 *   {"probe":"clockstep","flavour":"native64","call":"wait","requested":5,
 *    "elapsed":5.000123,"realtime_before":2147483640,"realtime_after":2147483645}
 *   {"probe":"clockstep","flavour":"native64","call":"hwclock","target":2147483700,
 *    "rtc":2147483701,"realtime":2147483701}
 * requested/elapsed are seconds (elapsed on CLOCK_MONOTONIC, microsecond
 * digits); target, rtc, realtime* are seconds since the epoch. An RTC that
 * cannot be read gives "rtc_errno" instead of "rtc".
 * Exit status: 0 done, 1 a call failed (line printed), 2 usage error.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(time_t) == 8, "clockstep needs a 64-bit time_t (native64 or time64 build)");

#define USAGE "usage: clockstep wait <seconds> | clockstep hwclock <target-seconds>"
#define WAIT_MAX (30 * 86400)  /* a month: sandbox/scenario/steps.py WAIT_MAX */
#define RTC_DEVICE "/dev/rtc0"

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long realtime(void)
{
	return (long long)time(NULL);
}

static int wait_for(const char *arg)
{
	char *end;
	double seconds, start;
	long long before;
	struct timespec ts;
	int ret;

	errno = 0;
	seconds = strtod(arg, &end);
	if (*arg == '\0' || *end != '\0' || errno != 0 || !(seconds > 0) || seconds > WAIT_MAX)
		probe_usage("clockstep", "wait: seconds must be a number in (0, 2592000]; " USAGE);
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);

	before = realtime();
	start = monotonic();
	do
		ret = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts);
	while (ret == EINTR);
	probe_begin("clockstep", "wait");
	probe_number("requested", seconds);
	probe_f64("elapsed", monotonic() - start);
	probe_i64("realtime_before", before);
	probe_i64("realtime_after", realtime());
	if (ret)
		probe_str("errno", probe_errname(ret));
	probe_end();
	return ret ? 1 : 0;
}

/* The RTC as seconds since the epoch (the kernel keeps it in UTC here). */
static int read_rtc(long long *seconds)
{
	struct rtc_time rt;
	struct tm tm;
	int fd, err = 0;

	fd = open(RTC_DEVICE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (ioctl(fd, RTC_RD_TIME, &rt) != 0)
		err = errno;
	close(fd);
	if (err)
		return err;
	memset(&tm, 0, sizeof(tm));
	tm.tm_sec = rt.tm_sec;
	tm.tm_min = rt.tm_min;
	tm.tm_hour = rt.tm_hour;
	tm.tm_mday = rt.tm_mday;
	tm.tm_mon = rt.tm_mon;
	tm.tm_year = rt.tm_year;
	*seconds = (long long)timegm(&tm);
	return 0;
}

static int after_hwclock(const char *arg)
{
	char *end;
	long long target, rtc = 0;
	int err;

	errno = 0;
	target = strtoll(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || errno != 0)
		probe_usage("clockstep", "hwclock: target must be decimal seconds; " USAGE);
	err = read_rtc(&rtc);
	probe_begin("clockstep", "hwclock");
	probe_i64("target", target);
	if (err)
		probe_str("rtc_errno", probe_errname(err));
	else
		probe_i64("rtc", rtc);
	probe_i64("realtime", realtime());
	probe_end();
	return err ? 1 : 0;
}

/* A call's one argument, and the exit status it gives. */
struct step {
	const char *argument;
	int status;
};

static struct step step;

static void wait_run(void *ctx)
{
	struct step *s = ctx;

	s->status = wait_for(s->argument);
}

static void hwclock_run(void *ctx)
{
	struct step *s = ctx;

	s->status = after_hwclock(s->argument);
}

static const struct probe_call calls[] = {
	{ "wait",    wait_run,    NULL, 0 },
	{ "hwclock", hwclock_run, NULL, 0 },
};

/* `clockstep <call> <argument>`: the argument follows the call's name. */
static int command(const struct probe *p, int argc, char **argv)
{
	struct step *s = p->ctx;
	const struct probe_call *call;

	if (argc != 3 || !(call = probe_find_call(p, argv[1])))
		probe_usage("clockstep", USAGE);
	s->argument = argv[2];
	call->run(s);
	return s->status;
}

static const struct probe clockstep = {
	.name = "clockstep",
	.usage = USAGE,
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.ctx = &step,
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &clockstep);
}
