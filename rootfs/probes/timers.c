/* timers - timers armed before the 2038 rollover and due after it.
 *
 * usage: timers [target]      (target: see waits.h; default "+2")
 *        timers --list        the calls it prints
 *
 * All at once, each in its own process (waits.h):
 *   timer_settime    POSIX timer on CLOCK_REALTIME, TIMER_ABSTIME, due at the
 *                    target; then waits for its signal
 *   timer_gettime    that timer read back right after arming: "value" (s
 *                    left) and "interval"
 *   timerfd_settime  timerfd on CLOCK_REALTIME, TFD_TIMER_ABSTIME, due at the
 *                    target; then read()s it ("expirations")
 *   timerfd_gettime  that timerfd read back right after arming
 *   clock_nanosleep  CLOCK_REALTIME, TIMER_ABSTIME, until the target
 *   setitimer        ITIMER_REAL, relative: the delay from now to the target
 *   alarm            relative: the delay rounded up to whole seconds
 *
 * One JSON line per call, e.g.
 *   {"probe":"timers","flavour":"time64","call":"timer_settime","elapsed":2.95,"woke":2147483649,"tv_sec":2147483649}
 *   {"probe":"timers","flavour":"time32-syscall","call":"timer_settime","errno":"EINVAL","elapsed":0.0001,"woke":2147483646,"tv_sec":-2147483647}
 *   {"probe":"timers","flavour":"time64","call":"timer_gettime","value":2.949,"interval":0.000000}
 *
 * Like LTP, each primitive has variants and the flavour picks one:
 *   time32-syscall  the legacy i386/arm syscalls with 32-bit structs
 *                   (__NR_timer_settime, __NR_timerfd_settime,
 *                   __NR_clock_nanosleep, __NR_setitimer, __NR_alarm...), as
 *                   glibc < 2.34, klibc, uClibc and old musl call them;
 *   others          the libc API, with the flavour's time_t.
 * ARM EABI never had alarm(2) (arch/arm/tools/syscall.tbl: 27 is "oabi"
 * only): there the time32-syscall alarm line is probe_absent()'s,
 * "errno":"ENOSYS","absent":"no such syscall on this ABI", and nothing is called.
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "waits.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define PROBE "timers"

/* --- variants ------------------------------------------------------------ */

#ifdef PROBE_TIME32_SYSCALL

typedef int ptimer;       /* the kernel's timer id */

static double seconds32(const struct old_timespec32 *ts)
{
	return ts->tv_sec + ts->tv_nsec / 1e9;
}

static int timer_new_sys32(ptimer *id, int signo)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = signo;
	return syscall(__NR_timer_create, CLOCK_REALTIME, &sev, id) ? errno : 0;
}

static int timer_arm_sys32(ptimer id, const struct waits_target *t, long long *tv_sec)
{
	struct old_itimerspec32 its = { { 0, 0 }, { (int32_t)t->seconds, 0 } };

	*tv_sec = its.it_value.tv_sec;
	return syscall(__NR_timer_settime, id, TIMER_ABSTIME, &its, NULL) ? errno : 0;
}

static int timer_read_sys32(ptimer id, double *value, double *interval)
{
	struct old_itimerspec32 its;

	if (syscall(__NR_timer_gettime, id, &its))
		return errno;
	*value = seconds32(&its.it_value);
	*interval = seconds32(&its.it_interval);
	return 0;
}

static int timerfd_arm_sys32(int fd, const struct waits_target *t, long long *tv_sec)
{
	struct old_itimerspec32 its = { { 0, 0 }, { (int32_t)t->seconds, 0 } };

	*tv_sec = its.it_value.tv_sec;
	return syscall(__NR_timerfd_settime, fd, TFD_TIMER_ABSTIME, &its, NULL) ? errno : 0;
}

static int timerfd_read_sys32(int fd, double *value, double *interval)
{
	struct old_itimerspec32 its;

	if (syscall(__NR_timerfd_gettime, fd, &its))
		return errno;
	*value = seconds32(&its.it_value);
	*interval = seconds32(&its.it_interval);
	return 0;
}

