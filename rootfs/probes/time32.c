/* time32 - the 32-bit time syscalls one by one, then what the kernel's
 * time32 policy (kernel.time32_syscalls, kernel-series/) made of them.
 *
 * Long on purpose: one small function per time32 syscall (27 of them, each
 * with its legacy and its libc form), so that every number the policy hooks
 * is exercised; splitting them over files would only scatter the table.
 *
 * usage: time32 [call...]   the calls named, in order (default: all but flood)
 *        time32 --list    the calls it prints (and nothing else: safe anywhere)
 *
 * One JSON line per call, in table order, then two lines about this task:
 *   {"probe":"time32","flavour":"time32-syscall","call":"clock_gettime","seconds":2147483600}
 *   {"probe":"time32","flavour":"time32-syscall","call":"futex","errno":"ENOSYS",
 *    "trapped":"SIGSYS","reported_as":"futex_time32"}
 *   {"probe":"time32","flavour":"time32-syscall","call":"time","errno":"ENOSYS","absent":"no such syscall on this ABI"}
 *   {"probe":"time32","flavour":"time32-syscall","call":"status","time32_syscalls":27,
 *    "time32_truncations":6}
 *   {"probe":"time32","flavour":"time32-syscall","call":"kmsg","reported":26,"denied":0,
 *    "first":"clock_gettime32","exe":"/probes/time32-syscall/time32","truncated":4,
 *    "truncated_in":"put_old_timespec32"}
 *   {"probe":"time32","flavour":"time32-syscall","call":"trace","calls":27,
 *    "first":"clock_gettime32","truncations":6,"value":2147483670}
 *
 * Like clock.c, each call has two variants and the flavour picks one:
 *   time32-syscall  the legacy syscall number with the old 32-bit structs,
 *                   as glibc < 2.34, klibc or old musl make it: the kernel
 *                   serves it from its *_time32 entry point, the ones
 *                   CONFIG_COMPAT_32BIT_TIME provides (kernel/sys_ni.c);
 *   others          the C library call, with whatever time_t the flavour has.
 * A call the ABI never had (time, stime and utime on ARM EABI) or the C
 * library does not offer (stime) is not made: its line is probe_absent()'s.
 * Every call is harmless: clocks are read, never set (clock_settime on
 * CLOCK_MONOTONIC and stime(NULL) are refused by the kernel), file times
 * are set on a file of our own, waits last a microsecond or not at all,
 * and the IPC and socket calls get an invalid id, so that an allowed call
 * fails with the syscall's own error (EBADF, EINVAL) and a denied one with
 * ENOSYS. clock_gettime is made twice, so that the count (status) exceeds
 * the number of reports (kmsg) when each syscall is reported once.
 *
 * vdso_clock_gettime: the vDSO's own 32-bit clock_gettime, found through
 *         AT_SYSINFO_EHDR (time32-syscall only; "absent" without a vDSO,
 *         as with x86's vdso32=0): no syscall, so the policy never sees it.
 * reported_as: the syscalls the policy's call reports name (log, deny and
 *         trap report the first call of each by a process), logged while
 *         the call ran, joined with '+': a hook that passed another
 *         syscall's name shows here (time32-deny.toml). Absent under allow.
 * trapped: "SIGSYS" when the kernel sent one at the call (the trap policy)
 *         with the policy's own si_code, SYS_TIME32 (3); "SIGSYS code <n>"
 *         with any other (seccomp's SYS_SECCOMP, 1, was series v2's). The
 *         probe's handler returns, and the call fails with ENOSYS.
 * status: "Time32_syscalls:" and "Time32_truncations:" from
 *         /proc/self/status (per process since series v2), or "absent" on
 *         a kernel without them.
 * kmsg:   the lines "time32: <comm>[<pid>] tgid <pid> exe <path> called
 *         <syscall> (...)" about this process in /dev/kmsg: all of them,
 *         those ending "(denied)" or "(trapped)" (trap denies too), the
 *         syscall named first ("first") and the executable it names
 *         ("exe"), when there is one; and the truncation reports
 *         "... exe <path> truncated ..." (or "passed ..."): how many, and
 *         the site of the first.
 * trace:  the trace events time32:time32_call and time32:time32_truncation
 *         of this process (tracefs, enabled with the record-tgid option
 *         and emptied before the first call): how many of each, the first
 *         call's name and the first truncated value in 64 bits; "absent"
 *         on a kernel without them. Every call and truncation is an event,
 *         whatever the policy. The events name no process: the line's
 *         header does, "<comm>-<pid> (<tgid>)" (trace_count()).
 * init:   (only when named) the flavour's clock_gettime made by the init
 *         of a new PID namespace (pid 1 there, unkillable as the system's
 *         init is), with SIGSYS at its default action: "errno" what the
 *         call returned, or "signal" the signal that killed it (under trap,
 *         a SIGSYS would: series v2 killed it). Needs CAP_SYS_ADMIN.
 * utimensat_1969, nanosleep_negative, clock_nanosleep_abstime: (only when
 *         named) negative 32-bit times a program passes the kernel, each
 *         read by get_old_timespec32() in time32-syscall (and by glibc's
 *         32-bit syscall wherever the time fits): utimensat() setting
 *         1969-12-31T00:00:00Z (sent: -86400 as a number, a time before
 *         1970 that no 32-bit wrap made), nanosleep() for -1 s (an invalid
 *         timeout, EINVAL), and
 *         clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME) until now + 2 s as
 *         the flavour's time_t holds it (tv_sec: wrapped to 1901 by a
 *         32-bit time_t after the rollover, EINVAL then). passed: the
 *         policy's "passed <v> in get_old_timespec32" reports about this
 *         process logged during the call: only a wrapped time counts as a
 *         truncation since series v3.1 (kernel-series 0003,
 *         time32_wrapped()); scenarios/kernel/time32-negative.toml.
 * flood:  (only when named) a process of user nobody forks 300 children
 *         one after the other, each making the flavour's clock_gettime
 *         (twice, as the clock_gettime call does) and exiting, as a fork
 *         loop would: "children" forked, "reported" the call reports
 *         naming them in /dev/kmsg (the budget of their user bounds it),
 *         "traced" their time32_call events (not ratelimited). The loop's
 *         process stays until other_user, or the probe's end.
 * other_user: (only when named, after flood) one more process of nobody,
 *         whose budget the flood spent, then one of uid 1000, each making
 *         clock_gettime: "reported" the call reports naming the latter,
 *         "flood_user_reported" those naming the former. With a budget
 *         per user (series v3.1) 1 and 0; with one for the whole system,
 *         as before, 0 and 0 until 5 s after the flood began.
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "kmsg.h"
#include "probe.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#define PROBE "time32"

struct result {
	int err;                /* errno of a failed call, else 0 */
	const char *absent;     /* why the call was not made, else NULL */
	const char *field;      /* PROBE_KEY() of a value worth reporting, else NULL */
	long long value;
	int signal;             /* the signal that killed a child, else 0 */
	const char *arg_field;  /* PROBE_KEY() of what the call passed, printed
	                         * whatever it returned, else NULL */
	long long arg;
};

