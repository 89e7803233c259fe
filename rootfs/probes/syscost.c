/* syscost - what a system call costs this process, on average over many:
 * the figure that shows what a seccomp filter adds to every call of the
 * processes it is installed in (run bare, then under seccomp32: the
 * scenario scenarios/kernel/time32-seccomp.toml).
 *
 * usage: syscost [call...]
 *
 * Each call is made ROUNDS times in a row by its raw number, timed on
 * CLOCK_MONOTONIC around the whole loop:
 *   getpid           the cheapest call there is: a filter's whole cost
 *                    when it lets the call through;
 *   clock_gettime64  the 64-bit time syscall, never a 32-bit one (403 on
 *                    i386 and ARM, the native clock_gettime on x86_64);
 *   clock_gettime32  the old 32-bit one (i386's and ARM's clock_gettime;
 *                    absent in native64): what the time32 policy's hook
 *                    and a filter's match cost.
 * Only when named (just bench --futex), the old futex number (futex_time32
 * on i386 and ARM, whatever this program's time_t):
 *   futex_wake       FUTEX_WAKE_PRIVATE of a word nobody waits on: no time
 *                    passed, the hot path of every unlock;
 *   futex_timed      FUTEX_WAIT_PRIVATE with a 1 s timeout on a word whose
 *                    value differs, so it returns EAGAIN at once.
 *   {"probe":"syscost","flavour":"time64","call":"getpid","calls":100000,"ns":1234}
 * "ns" is the mean time of one call in nanoseconds. A call failing
 * otherwise than expected stops its loop: "errno". Timings under emulation (QEMU TCG) are those of the
 * emulated machine: compare them with each other, run for run, never
 * with a real machine's; no scenario expects a figure.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROBE "syscost"
#define ROUNDS 100000

#if __SIZEOF_LONG__ == 4
#define NR_CLOCK_GETTIME64 __NR_clock_gettime64
#define NR_CLOCK_GETTIME32 __NR_clock_gettime
#else
#define NR_CLOCK_GETTIME64 __NR_clock_gettime
#endif

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The timespec the old futex number reads: 32-bit on i386 and ARM
 * (futex_time32), the native one on a 64-bit ABI. */
#if __SIZEOF_LONG__ == 4
typedef struct {
	int32_t tv_sec;
	int32_t tv_nsec;
} old_timespec;
#else
typedef struct timespec old_timespec;
#endif

/* ROUNDS calls of nr with these arguments (an error other than `expected`
 * stops the loop), then the line. */
static void measure6(const char *call, long nr, const long args[6], int expected)
{
	long long start, took;
	long i;

	start = now_ns();
	for (i = 0; i < ROUNDS; i++)
		if (syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]) == -1 &&
		    errno != expected) {
			probe_errno(PROBE, call, errno);
			return;
		}
	took = now_ns() - start;
	probe_begin(PROBE, call);
	probe_i64("calls", ROUNDS);
	probe_i64("ns", took / ROUNDS);
	probe_end();
}

static void measure(const char *call, long nr, long a, void *b)
{
	const long args[6] = { a, (long)b };

	measure6(call, nr, args, 0);
}

static void getpid_run(void *ctx)
{
	(void)ctx;
	measure("getpid", __NR_getpid, 0, NULL);
}

static void clock_gettime64_run(void *ctx)
{
	long long words[2];     /* struct __kernel_timespec */

	(void)ctx;
	measure("clock_gettime64", NR_CLOCK_GETTIME64, CLOCK_MONOTONIC, words);
}

static void clock_gettime32_run(void *ctx)
{
	(void)ctx;
#ifdef NR_CLOCK_GETTIME32
	int32_t words[2];       /* struct old_timespec32 */

	measure("clock_gettime32", NR_CLOCK_GETTIME32, CLOCK_MONOTONIC, words);
#else
	probe_absent(PROBE, "clock_gettime32", PROBE_NO_SYSCALL);
#endif
}

static uint32_t futex_word;

static void futex_wake_run(void *ctx)
{
	const long args[6] = { (long)&futex_word, FUTEX_WAKE_PRIVATE, 1 };

	(void)ctx;
	measure6("futex_wake", __NR_futex, args, 0);
}

static void futex_timed_run(void *ctx)
{
	static const old_timespec second = { 1, 0 };
	const long args[6] = { (long)&futex_word, FUTEX_WAIT_PRIVATE, 1 /* != futex_word */, (long)&second };

	(void)ctx;
	measure6("futex_timed", __NR_futex, args, EAGAIN);
}

static const struct probe_call calls[] = {
	{ "getpid",          getpid_run,          NULL, 0 },
	{ "clock_gettime64", clock_gettime64_run, NULL, 0 },
	{ "clock_gettime32", clock_gettime32_run, NULL, 0 },
	{ "futex_wake",      futex_wake_run,      NULL, PROBE_NAMED_ONLY },
	{ "futex_timed",     futex_timed_run,     NULL, PROBE_NAMED_ONLY },
};

static const struct probe syscost = {
	.name = PROBE,
	.usage = "usage: syscost [call...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &syscost);
}
