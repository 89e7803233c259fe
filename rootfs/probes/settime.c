/* settime - set CLOCK_REALTIME from a 64-bit time_t program.
 *
 * usage: settime <unix-seconds> [settimeofday|clock_settime]
 *        (default settimeofday; nanoseconds/microseconds are set to 0)
 *        settime --list      the calls it prints (sets nothing)
 *
 * Prints one JSON line:
 *   {"probe":"settime","flavour":"native64","call":"settimeofday","seconds":2147483640}
 *   {"probe":"settime","flavour":"native64","call":"settimeofday","seconds":9999999999999,"errno":"EINVAL"}
 * Exit status: 0 when the clock was set, 1 when the call failed, 2 on usage
 * errors (one line on stderr, nothing on stdout).
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

_Static_assert(sizeof(time_t) == 8, "settime needs a 64-bit time_t (native64 or time64 build)");

#define USAGE "usage: settime <unix-seconds> [settimeofday|clock_settime]"

struct request {
	long long seconds;
	int failed;
};

static struct request request;

/* One line: the seconds asked for, and the errno when the call failed. */
static void report(struct request *r, const char *call, int ret)
{
	int err = ret != 0 ? errno : 0;   /* before stdio can touch errno */

	probe_begin("settime", call);
	probe_i64("seconds", r->seconds);
	if (err)
		probe_str("errno", probe_errname(err));
	probe_end();
	r->failed = err != 0;
}

static void settimeofday_run(void *ctx)
{
	struct request *r = ctx;
	struct timeval tv = { .tv_sec = (time_t)r->seconds, .tv_usec = 0 };

	report(r, "settimeofday", settimeofday(&tv, NULL));
}

static void clock_settime_run(void *ctx)
{
	struct request *r = ctx;
	struct timespec ts = { .tv_sec = (time_t)r->seconds, .tv_nsec = 0 };

	report(r, "clock_settime", clock_settime(CLOCK_REALTIME, &ts));
}

static int parse(const struct probe *p, int argc, char **argv)
{
	struct request *r = p->ctx;
	char *end;

	if (argc < 2 || argc > 3)
		probe_usage("settime", USAGE);
	errno = 0;
	r->seconds = strtoll(argv[1], &end, 10);
	if (argv[1][0] == '\0' || *end != '\0')
		probe_usage("settime", "seconds must be a decimal integer; " USAGE);
	if (errno == ERANGE)
		probe_usage("settime", "seconds out of range for a 64-bit time_t");
	return 1;
}

static int failed(const struct probe *p)
{
	const struct request *r = p->ctx;

	return r->failed ? 1 : 0;
}

static const struct probe_call calls[] = {
	{ "settimeofday",  settimeofday_run,  NULL, 0 },
	{ "clock_settime", clock_settime_run, NULL, PROBE_NAMED_ONLY },
};

static const struct probe settime = {
	.name = "settime",
	.usage = USAGE,
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
	.ctx = &request,
	.parse = parse,
	.finish = failed,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &settime);
}