static char scratch[64] = "/tmp/time32-probe-XXXXXX";

static void ok(struct result *r, const char *field, long long value)
{
	r->field = field;
	r->value = value;
}

/* What a call passed, printed with its errno too. */
static void passed_arg(struct result *r, const char *field, long long value)
{
	r->arg_field = field;
	r->arg = value;
}

/* The wall clock in 64-bit seconds, whatever the flavour's time_t: on a
 * 32-bit ABI through clock_gettime64 (403), as waits.c reads it. */
static long long wall_seconds(void)
{
#if defined(__NR_clock_gettime64) && __SIZEOF_LONG__ == 4
	struct { long long tv_sec; long long tv_nsec; } ts = { 0, 0 };

	syscall(__NR_clock_gettime64, CLOCK_REALTIME, &ts);
	return ts.tv_sec;
#else
	struct timespec ts = { 0, 0 };

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec;
#endif
}

/* 1969-12-31T00:00:00Z: a time before 1970, negative in any time_t, that
 * no rollover wrapped (utimensat_1969). */
#define PRE_1970 (-86400)

/* A raw syscall or C library call that returns -1 and sets errno. */
static void check(struct result *r, long ret)
{
	if (ret == -1)
		r->err = errno;
}

#ifdef PROBE_TIME32_SYSCALL
/* The kernel's old_timespec32, old_itimerspec32, old_timeval32 and
 * old_timex32: abi32.h. */

static const struct old_timespec32 usec1 = { 0, 1000 };
static const struct old_timespec32 zero;

static void clock_gettime_call(struct result *r)
{
	struct old_timespec32 ts;

	check(r, syscall(__NR_clock_gettime, CLOCK_REALTIME, &ts));
	if (!r->err)
		check(r, syscall(__NR_clock_gettime, CLOCK_REALTIME, &ts));
	ok(r, PROBE_KEY("seconds"), ts.tv_sec);
}

static void clock_getres_call(struct result *r)
{
	struct old_timespec32 ts;

	check(r, syscall(__NR_clock_getres, CLOCK_MONOTONIC, &ts));
	ok(r, PROBE_KEY("nsec"), ts.tv_nsec);
}

static void clock_settime_call(struct result *r)
{
	check(r, syscall(__NR_clock_settime, CLOCK_MONOTONIC, &zero));
}

static void clock_adjtime_call(struct result *r)
{
	struct old_timex32 tx = { .modes = 0 };
	long state = syscall(__NR_clock_adjtime, CLOCK_REALTIME, &tx);

	check(r, state);
	ok(r, PROBE_KEY("state"), state);
}

static void adjtimex_call(struct result *r)
{
	struct old_timex32 tx = { .modes = 0 };
	long state = syscall(__NR_adjtimex, &tx);

	check(r, state);
	ok(r, PROBE_KEY("state"), state);
}

static void clock_nanosleep_call(struct result *r)
{
	check(r, syscall(__NR_clock_nanosleep, CLOCK_MONOTONIC, 0, &usec1, NULL));
}

static void nanosleep_call(struct result *r)
{
	check(r, syscall(__NR_nanosleep, &usec1, NULL));
}

static void time_call(struct result *r)
{
#ifdef __NR_time
	int32_t t = 0;
	long ret;

	errno = 0;
	ret = syscall(__NR_time, &t);
	if (ret == -1 && t != -errno)   /* see clock.c: -1..-4095 can be a time */
		r->err = errno;
	ok(r, PROBE_KEY("seconds"), t);
#else
	r->absent = PROBE_NO_SYSCALL;     /* ARM EABI never had time(2) */
#endif
}

static void stime_call(struct result *r)
{
#ifdef __NR_stime
	check(r, syscall(__NR_stime, NULL));   /* EFAULT: never sets the clock */
#else
	r->absent = PROBE_NO_SYSCALL;
#endif
}

static void utime_call(struct result *r)
{
#ifdef __NR_utime
	check(r, syscall(__NR_utime, scratch, NULL));
#else
	r->absent = PROBE_NO_SYSCALL;
#endif
}

static void utimes_call(struct result *r)
{
	check(r, syscall(__NR_utimes, scratch, NULL));
}

static void futimesat_call(struct result *r)
{
	check(r, syscall(__NR_futimesat, AT_FDCWD, scratch, NULL));
}

static void utimensat_call(struct result *r)
{
	check(r, syscall(__NR_utimensat, AT_FDCWD, scratch, NULL, 0));
}

/* kernel-series 0003: get_old_timespec32() reads each of the two times;
 * a negative one counted as a truncation before v3.1, whatever it was. */
static void utimensat_1969_call(struct result *r)
{
	struct old_timespec32 ts[2] = { { PRE_1970, 0 }, { PRE_1970, 0 } };

	check(r, syscall(__NR_utimensat, AT_FDCWD, scratch, ts, 0));
	passed_arg(r, PROBE_KEY("sent"), ts[1].tv_sec);
}

/* sys_nanosleep_time32(): get_old_timespec32(), then EINVAL. */
static void nanosleep_negative_call(struct result *r)
{
	static const struct old_timespec32 minus1 = { -1, 0 };

	check(r, syscall(__NR_nanosleep, &minus1, NULL));
	passed_arg(r, PROBE_KEY("delay"), minus1.tv_sec);
}

/* sys_clock_nanosleep_time32(): get_old_timespec32(), then EINVAL for a
 * negative tv_sec; before the rollover a wait of 2 s. */