static int sleep_until_sys32(const struct waits_target *t, long long *tv_sec)
{
	struct old_timespec32 ts = { (int32_t)t->seconds, 0 };
	long ret;

	*tv_sec = ts.tv_sec;
	do
		ret = syscall(__NR_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
	while (ret != 0 && errno == EINTR);
	return ret ? errno : 0;
}

static int itimer_in_sys32(double delay)
{
	struct old_itimerval32 itv = { { 0, 0 }, { (int32_t)delay, 0 } };

	itv.it_value.tv_usec = (int32_t)((delay - itv.it_value.tv_sec) * 1e6);
	return syscall(__NR_setitimer, ITIMER_REAL, &itv, NULL) ? errno : 0;
}

#ifdef __NR_alarm
static int alarm_in_sys32(unsigned seconds)
{
	syscall(__NR_alarm, seconds);
	return 0;
}
#else
#define ALARM_ABSENT PROBE_NO_SYSCALL   /* ARM EABI never had alarm(2) */
#endif
#define VARIANT(name) name##_sys32

#else /* libc API */

typedef timer_t ptimer;

static double seconds_libc(const struct timespec *ts)
{
	return (double)ts->tv_sec + ts->tv_nsec / 1e9;
}

static int timer_new_libc(ptimer *id, int signo)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = signo;
	return timer_create(CLOCK_REALTIME, &sev, id) ? errno : 0;
}

static int timer_arm_libc(ptimer id, const struct waits_target *t, long long *tv_sec)
{
	struct itimerspec its = { { 0, 0 }, waits_absolute(t) };

	*tv_sec = (long long)its.it_value.tv_sec;
	return timer_settime(id, TIMER_ABSTIME, &its, NULL) ? errno : 0;
}

static int timer_read_libc(ptimer id, double *value, double *interval)
{
	struct itimerspec its;

	if (timer_gettime(id, &its))
		return errno;
	*value = seconds_libc(&its.it_value);
	*interval = seconds_libc(&its.it_interval);
	return 0;
}

static int timerfd_arm_libc(int fd, const struct waits_target *t, long long *tv_sec)
{
	struct itimerspec its = { { 0, 0 }, waits_absolute(t) };

	*tv_sec = (long long)its.it_value.tv_sec;
	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) ? errno : 0;
}

static int timerfd_read_libc(int fd, double *value, double *interval)
{
	struct itimerspec its;

	if (timerfd_gettime(fd, &its))
		return errno;
	*value = seconds_libc(&its.it_value);
	*interval = seconds_libc(&its.it_interval);
	return 0;
}

static int sleep_until_libc(const struct waits_target *t, long long *tv_sec)
{
	struct timespec ts = waits_absolute(t);
	int ret;

	*tv_sec = (long long)ts.tv_sec;
	do     /* clock_nanosleep returns the error number itself */
		ret = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
	while (ret == EINTR);
	return ret;
}

static int itimer_in_libc(double delay)
{
	struct itimerval itv = { { 0, 0 }, { (time_t)delay, 0 } };

	itv.it_value.tv_usec = (suseconds_t)((delay - (double)itv.it_value.tv_sec) * 1e6);
	return setitimer(ITIMER_REAL, &itv, NULL) ? errno : 0;
}

static int alarm_in_libc(unsigned seconds)
{
	alarm(seconds);
	return 0;
}
#define VARIANT(name) name##_libc
#endif

/* --- the calls (each runs in its own child) ------------------------------ */

static void block(int signo, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, signo);
	sigprocmask(SIG_BLOCK, set, NULL);
}

static void await(const sigset_t *set)
{
	while (sigwaitinfo(set, NULL) < 0 && errno == EINTR)
		;
}

/* The read-back line: the time left and the interval, right after arming. */
static void readback(const char *call, int err, double value, double interval)
{
	if (err) {
		probe_errno(PROBE, call, err);
		return;
	}
	probe_begin(PROBE, call);
	probe_f64("value", value);
	probe_f64("interval", interval);
	probe_end();
}

