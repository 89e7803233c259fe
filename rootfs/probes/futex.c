/* futex - futex waits across the 2038 rollover.
 *
 * usage: futex [target]       (target: see waits.h; default "+2")
 *
 * All at once, each in its own process (waits.h), on a futex word that
 * nobody wakes:
 *   futex_wait         FUTEX_WAIT, relative timeout: the delay from now to
 *                      the target (the kernel counts it on CLOCK_MONOTONIC)
 *   futex_wait_bitset  FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, absolute
 *                      timeout: the target
 *   sem_timedwait      glibc's POSIX semaphore wait until the target (a
 *                      futex FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME wait
 *                      inside glibc)
 *
 * One JSON line per call: errno (ETIMEDOUT when the timeout passed), elapsed
 * (s, CLOCK_MONOTONIC), woke (epoch s), and delay (relative) or tv_sec
 * (absolute, as the flavour's time_t holds it).
 *
 * Variants:
 *   time32-syscall  the legacy __NR_futex (sys_futex_time32) with a 32-bit
 *                   timespec;
 *   others          glibc has no futex() function: a program calls
 *                   syscall(SYS_futex...) with its own struct timespec, and
 *                   with a 64-bit time_t on a 32-bit ABI it must call
 *                   SYS_futex_time64 (422) instead. So time32-libc makes the
 *                   same legacy call as time32-syscall, time64 the time64
 *                   call, native64 the native one.
 * sem_timedwait is a libc function in every flavour (no syscall has that
 * name): in time32-syscall it is glibc's 32-bit time_t sem_timedwait, as in
 * time32-libc.
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "waits.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>
#include <semaphore.h>

#define PROBE "futex"

#ifdef PROBE_TIME32_SYSCALL
typedef struct old_timespec32 ftimespec;
#define FUTEX_NR __NR_futex
#elif defined(__NR_futex_time64) && __SIZEOF_LONG__ == 4 && PROBE_TIME_BITS == 64
typedef struct timespec ftimespec;
#define FUTEX_NR __NR_futex_time64
#else
typedef struct timespec ftimespec;
#define FUTEX_NR __NR_futex
#endif

_Static_assert(sizeof(((ftimespec *)0)->tv_sec) * 8 == (FUTEX_NR == __NR_futex && __SIZEOF_LONG__ == 4 ? 32 : 64),
               "the futex syscall does not match the timespec it is given");

static uint32_t word;          /* stays 0: nobody wakes it */

static long futex_call(int op, const ftimespec *ts, uint32_t val3)
{
	return syscall(FUTEX_NR, &word, op | FUTEX_PRIVATE_FLAG, 0, ts, NULL, val3);
}

static void run_wait(void *ctx)
{
	const struct waits_target *t = ctx;
	ftimespec ts;
	double start;
	int err = 0;

	ts.tv_sec = (time_t)t->delay;
	ts.tv_nsec = (long)((t->delay - (double)(time_t)t->delay) * 1e9);
	start = waits_monotonic();
	while (futex_call(FUTEX_WAIT, &ts, 0) != 0) {
		err = errno;
		if (err != EINTR)
			break;
	}
	waits_line(PROBE, "futex_wait", err, start);
	probe_f64("delay", t->delay);
	probe_end();
}

static void run_wait_bitset(void *ctx)
{
	const struct waits_target *t = ctx;
	ftimespec ts;
	double start;
	int err = 0;

	/* A 32-bit tv_sec cannot hold a target past 2038: it wraps (to 1901). */
	ts.tv_sec = (time_t)t->seconds;
	ts.tv_nsec = 0;
	start = waits_monotonic();
	while (futex_call(FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, &ts, FUTEX_BITSET_MATCH_ANY) != 0) {
		err = errno;
		if (err != EINTR)
			break;
	}
	waits_line(PROBE, "futex_wait_bitset", err, start);
	probe_i64("tv_sec", (long long)ts.tv_sec);
	probe_end();
}

static void run_sem_timedwait(void *ctx)
{
	const struct waits_target *t = ctx;
	struct timespec ts = waits_absolute(t);
	sem_t sem;
	double start;
	int err = 0;

	if (sem_init(&sem, 0, 0) != 0) {
		waits_setup_failed(PROBE, "sem_timedwait", "sem_init", errno);
		return;
	}
	start = waits_monotonic();
	while (sem_timedwait(&sem, &ts) != 0) {
		err = errno;
		if (err != EINTR)
			break;
	}
	waits_line(PROBE, "sem_timedwait", err, start);
	probe_i64("tv_sec", (long long)ts.tv_sec);
	probe_end();
	sem_destroy(&sem);
}

static const struct probe_call calls[] = {
	{ "futex_wait",        run_wait,          NULL, 0 },
	{ "futex_wait_bitset", run_wait_bitset,   NULL, 0 },
	{ "sem_timedwait",     run_sem_timedwait, NULL, 0 },
};

int main(int argc, char **argv)
{
	return waits_main(argc, argv, PROBE, calls, PROBE_COUNT(calls));
}