static void clock_nanosleep_abstime_call(struct result *r)
{
	struct old_timespec32 ts = { (int32_t)(wall_seconds() + 2), 0 };

	check(r, syscall(__NR_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL));
	passed_arg(r, PROBE_KEY("tv_sec"), ts.tv_sec);
}

static void futex_call(struct result *r)
{
	static uint32_t word;

	/* The word is 0, not 1: EAGAIN at once, after the timeout was read. */
	check(r, syscall(__NR_futex, &word, 0 /* FUTEX_WAIT */, 1, &usec1, NULL, 0));
}

static void ppoll_call(struct result *r)
{
	long ready = syscall(__NR_ppoll, NULL, 0, &zero, NULL, 8);

	check(r, ready);
	ok(r, PROBE_KEY("ready"), ready);
}

static void pselect6_call(struct result *r)
{
	long ready = syscall(__NR_pselect6, 0, NULL, NULL, NULL, &zero, NULL);

	check(r, ready);
	ok(r, PROBE_KEY("ready"), ready);
}

static void rt_sigtimedwait_call(struct result *r)
{
	uint64_t set = 1ULL << (SIGUSR1 - 1);   /* the kernel's sigset_t */

	check(r, syscall(__NR_rt_sigtimedwait, &set, NULL, &zero, sizeof(set)));
}

static void sched_rr_get_interval_call(struct result *r)
{
	struct old_timespec32 ts;

	check(r, syscall(__NR_sched_rr_get_interval, 0, &ts));
}

static int kernel_timer = -1;

static void timer_settime_call(struct result *r)
{
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	struct old_itimerspec32 its = { { 0, 0 }, { 0, 0 } };

	if (kernel_timer < 0 &&
	    syscall(__NR_timer_create, CLOCK_MONOTONIC, &ev, &kernel_timer) != 0) {
		r->err = errno;
		return;
	}
	check(r, syscall(__NR_timer_settime, kernel_timer, 0, &its, NULL));
}

static void timer_gettime_call(struct result *r)
{
	struct old_itimerspec32 its;

	check(r, syscall(__NR_timer_gettime, kernel_timer, &its));
}

static int timer_fd = -1;

static void timerfd_settime_call(struct result *r)
{
	struct old_itimerspec32 its = { { 0, 0 }, { 0, 0 } };

	if (timer_fd < 0 && (timer_fd = timerfd_create(CLOCK_MONOTONIC, 0)) < 0) {
		r->err = errno;
		return;
	}
	check(r, syscall(__NR_timerfd_settime, timer_fd, 0, &its, NULL));
}

static void timerfd_gettime_call(struct result *r)
{
	struct old_itimerspec32 its;

	check(r, syscall(__NR_timerfd_gettime, timer_fd, &its));
}

static void mq_timedsend_call(struct result *r)
{
	check(r, syscall(__NR_mq_timedsend, -1, "", 0, 0, &usec1));
}

static void mq_timedreceive_call(struct result *r)
{
	char buf[8];

	check(r, syscall(__NR_mq_timedreceive, -1, buf, sizeof(buf), NULL, &usec1));
}

static void semtimedop_call(struct result *r)
{
	struct sembuf op = { 0, 0, IPC_NOWAIT };

#ifdef __NR_semtimedop
	check(r, syscall(__NR_semtimedop, -1, &op, 1, &usec1));
#else
	/* i386: only through ipc(SEMTIMEDOP = 4, ...), as old C libraries did */
	check(r, syscall(__NR_ipc, 4, -1, 1, 0, &op, &usec1));
#endif
}

static void recvmmsg_call(struct result *r)
{
	check(r, syscall(__NR_recvmmsg, -1, NULL, 0, 0, &usec1));
}

/* Not one of COMPAT_32BIT_TIME's syscalls: sys_gettimeofday() stays. */
static void gettimeofday_call(struct result *r)
{
	struct old_timeval32 tv;

	check(r, syscall(__NR_gettimeofday, &tv, NULL));
	ok(r, PROBE_KEY("seconds"), tv.tv_sec);
}

/* The address of @name in the vDSO the kernel mapped into this process
 * (AT_SYSINFO_EHDR), from its dynamic symbol table (DT_HASH gives the
 * number of symbols: both x86's vdso32 and ARM's vDSO are linked with a
 * SysV hash), or NULL: no vDSO (x86's vdso32=0), or no such entry. */
static void *vdso_symbol(const char *name)
{
	const Elf32_Ehdr *eh = (const Elf32_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	uintptr_t base = (uintptr_t)eh, load = 0;
	const Elf32_Dyn *dyn = NULL;
	const Elf32_Sym *syms = NULL;
	const Elf32_Word *hash = NULL;
	const char *strs = NULL;
	const Elf32_Phdr *ph;
	int i, loaded = 0;

	if (!eh)
		return NULL;
	ph = (const Elf32_Phdr *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !loaded) {
			load = base + ph[i].p_offset - ph[i].p_vaddr;
			loaded = 1;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf32_Dyn *)(base + ph[i].p_offset);
		}
	}
	for (; loaded && dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			syms = (const Elf32_Sym *)(load + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_STRTAB)
			strs = (const char *)(load + dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_HASH)
			hash = (const Elf32_Word *)(load + dyn->d_un.d_ptr);
	}
	if (!syms || !strs || !hash)
		return NULL;
	for (i = 0; i < (int)hash[1]; i++)
		if (syms[i].st_shndx != SHN_UNDEF &&
		    ELF32_ST_TYPE(syms[i].st_info) == STT_FUNC &&
		    strcmp(strs + syms[i].st_name, name) == 0)
			return (void *)(load + syms[i].st_value);
	return NULL;
}

/* The vDSO's own 32-bit clock_gettime, as glibc < 2.34 and musl < 1.2
 * call it: no syscall, so no time32 policy, count or truncation report
 * sees it, and after the rollover it reads 1901 (x86: vclock_gettime.c,
 * ARM: vgettimeofday.c, both with struct old_timespec32). */
static void vdso_clock_gettime_call(struct result *r)
{
	int (*gettime)(clockid_t, struct old_timespec32 *) =
		(int (*)(clockid_t, struct old_timespec32 *))vdso_symbol("__vdso_clock_gettime");
	struct old_timespec32 ts;
	int ret;

	if (!gettime) {
		r->absent = "no 32-bit vDSO entry";
		return;
	}
	ret = gettime(CLOCK_REALTIME, &ts);
	if (ret < 0)
		r->err = -ret;   /* a fallback syscall's -errno, as the vDSO returns it */
	else
		ok(r, PROBE_KEY("seconds"), ts.tv_sec);
}

