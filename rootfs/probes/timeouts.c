/* timeouts - relative timeouts that run across the 2038 rollover.
 *
 * usage: timeouts [target]    (target: see waits.h; default "+2")
 *
 * All at once, each in its own process (waits.h), with the relative timeout
 * "from now to the target", waiting for something that never comes:
 *   ppoll            a pipe's read end that nobody writes (returns 0)
 *   pselect6         the same, through pselect() (returns 0)
 *   rt_sigtimedwait  SIGUSR2, blocked and never sent (EAGAIN)
 *   semtimedop       decrement a SysV semaphore that stays 0 (EAGAIN)
 *
 * One JSON line per call: errno (when the call returns -1), elapsed (s,
 * CLOCK_MONOTONIC), woke (epoch s), delay (s) and, for ppoll and pselect6,
 * "ready" (the return value: 0 when the timeout passed).
 *
 * Variants: time32-syscall calls the legacy syscalls with a 32-bit timespec
 * (__NR_ppoll, __NR_pselect6, __NR_rt_sigtimedwait; semtimedop through the
 * ipc(2) multiplexer where the ABI has no __NR_semtimedop, as on i386); the
 * other flavours call glibc's ppoll(), pselect(), sigtimedwait() and
 * semtimedop().
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "waits.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <poll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>

#define PROBE "timeouts"
#define KERNEL_SIGSET_BYTES 8    /* _NSIG / 8: the kernel's sigset_t */
#define IPC_SEMTIMEDOP 4         /* ipc(2) call number: SEMTIMEDOP in linux/ipc.h */

#ifdef PROBE_TIME32_SYSCALL
static struct old_timespec32 relative32(const struct waits_target *t)
{
	struct old_timespec32 ts = { (int32_t)t->delay, 0 };

	ts.tv_nsec = (int32_t)((t->delay - ts.tv_sec) * 1e9);
	return ts;
}

static long ppoll_sys32(struct pollfd *fd, const struct waits_target *t)
{
	struct old_timespec32 ts = relative32(t);

	return syscall(__NR_ppoll, fd, 1, &ts, NULL, KERNEL_SIGSET_BYTES);
}

static long pselect_sys32(int fd, fd_set *set, const struct waits_target *t)
{
	struct old_timespec32 ts = relative32(t);

	return syscall(__NR_pselect6, fd + 1, set, NULL, NULL, &ts, NULL);
}

static long sigtimedwait_sys32(const sigset_t *set, const struct waits_target *t)
{
	struct old_timespec32 ts = relative32(t);

	return syscall(__NR_rt_sigtimedwait, set, NULL, &ts, KERNEL_SIGSET_BYTES);
}

static long semtimedop_sys32(int id, struct sembuf *op, const struct waits_target *t)
{
	struct old_timespec32 ts = relative32(t);

#ifdef __NR_semtimedop
	return syscall(__NR_semtimedop, id, op, 1, &ts);
#else
	return syscall(__NR_ipc, IPC_SEMTIMEDOP, id, 1, 0, op, &ts);
#endif
}
#define VARIANT(name) name##_sys32

#else /* libc API */

static long ppoll_libc(struct pollfd *fd, const struct waits_target *t)
{
	struct timespec ts = waits_relative(t);

	return ppoll(fd, 1, &ts, NULL);
}

static long pselect_libc(int fd, fd_set *set, const struct waits_target *t)
{
	struct timespec ts = waits_relative(t);

	return pselect(fd + 1, set, NULL, NULL, &ts, NULL);
}

static long sigtimedwait_libc(const sigset_t *set, const struct waits_target *t)
{
	struct timespec ts = waits_relative(t);

	return sigtimedwait(set, NULL, &ts);
}

static long semtimedop_libc(int id, struct sembuf *op, const struct waits_target *t)
{
	struct timespec ts = waits_relative(t);

	return semtimedop(id, op, 1, &ts);
}
#define VARIANT(name) name##_libc
#endif

/* The line of a call that returned `ret` (-1: failed with `err`). */
static void report(const char *probe, const char *call, long ret, int err, double start,
                   const struct waits_target *t, int show_ready)
{
	waits_line(probe, call, ret < 0 ? err : 0, start);
	probe_f64("delay", t->delay);
	if (show_ready && ret >= 0)
		probe_i64("ready", ret);
	probe_end();
}

static int silent_pipe(const char *probe, const char *call)
{
	int p[2];

	if (pipe(p) != 0) {
		waits_setup_failed(probe, call, "pipe", errno);
		return -1;
	}
	return p[0];      /* the write end stays open and silent */
}

static void run_ppoll(void *ctx)
{
	const struct waits_target *t = ctx;
	struct pollfd fd = { .fd = silent_pipe(PROBE, "ppoll"), .events = POLLIN };
	double start;
	long ret;

	if (fd.fd < 0)
		return;
	start = waits_monotonic();
	ret = VARIANT(ppoll)(&fd, t);
	report(PROBE, "ppoll", ret, errno, start, t, 1);
}

static void run_pselect(void *ctx)
{
	const struct waits_target *t = ctx;
	int fd = silent_pipe(PROBE, "pselect6");
	fd_set set;
	double start;
	long ret;

	if (fd < 0)
		return;
	FD_ZERO(&set);
	FD_SET(fd, &set);
	start = waits_monotonic();
	ret = VARIANT(pselect)(fd, &set, t);
	report(PROBE, "pselect6", ret, errno, start, t, 1);
}

static void run_sigtimedwait(void *ctx)
{
	const struct waits_target *t = ctx;
	sigset_t set;
	double start;
	long ret;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	start = waits_monotonic();
	ret = VARIANT(sigtimedwait)(&set, t);
	report(PROBE, "rt_sigtimedwait", ret, errno, start, t, 0);
}

static void run_semtimedop(void *ctx)
{
	const struct waits_target *t = ctx;
	struct sembuf op = { .sem_num = 0, .sem_op = -1, .sem_flg = 0 };
	int id = semget(IPC_PRIVATE, 1, 0600);
	double start;
	long ret;
	int err;

	if (id < 0) {
		waits_setup_failed(PROBE, "semtimedop", "semget", errno);
		return;
	}
	start = waits_monotonic();
	ret = VARIANT(semtimedop)(id, &op, t);
	err = errno;
	semctl(id, 0, IPC_RMID);
	report(PROBE, "semtimedop", ret, err, start, t, 0);
}

static const struct probe_call calls[] = {
	{ "ppoll",           run_ppoll,        NULL, 0 },
	{ "pselect6",        run_pselect,      NULL, 0 },
	{ "rt_sigtimedwait", run_sigtimedwait, NULL, 0 },
	{ "semtimedop",      run_semtimedop,   NULL, 0 },
};

int main(int argc, char **argv)
{
	return waits_main(argc, argv, PROBE, calls, PROBE_COUNT(calls));
}