static void run_timer(void *ctx)
{
	const struct waits_target *t = ctx;
	sigset_t set;
	ptimer id;
	long long tv_sec = 0;
	double start, value = 0, interval = 0;
	int err, read_err;

	block(SIGUSR1, &set);
	err = VARIANT(timer_new)(&id, SIGUSR1);
	if (err) {
		waits_setup_failed(PROBE, "timer_settime", "timer_create", err);
		return;
	}
	start = waits_monotonic();
	err = VARIANT(timer_arm)(id, t, &tv_sec);
	read_err = VARIANT(timer_read)(id, &value, &interval);
	if (!err)
		await(&set);
	waits_line(PROBE, "timer_settime", err, start);
	probe_i64("tv_sec", tv_sec);
	probe_end();
	readback("timer_gettime", read_err, value, interval);
}

static void run_timerfd(void *ctx)
{
	const struct waits_target *t = ctx;
	long long tv_sec = 0;
	double start, value = 0, interval = 0;
	uint64_t expirations = 0;
	int fd, err, read_err;

	fd = timerfd_create(CLOCK_REALTIME, 0);
	if (fd < 0) {
		waits_setup_failed(PROBE, "timerfd_settime", "timerfd_create", errno);
		return;
	}
	start = waits_monotonic();
	err = VARIANT(timerfd_arm)(fd, t, &tv_sec);
	read_err = VARIANT(timerfd_read)(fd, &value, &interval);
	if (!err && read(fd, &expirations, sizeof(expirations)) < 0)
		err = errno;
	waits_line(PROBE, "timerfd_settime", err, start);
	probe_i64("tv_sec", tv_sec);
	probe_i64("expirations", (long long)expirations);
	probe_end();
	readback("timerfd_gettime", read_err, value, interval);
}

static void run_nanosleep(void *ctx)
{
	const struct waits_target *t = ctx;
	long long tv_sec = 0;
	double start = waits_monotonic();
	int err = VARIANT(sleep_until)(t, &tv_sec);

	waits_line(PROBE, "clock_nanosleep", err, start);
	probe_i64("tv_sec", tv_sec);
	probe_end();
}

static void run_setitimer(void *ctx)
{
	const struct waits_target *t = ctx;
	sigset_t set;
	double start;
	int err;

	block(SIGALRM, &set);
	start = waits_monotonic();
	err = VARIANT(itimer_in)(t->delay);
	if (!err)
		await(&set);
	waits_line(PROBE, "setitimer", err, start);
	probe_f64("delay", t->delay);
	probe_end();
}

static void run_alarm(void *ctx)
{
#ifdef ALARM_ABSENT
	(void)ctx;
	probe_absent(PROBE, "alarm", ALARM_ABSENT);
#else
	const struct waits_target *t = ctx;
	sigset_t set;
	unsigned seconds = (unsigned)t->delay;
	double start;
	int err;

	if (seconds < t->delay)
		seconds++;          /* alarm() counts whole seconds: round up */
	block(SIGALRM, &set);
	start = waits_monotonic();
	err = VARIANT(alarm_in)(seconds);
	if (!err)
		await(&set);
	waits_line(PROBE, "alarm", err, start);
	probe_i64("delay", seconds);
	probe_end();
#endif
}

static const struct probe_call calls[] = {
	{ "timer_settime",   run_timer,     PROBE_PRINTS("timer_settime", "timer_gettime"), 0 },
	{ "timerfd_settime", run_timerfd,   PROBE_PRINTS("timerfd_settime", "timerfd_gettime"), 0 },
	{ "clock_nanosleep", run_nanosleep, NULL, 0 },
	{ "setitimer",       run_setitimer, NULL, 0 },
	{ "alarm",           run_alarm,     NULL, 0 },
};

int main(int argc, char **argv)
{
	return waits_main(argc, argv, PROBE, calls, PROBE_COUNT(calls));
}