#else /* the C library */

static const struct timespec usec1 = { 0, 1000 };
static const struct timespec zero;

static void clock_gettime_call(struct result *r)
{
	struct timespec ts;

	check(r, clock_gettime(CLOCK_REALTIME, &ts));
	if (!r->err)
		check(r, clock_gettime(CLOCK_REALTIME, &ts));
	ok(r, PROBE_KEY("seconds"), (long long)ts.tv_sec);
}

static void clock_getres_call(struct result *r)
{
	struct timespec ts;

	check(r, clock_getres(CLOCK_MONOTONIC, &ts));
	ok(r, PROBE_KEY("nsec"), ts.tv_nsec);
}

static void clock_settime_call(struct result *r)
{
	check(r, clock_settime(CLOCK_MONOTONIC, &zero));
}

static void clock_adjtime_call(struct result *r)
{
	struct timex tx = { .modes = 0 };
	int state = clock_adjtime(CLOCK_REALTIME, &tx);

	check(r, state);
	ok(r, PROBE_KEY("state"), state);
}

static void adjtimex_call(struct result *r)
{
	struct timex tx = { .modes = 0 };
	int state = adjtimex(&tx);

	check(r, state);
	ok(r, PROBE_KEY("state"), state);
}

static void clock_nanosleep_call(struct result *r)
{
	r->err = clock_nanosleep(CLOCK_MONOTONIC, 0, &usec1, NULL);   /* returns the error */
}

static void nanosleep_call(struct result *r)
{
	check(r, nanosleep(&usec1, NULL));
}

static void time_call(struct result *r)
{
	time_t t;

	errno = 0;
	t = time(NULL);
	if (t == (time_t)-1 && errno != 0)
		r->err = errno;
	ok(r, PROBE_KEY("seconds"), (long long)t);
}

static void stime_call(struct result *r)
{
	r->absent = PROBE_NO_LIBC_CALL;   /* glibc >= 2.31 has no stime() for new programs */
}

static void utime_call(struct result *r)
{
	check(r, utime(scratch, NULL));
}

static void utimes_call(struct result *r)
{
	check(r, utimes(scratch, NULL));
}

static void futimesat_call(struct result *r)
{
	check(r, futimesat(AT_FDCWD, scratch, NULL));
}

static void utimensat_call(struct result *r)
{
	check(r, utimensat(AT_FDCWD, scratch, NULL, 0));
}

/* glibc 2.36 makes utimensat_time32 when both times fit in 32 bits. */
static void utimensat_1969_call(struct result *r)
{
	struct timespec ts[2] = { { PRE_1970, 0 }, { PRE_1970, 0 } };

	check(r, utimensat(AT_FDCWD, scratch, ts, 0));
	passed_arg(r, PROBE_KEY("sent"), (long long)ts[1].tv_sec);
}

static void nanosleep_negative_call(struct result *r)
{
	static const struct timespec minus1 = { -1, 0 };

	check(r, nanosleep(&minus1, NULL));
	passed_arg(r, PROBE_KEY("delay"), (long long)minus1.tv_sec);
}

/* now + 2 in the flavour's time_t: a 32-bit one wraps after the rollover,
 * as in any program that computes it (glibc then passes the negative time
 * on, through clock_nanosleep_time32: it fits in 32 bits). */
static void clock_nanosleep_abstime_call(struct result *r)
{
	struct timespec ts = { (time_t)(wall_seconds() + 2), 0 };

	r->err = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL);
	passed_arg(r, PROBE_KEY("tv_sec"), (long long)ts.tv_sec);
}

/* No futex() in the C library: sem_timedwait() waits on one. glibc
 * aborts the program when that futex syscall fails with ENOSYS
 * (futex_fatal_error() in sysdeps/nptl/futex-internal.c), so the wait runs
 * in a child process, whose calls are not in this task's count: the line
 * then says "signal":"SIGABRT". */
static void futex_call(struct result *r)
{
	int status;
	pid_t child = fork();

	if (child == 0) {
		sem_t sem;
		struct timespec past = { 1, 0 };

		sem_init(&sem, 0, 0);
		_exit(sem_timedwait(&sem, &past) == 0 ? 0 : errno);
	}
	if (child < 0 || waitpid(child, &status, 0) != child) {
		r->err = errno;
		return;
	}
	if (WIFSIGNALED(status))
		r->signal = WTERMSIG(status);
	else
		r->err = WEXITSTATUS(status);
}

static void ppoll_call(struct result *r)
{
	int ready = ppoll(NULL, 0, &zero, NULL);

	check(r, ready);
	ok(r, PROBE_KEY("ready"), ready);
}

static void pselect6_call(struct result *r)
{
	int ready = pselect(0, NULL, NULL, NULL, &zero, NULL);

	check(r, ready);
	ok(r, PROBE_KEY("ready"), ready);
}

static void rt_sigtimedwait_call(struct result *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	check(r, sigtimedwait(&set, NULL, &zero));
}

static void sched_rr_get_interval_call(struct result *r)
{
	struct timespec ts;

	check(r, sched_rr_get_interval(0, &ts));
}

static timer_t timer;
static int have_timer;

static void timer_settime_call(struct result *r)
{
	struct sigevent ev = { .sigev_notify = SIGEV_NONE };
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (!have_timer && timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) {
		r->err = errno;
		return;
	}
	have_timer = 1;
	check(r, timer_settime(timer, 0, &its, NULL));
}

static void timer_gettime_call(struct result *r)
{
	struct itimerspec its;

	check(r, timer_gettime(timer, &its));
}

static int timer_fd = -1;

static void timerfd_settime_call(struct result *r)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (timer_fd < 0 && (timer_fd = timerfd_create(CLOCK_MONOTONIC, 0)) < 0) {
		r->err = errno;
		return;
	}
	check(r, timerfd_settime(timer_fd, 0, &its, NULL));
}

static void timerfd_gettime_call(struct result *r)
{
	struct itimerspec its;

	check(r, timerfd_gettime(timer_fd, &its));
}

static void mq_timedsend_call(struct result *r)
{
	check(r, mq_timedsend((mqd_t)-1, "", 0, 0, &usec1));
}

