/* futexbench - the cost of a futex_time32 round trip: what kernel-series
 * 0028 keeps off the accounting path (just bench --futex).
 *
 * usage: futexbench <iterations>
 *
 * Makes the raw futex system call by its old number (on i386 and armhf
 * futex_time32 to the kernel, whatever this program's time_t; on x86_64
 * the 64-bit futex, which no time32 policy sees) <iterations> times each:
 *   wake   FUTEX_WAKE_PRIVATE of a word nobody waits on: no time passed,
 *          the hot path of every unlock;
 *   timed  FUTEX_WAIT_PRIVATE with a 1 s timeout on a word whose value
 *          differs, so it returns EAGAIN at once: a call that passes a time.
 * One JSON line:
 *   {"probe":"futexbench","flavour":"time64","call":"round_trips",
 *    "iterations":200000,"wake_ns":812,"timed_ns":1040}
 * wake_ns, timed_ns: the mean wall time of one call, CLOCK_MONOTONIC.
 * Exit status 0; 1 when a call failed otherwise than expected; 125 on
 * usage errors.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define USAGE "usage: futexbench <iterations>"

/* The timespec the old futex number reads: 32-bit on i386 and armhf
 * (futex_time32), the native one on a 64-bit ABI. */
#if defined(__LP64__)
typedef struct timespec old_timespec;
#else
typedef struct {
	int32_t tv_sec;
	int32_t tv_nsec;
} old_timespec;
#endif

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Mean nanoseconds per call of @op, or -1 when a call failed unexpectedly. */
static int64_t round_trips(long n, int op, const void *timeout, int expected_errno)
{
	static uint32_t word;
	int64_t start = now_ns();
	long i;

	for (i = 0; i < n; i++) {
		long ret = syscall(SYS_futex, &word, op, word + (timeout ? 1 : 0), timeout, NULL, 0);

		if (ret < 0 && errno != expected_errno)
			return -1;
	}
	return (now_ns() - start) / n;
}

static int command(const struct probe *p, int argc, char **argv)
{
	const old_timespec second = { 1, 0 };
	int64_t wake, timed;
	char *end = NULL;
	long n;

	(void)p;
	if (argc != 2 || (n = strtol(argv[1], &end, 10)) < 1 || n > 100000000 || *end) {
		fprintf(stderr, "futexbench: <iterations> must be a number from 1 to 100000000\n" USAGE "\n");
		return 125;
	}
	wake = round_trips(n, FUTEX_WAKE_PRIVATE, NULL, 0);
	timed = round_trips(n, FUTEX_WAIT_PRIVATE, &second, EAGAIN);
	if (wake < 0 || timed < 0) {
		fprintf(stderr, "futexbench: a futex call failed: %s\n", strerror(errno));
		return 1;
	}
	probe_begin("futexbench", "round_trips");
	probe_i64("iterations", n);
	probe_i64("wake_ns", wake);
	probe_i64("timed_ns", timed);
	probe_end();
	return 0;
}

/* Its one line, named for --list; command() prints it. */
static void round_trips_listed(void *ctx)
{
	(void)ctx;
}

static const struct probe_call calls[] = {
	{ "round_trips", round_trips_listed, NULL, 0 },
};

static const struct probe futexbench = {
	.name = "futexbench",
	.usage = USAGE,
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &futexbench);
}