static void mq_timedreceive_call(struct result *r)
{
	char buf[8];

	check(r, mq_timedreceive((mqd_t)-1, buf, sizeof(buf), NULL, &usec1));
}

static void semtimedop_call(struct result *r)
{
	struct sembuf op = { 0, 0, IPC_NOWAIT };

	check(r, semtimedop(-1, &op, 1, &usec1));
}

static void recvmmsg_call(struct result *r)
{
	struct timespec ts = usec1;

	check(r, recvmmsg(-1, NULL, 0, 0, &ts));
}

static void gettimeofday_call(struct result *r)
{
	struct timeval tv;

	check(r, gettimeofday(&tv, NULL));
	ok(r, PROBE_KEY("seconds"), (long long)tv.tv_sec);
}

/* A C library reads the clock through the vDSO itself (clock_gettime). */
static void vdso_clock_gettime_call(struct result *r)
{
	r->absent = "the 32-bit vDSO entry is called in time32-syscall only";
}
#endif

/* A SIGSYS the kernel sent at a call (kernel.time32_syscalls = trap): the
 * handler returns, so the call then fails with ENOSYS as under deny. A
 * child (futex) inherits the handler, not this flag. */
static volatile sig_atomic_t trapped;	/* the si_code + 1 of the last SIGSYS */

#define SYS_TIME32_CODE 3	/* kernel-series: include/uapi/asm-generic/siginfo.h SYS_TIME32 */

static void on_sigsys(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)uc;
	trapped = info->si_code + 1;
}

/* /dev/kmsg, read on from where it ended before the first call, and the
 * prefix of the policy's call reports about this program or its children:
 * "time32: <comm>[". */
static int kmsg_fd = -1;
static char report_prefix[64];

/* The syscalls named by the call reports logged since the last look,
 * joined with '+' (kmsg_reported_calls()). Under log, deny and trap the
 * first call of each syscall by a process is reported: the name the hook
 * passed, which must be the call's own (kernel-series 0004-0010). */
static void reports_since(char *names, size_t size)
{
	kmsg_reported_calls(kmsg_fd, report_prefix, names, size);
}

static size_t report_who(char *who, size_t size, pid_t pid);

/* The policy's reports "<who><path> passed <v> in <site> (syscall <n>)"
 * about this process on @fd since it was opened: a negative time taken
 * from it that counted as a truncation. */
static long long passed_reports(int fd)
{
	char record[1024], who[96];
	size_t who_len = report_who(who, sizeof(who), getpid());
	const char *text;
	long long passed = 0;

	while ((text = kmsg_next(fd, record, sizeof(record))))
		if (strncmp(text, who, who_len) == 0 && strstr(text + who_len, " passed "))
			passed++;
	return passed;
}

/* One call, and its line; with @passed, the "passed" reports it caused. */
static void run_call(const char *call, void (*variant)(struct result *), int passed)
{
	struct result r = { 0 };
	char reported_as[256];
	int passed_fd = passed ? kmsg_open_at_end() : -1;

	trapped = 0;
	variant(&r);
	reports_since(reported_as, sizeof(reported_as));
	if (r.absent) {
		if (passed_fd >= 0)
			close(passed_fd);
		probe_absent(PROBE, call, r.absent);
		return;
	}
	probe_begin(PROBE, call);
	if (r.signal) {
		char name[24];

		snprintf(name, sizeof(name), "SIG%s",
			 sigabbrev_np(r.signal) ? sigabbrev_np(r.signal) : "?");
		probe_str("signal", name);
	} else if (r.err) {
		probe_str("errno", probe_errname(r.err));
	} else if (r.field) {
		probe_i64(r.field, r.value);
	}
	if (r.arg_field)
		probe_i64(r.arg_field, r.arg);
	if (trapped == SYS_TIME32_CODE + 1) {
		probe_str("trapped", "SIGSYS");
	} else if (trapped) {
		char code[32];

		snprintf(code, sizeof(code), "SIGSYS code %d", trapped - 1);
		probe_str("trapped", code);
	}
	if (reported_as[0])
		probe_str("reported_as", reported_as);
	if (passed_fd >= 0) {
		probe_i64("passed", passed_reports(passed_fd));
		close(passed_fd);
	}
	probe_end();
}

#define CALL(name) \
	static void name##_run(void *ctx) { (void)ctx; run_call(#name, name##_call, 0); }
/* A negative time passed in: its "passed" reports too. */
#define CALL_PASSING(name) \
	static void name##_run(void *ctx) { (void)ctx; run_call(#name, name##_call, 1); }
CALL(clock_gettime)
CALL(clock_getres)
CALL(clock_settime)
CALL(clock_adjtime)
CALL(adjtimex)
CALL(clock_nanosleep)
CALL(nanosleep)
CALL(time)
CALL(stime)
CALL(utime)
CALL(utimes)
CALL(futimesat)
CALL(utimensat)
CALL(futex)
CALL(ppoll)
CALL(pselect6)
CALL(rt_sigtimedwait)
CALL(sched_rr_get_interval)
CALL(timer_settime)
CALL(timer_gettime)
CALL(timerfd_settime)
CALL(timerfd_gettime)
CALL(mq_timedsend)
CALL(mq_timedreceive)
CALL(semtimedop)
CALL(recvmmsg)
CALL(gettimeofday)
CALL(vdso_clock_gettime)
CALL_PASSING(utimensat_1969)
CALL_PASSING(nanosleep_negative)
CALL_PASSING(clock_nanosleep_abstime)

/* "Time32_syscalls:" and "Time32_truncations:" from /proc/self/status
 * (the second since series v2: "absent" before). */
static void status_run(void *ctx)
{
	(void)ctx;
	probe_begin(PROBE, "status");
	probe_status_field("time32_syscalls", "Time32_syscalls");
	probe_status_field("time32_truncations", "Time32_truncations");
	probe_end();
}

/* "time32: <comm>[<pid>] tgid <pid> exe ": how every report about this
 * process (one thread) begins (kernel-series 0021). */
static size_t report_who(char *who, size_t size, pid_t pid)
{
	char comm[32];

	kmsg_own_comm(comm, sizeof(comm));
	snprintf(who, size, "time32: %s[%d] tgid %d exe ", comm, (int)pid, (int)pid);
	return strlen(who);
}

/* The policy's reports about this process in the kernel log: lines
 * "<who><path> called <syscall> (allowed|denied|trapped)", and the
 * truncations "<who><path> truncated <v> to <w> in <site> (syscall <n>)"
 * (or "passed <v> in <site>", a negative time). */
static void kmsg_run(void *ctx)
{
	char record[1024], who[96], first[64] = "", exe[256] = "";
	char truncated_in[64] = "";
	long long reported = 0, denied = 0, truncated = 0;
	size_t who_len = report_who(who, sizeof(who), getpid());
	const char *text, *what;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	(void)ctx;
	if (fd < 0) {
		probe_errno(PROBE, "kmsg", errno);
		return;
	}
	while ((text = kmsg_next(fd, record, sizeof(record)))) {
		if (strncmp(text, who, who_len) != 0)
			continue;
		if ((what = strstr(text + who_len, " called "))) {
			if (reported++ == 0) {
				sscanf(what + 8, "%63s", first);
				snprintf(exe, sizeof(exe), "%.*s", (int)(what - text - who_len),
					 text + who_len);
			}
			if (strstr(what, "(denied)") || strstr(what, "(trapped)"))
				denied++;
		} else if ((what = strstr(text + who_len, " truncated ")) ||
			   (what = strstr(text + who_len, " passed "))) {
			const char *in = strstr(what, " in ");

			if (in && truncated++ == 0)
				sscanf(in + 4, "%63s", truncated_in);
		}
	}
	close(fd);
	probe_begin(PROBE, "kmsg");
	probe_i64("reported", reported);
	probe_i64("denied", denied);
	if (reported) {
		probe_str("first", first);
		probe_str("exe", exe);
	}
	probe_i64("truncated", truncated);
	if (truncated)
		probe_str("truncated_in", truncated_in);
	probe_end();
}

/* tracefs, and the time32 events in it (kernel-series 0022). */
#define TRACEFS "/sys/kernel/tracing"
#define TIME32_EVENTS TRACEFS "/events/time32"

/* Writes @value to the tracefs file @path: 1 when it took it. */
static int trace_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY), done;

	if (fd < 0)
		return 0;
	done = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return done;
}

/* Whether tracefs has the time32 events, mounting it if need be; then
 * record each task's tgid (the events carry none: the line's header shows
 * it while the option is on), enable them and empty the buffer (prepare(),
 * before the first call). Without the option the events are still read,
 * each process known by its pid. */
static int trace_start(void)
{
	int fd;

	if (access(TIME32_EVENTS, F_OK) != 0 &&
	    mount("tracefs", TRACEFS, "tracefs", 0, NULL) != 0)
		return 0;
	if (access(TIME32_EVENTS, F_OK) != 0)
		return 0;
	trace_write(TRACEFS "/options/record-tgid", "1");
	if (!trace_write(TIME32_EVENTS "/enable", "1"))
		return 0;
	fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static int tracing;

/* A line's header, as kernel/trace/trace_output.c trace_print_context()
 * writes it: "%16s-%-7d " (comm, pid), "(%7d) " (tgid, or "(-------) "
 * when the tracer has not recorded it; only with options/record-tgid),
 * then "[%03d] " (the CPU), the flags and the time. A comm may hold
 * spaces, dashes and brackets: the CPU field is the last " [" before the
 * event, the tgid the last "(...)" before it, the pid the number after
 * the last '-' before that. */
struct trace_who {
	int pid;
	int tgid;               /* 0: not shown, or not recorded */
};

static int trace_header(const char *line, const char *event, struct trace_who *who)
{
	const char *cpu = NULL, *end, *dash = NULL, *p;

	for (p = line; p + 1 < event; p++)
		if (p[0] == ' ' && p[1] == '[')
			cpu = p;
	if (!cpu)
		return 0;
	end = cpu;
	who->tgid = 0;
	if (end > line && end[-1] == ')') {
		const char *open = end - 1;

		while (open > line && *open != '(')
			open--;
		if (*open != '(')
			return 0;
		for (p = open + 1; *p == ' '; p++)
			;
		if (*p >= '0' && *p <= '9')
			who->tgid = atoi(p);
		end = open;
	}
	for (p = line; p < end; p++)
		if (*p == '-')
			dash = p;
	if (!dash || dash[1] < '0' || dash[1] > '9')
		return 0;
	who->pid = atoi(dash + 1);
	return 1;
}

/* The time32 events in the trace buffer of this process, or of the
 * children of the flood. */
struct trace_tally {
	pid_t tgid;             /* count this process's events, or (0) */
	const pid_t *pids;      /* those of these processes (single-threaded) */
	size_t npids;
	long long calls, truncations, value;
	char first[64];
};

/* This process's: its tgid, or while the tracer has none recorded, its pid
 * (it makes its calls from its only thread); the flood's: its children's
 * pids, which the loop hands back. Not by comm: a line's comm is not the
 * event's but what the tracer saved for that pid (saved_cmdlines, a table
 * of its own size, "<...>" once a pid's entry is reused), and every probe
 * run and child shares the comm "time32". */
static int tally_counts(const struct trace_tally *t, const struct trace_who *who)
{
	size_t i;

	if (t->tgid)
		return who->tgid ? who->tgid == t->tgid : who->pid == t->tgid;
	for (i = 0; i < t->npids; i++)
		if (who->pid == t->pids[i])
			return 1;
	return 0;
}

/* Reads the buffer's lines (kernel-series 0022, include/trace/events/time32.h)
 * "<comm>-<pid> (<tgid>) [<cpu>] <flags> <time>: time32_call: call=<name> nr=<n> verdict=<v>" and
 * "<comm>-<pid> (<tgid>) [<cpu>] <flags> <time>: time32_truncation: site=<s> nr=<n> value=<v> as32=<w>". */
static void trace_count(struct trace_tally *t)
{
	static const char call_event[] = " time32_call: ";
	static const char truncation_event[] = " time32_truncation: ";
	char line[512], name[64];
	FILE *file = fopen(TRACEFS "/trace", "r");
	struct trace_who who;
	long long value;
	const char *event;

	if (!file)
		return;
	while (fgets(line, sizeof(line), file)) {
		if (line[0] == '#')
			continue;
		if ((event = strstr(line, call_event)) &&
		    trace_header(line, event, &who) &&
		    sscanf(event + strlen(call_event), "call=%63s", name) == 1) {
			if (tally_counts(t, &who) && t->calls++ == 0)
				snprintf(t->first, sizeof(t->first), "%s", name);
		} else if ((event = strstr(line, truncation_event)) &&
			   trace_header(line, event, &who) &&
			   sscanf(event + strlen(truncation_event), "site=%63s nr=%*d value=%lld",
				  name, &value) == 2) {
			if (tally_counts(t, &who) && t->truncations++ == 0)
				t->value = value;
		}
	}
	fclose(file);
}

static void trace_run(void *ctx)
{
	struct trace_tally t = { .tgid = getpid() };

	(void)ctx;
	if (!tracing) {
		probe_absent(PROBE, "trace", "no time32 trace events in tracefs");
		return;
	}
	trace_count(&t);
	probe_begin(PROBE, "trace");
	probe_i64("calls", t.calls);
	if (t.calls)
		probe_str("first", t.first);
	probe_i64("truncations", t.truncations);
	if (t.truncations)
		probe_i64("value", t.value);
	probe_end();
}

/* How the namespace's init and its parent exit, for the probe to decode:
 * 1 + the call's errno (1: none), or one of these, or 128 + a signal. */
#define INIT_NOT_PID1 100
#define INIT_NO_NAMESPACE 101
#define INIT_ERRNO_MAX 98

/* The namespace's init: SIGSYS at its default action, the call, its errno. */
static int init_call(void)
{
	struct result r = { 0 };

	if (getpid() != 1)
		return INIT_NOT_PID1;
	signal(SIGSYS, SIG_DFL);
	clock_gettime_call(&r);
	return 1 + (r.err > 0 && r.err <= INIT_ERRNO_MAX ? r.err : 0);
}

/* The child that makes a new PID namespace, forks its init and exits as it
 * did: 128 + the signal that killed it, if one did. */
static int init_parent(void)
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID) != 0)
		return INIT_NO_NAMESPACE;
	pid = fork();
	if (pid == 0)
		_exit(init_call());
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return INIT_NO_NAMESPACE;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void init_run(void *ctx)
{
	char name[24];
	int status, code;
	pid_t pid;

	(void)ctx;
	pid = fork();
	if (pid == 0)
		_exit(init_parent());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		probe_errno(PROBE, "init", pid < 0 ? errno : ECHILD);
		return;
	}
	code = WEXITSTATUS(status);
	probe_begin(PROBE, "init");
	if (code > 128) {
		snprintf(name, sizeof(name), "SIG%s",
			 sigabbrev_np(code - 128) ? sigabbrev_np(code - 128) : "?");
		probe_str("signal", name);
	} else if (code >= 1 && code <= 1 + INIT_ERRNO_MAX) {
		probe_str("errno", code == 1 ? "none" : probe_errname(code - 1));
	} else {
		probe_str("error", code == INIT_NOT_PID1 ? "not pid 1" : "no PID namespace");
	}
	probe_end();
}

#define FLOOD_CHILDREN 300
#define NOBODY 65534
#define OTHER_USER 1000

/* The flood (flood_run()): the pids of its children, and its loop, a
 * process of user nobody that stays until flood_release(). The policy's
 * budgets are per user (kernel-series 0021, series v3.1), kept in the
 * user's struct user_struct, which lives as long as a process of that
 * user does: the loop keeps it, and with it the spent budget, as the
 * parent of a real fork loop would. (Children that each turned into
 * nobody themselves, one after another, would each get a new user_struct,
 * a new budget, whenever the last one's was freed in between.) */
static pid_t flood_pids[FLOOD_CHILDREN];
static size_t flood_children;
static pid_t flood_loop = -1;
static int flood_hold = -1;     /* the loop exits when this closes */

static void flood_release(void)
{
	if (flood_hold >= 0)
		close(flood_hold);
	if (flood_loop > 0)
		waitpid(flood_loop, NULL, 0);
	flood_hold = -1;
	flood_loop = -1;
}

/* The loop: as nobody, 300 children one after the other, each making the
 * flavour's clock_gettime (twice) and exiting; their pids to @pids_fd;
 * then it waits for @hold_fd to close. */
static void flood_loop_run(int pids_fd, int hold_fd)
{
	char c;
	int i;

	if (setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
		_exit(1);
	for (i = 0; i < FLOOD_CHILDREN; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct result r = { 0 };

			clock_gettime_call(&r);
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, NULL, 0) == pid &&
		    write(pids_fd, &pid, sizeof(pid)) != sizeof(pid))
			break;
	}
	close(pids_fd);
	while (read(hold_fd, &c, 1) > 0)
		;
	_exit(0);
}

/* Whether the kmsg record @text is a call report naming process @pid. */
static int reports_naming(const char *text, const char *prefix, size_t prefix_len, pid_t pid)
{
	int named;

	return strncmp(text, prefix, prefix_len) == 0 &&
	       sscanf(text + prefix_len, "%d]", &named) == 1 && named == pid &&
	       strstr(text, " called ") != NULL;
}

/* A fork loop, unprivileged: what the call reports' ratelimit is for. */
static void flood_run(void *ctx)
{
	char record[1024], comm[32], prefix[64];
	struct trace_tally t = { 0 };
	long long reported = 0;
	size_t prefix_len, i;
	int pids[2], hold[2];
	int fd = kmsg_open_at_end();
	const char *text;
	pid_t pid;

	(void)ctx;
	if (fd < 0 || flood_loop > 0 || pipe(pids) != 0 || pipe(hold) != 0) {
		probe_errno(PROBE, "flood", fd < 0 ? errno : flood_loop > 0 ? EBUSY : errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	flood_loop = fork();
	if (flood_loop == 0) {
		close(pids[0]);
		close(hold[1]);
		flood_loop_run(pids[1], hold[0]);
	}
	close(pids[1]);
	close(hold[0]);
	flood_hold = hold[1];
	flood_children = 0;
	while (flood_children < FLOOD_CHILDREN &&
	       read(pids[0], &pid, sizeof(pid)) == sizeof(pid))
		flood_pids[flood_children++] = pid;
	close(pids[0]);
	kmsg_own_comm(comm, sizeof(comm));
	snprintf(prefix, sizeof(prefix), "time32: %s[", comm);
	prefix_len = strlen(prefix);
	while ((text = kmsg_next(fd, record, sizeof(record))))
		for (i = 0; i < flood_children; i++)
			if (reports_naming(text, prefix, prefix_len, flood_pids[i])) {
				reported++;
				break;
			}
	close(fd);
	t.pids = flood_pids;
	t.npids = flood_children;
	if (tracing)
		trace_count(&t);
	probe_begin(PROBE, "flood");
	probe_i64("children", (long long)flood_children);
	probe_i64("reported", reported);
	if (tracing)
		probe_i64("traced", t.calls);
	probe_end();
}

/* A child that turns into @uid and makes the flavour's clock_gettime. */
static pid_t user_call(uid_t uid)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct result r = { 0 };

		if (setgid(uid) != 0 || setuid(uid) != 0)
			_exit(1);
		clock_gettime_call(&r);
		_exit(0);
	}
	if (pid > 0 && waitpid(pid, NULL, 0) != pid)
		return -1;
	return pid;
}

/* After the flood, while its loop still holds user nobody: one more
 * process of nobody, whose budget the flood spent, then one of another
 * unprivileged user, each making clock_gettime: the call reports naming
 * each. Per-user budgets report the other user's at once. */
static void other_user_run(void *ctx)
{
	char record[1024], comm[32], prefix[64];
	long long same = 0, other = 0;
	int fd = kmsg_open_at_end();
	pid_t same_pid, other_pid;
	size_t prefix_len;
	const char *text;

	(void)ctx;
	if (fd < 0) {
		probe_errno(PROBE, "other_user", errno);
		return;
	}
	same_pid = user_call(NOBODY);
	other_pid = user_call(OTHER_USER);
	kmsg_own_comm(comm, sizeof(comm));
	snprintf(prefix, sizeof(prefix), "time32: %s[", comm);
	prefix_len = strlen(prefix);
	while ((text = kmsg_next(fd, record, sizeof(record)))) {
		if (reports_naming(text, prefix, prefix_len, same_pid))
			same++;
		else if (reports_naming(text, prefix, prefix_len, other_pid))
			other++;
	}
	close(fd);
	flood_release();
	if (same_pid < 0 || other_pid < 0) {
		probe_errno(PROBE, "other_user", ECHILD);
		return;
	}
	probe_begin(PROBE, "other_user");
	probe_i64("uid", OTHER_USER);
	probe_i64("reported", other);
	probe_i64("flood_user_reported", same);
	probe_end();
}

static const struct probe_call calls[] = {
	{ "clock_gettime",         clock_gettime_run,         NULL, 0 },
	{ "clock_getres",          clock_getres_run,          NULL, 0 },
	{ "clock_settime",         clock_settime_run,         NULL, 0 },
	{ "clock_adjtime",         clock_adjtime_run,         NULL, 0 },
	{ "adjtimex",              adjtimex_run,              NULL, 0 },
	{ "clock_nanosleep",       clock_nanosleep_run,       NULL, 0 },
	{ "nanosleep",             nanosleep_run,             NULL, 0 },
	{ "time",                  time_run,                  NULL, 0 },
	{ "stime",                 stime_run,                 NULL, 0 },
	{ "utime",                 utime_run,                 NULL, 0 },
	{ "utimes",                utimes_run,                NULL, 0 },
	{ "futimesat",             futimesat_run,             NULL, 0 },
	{ "utimensat",             utimensat_run,             NULL, 0 },
	{ "futex",                 futex_run,                 NULL, 0 },
	{ "ppoll",                 ppoll_run,                 NULL, 0 },
	{ "pselect6",              pselect6_run,              NULL, 0 },
	{ "rt_sigtimedwait",       rt_sigtimedwait_run,       NULL, 0 },
	{ "sched_rr_get_interval", sched_rr_get_interval_run, NULL, 0 },
	{ "timer_settime",         timer_settime_run,         NULL, 0 },
	{ "timer_gettime",         timer_gettime_run,         NULL, 0 },
	{ "timerfd_settime",       timerfd_settime_run,       NULL, 0 },
	{ "timerfd_gettime",       timerfd_gettime_run,       NULL, 0 },
	{ "mq_timedsend",          mq_timedsend_run,          NULL, 0 },
	{ "mq_timedreceive",       mq_timedreceive_run,       NULL, 0 },
	{ "semtimedop",            semtimedop_run,            NULL, 0 },
	{ "recvmmsg",              recvmmsg_run,              NULL, 0 },
	{ "gettimeofday",          gettimeofday_run,          NULL, 0 },
	{ "vdso_clock_gettime",    vdso_clock_gettime_run,    NULL, 0 },
	{ "status",                status_run,                NULL, 0 },
	{ "kmsg",                  kmsg_run,                  NULL, 0 },
	{ "trace",                 trace_run,                 NULL, 0 },
	{ "utimensat_1969",        utimensat_1969_run,        NULL, PROBE_NAMED_ONLY },
	{ "nanosleep_negative",    nanosleep_negative_run,    NULL, PROBE_NAMED_ONLY },
	{ "clock_nanosleep_abstime", clock_nanosleep_abstime_run, NULL, PROBE_NAMED_ONLY },
	{ "init",                  init_run,                  NULL, PROBE_NAMED_ONLY },
	{ "flood",                 flood_run,                 NULL, PROBE_NAMED_ONLY },
	{ "other_user",            other_user_run,            NULL, PROBE_NAMED_ONLY },
};

/* Before the calls: the file the file-time calls touch, the SIGSYS
 * handler, and /dev/kmsg opened at its end (no kmsg: no reported_as). */
static int prepare(const struct probe *p, const struct probe_call *const *run, size_t n)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	char comm[32];
	int fd = mkstemp(scratch);

	(void)p, (void)run, (void)n;
	if (fd < 0) {
		perror("time32: mkstemp");
		return 1;
	}
	close(fd);
	sigaction(SIGSYS, &sa, NULL);
	tracing = trace_start();
	kmsg_own_comm(comm, sizeof(comm));
	snprintf(report_prefix, sizeof(report_prefix), "time32: %s[", comm);
	kmsg_fd = kmsg_open_at_end();
	return 0;
}

static int remove_scratch(const struct probe *p)
{
	(void)p;
	unlink(scratch);
	flood_release();
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	return 0;
}

static const struct probe time32 = {
	.name = PROBE,
	.usage = "usage: time32 [call...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
	.prepare = prepare,
	.finish = remove_scratch,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &time32);
}
