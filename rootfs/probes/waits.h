/* waits.h - what the waiting probes share (timers, mqueue, futex, timeouts);
 * defined in waits.c, linked into each of them (rootfs/Makefile).
 *
 * Each of those probes takes one argument, the target: the CLOCK_REALTIME
 * instant its waits are due, as decimal seconds since the epoch
 * ("2147483649"), as UTC text ("2038-01-19T03:14:09Z"), as "+N" (N
 * seconds from now; the default is "+2"), or as "libc+N" (N seconds from
 * "now" as the flavour's C library reads it, where the instrument clock
 * below is the kernel's: what a program under libfaketime computes; the
 * delay is N). Absolute calls are armed for the
 * target itself; relative calls for the delay from now to the target. The
 * scenario places the clock (reset-clock) so that "now" is before
 * 2038-01-19T03:14:08Z and the target after it.
 *
 * Every call runs at the same time in a child process of its own (so a
 * process-wide timer, signal or alarm of one call cannot disturb another),
 * writes its JSON lines into a pipe, and the parent prints them in table
 * order. A child still waiting well after the target is killed and its call
 * reported with "outcome":"killed: no wake-up ...".
 *
 * A waiting probe's description (struct probe, probe.h) takes waits_parse
 * and waits_run as its parse and run hooks and a struct waits_target as its
 * ctx: each call's run() gets that target.
 *
 * The measuring instruments are not the calls under test and do not depend
 * on the flavour: elapsed time on CLOCK_MONOTONIC (seconds, microsecond
 * digits) and the wake-up time ("woke", seconds since the epoch) read
 * through the 64-bit time syscall even in the 32-bit time_t flavours.
 *
 * Common fields: elapsed (s), woke (epoch s), delay (s, relative calls),
 * tv_sec (what an absolute call passed, as the flavour's time_t holds it).
 */
#ifndef WAITS_H
#define WAITS_H

#include "probe.h"

#include <time.h>

#define WAITS_DEFAULT_DELAY 2
#define WAITS_GRACE 5.0     /* seconds past the target before a child is killed */
#define WAITS_MAX_CALLS 16
/* A target further away is a mistake: refuse it. Eight days: a day-long
 * wait across the rollover and back, which only time warp makes quick
 * (docs/time-warp.md); without warp the scenario's timeout stops it. */
#define WAITS_MAX_DELAY 691200
#define WAITS_MAX_DELAY_TEXT "691200 s (8 days)"
#define WAITS_USAGE "[target: seconds, YYYY-MM-DDTHH:MM:SSZ, +N or libc+N] [call...]"

struct waits_target {
	long long seconds;   /* the absolute target, CLOCK_REALTIME */
	double delay;        /* from the probe's start to the target */
};

/* An instrument clock read as 64-bit seconds and nanoseconds, whatever the
 * flavour's time_t: on a 32-bit ABI through clock_gettime64 (403). */
void waits_clock(clockid_t clock, long long *sec, long *nsec);
double waits_monotonic(void);
double waits_realtime(void);

/* "2147483649", "2038-01-19T03:14:09Z" or "+2" -> absolute seconds. */
int waits_parse_time(const char *text, long long now, long long *out);

/* The parse hook: the target from argv[1] ("+2" when absent) into the
 * struct waits_target that is the probe's ctx; a usage error (exit 2) when
 * it is malformed or not in the future. Takes at most one argument. */
int waits_parse(const struct probe *p, int argc, char **argv);

/* A waiting probe's main(): its description (the waits_parse and waits_run
 * hooks, a struct waits_target as ctx, the usage line) around its calls. */
int waits_main(int argc, char **argv, const char *name,
               const struct probe_call *calls, size_t ncalls);

/* The relative timeout of a "relative" call: the delay, as a timespec of
 * the flavour's time_t (small: it fits in 32 bits). */
struct timespec waits_relative(const struct waits_target *t);

/* The absolute target as the flavour's timespec: a 32-bit time_t cannot hold
 * a time past 2038-01-19T03:14:07Z and wraps (to 1901), as it would in any
 * program that computes "now + n" in time_t. */
struct timespec waits_absolute(const struct waits_target *t);

/* One line for a call that waited: errno when it failed (0: none), elapsed
 * since `start` (monotonic), the wall clock at wake-up, and what an
 * absolute call passed. Extra fields follow: the caller ends the line. */
void waits_line(const char *probe, const char *call, int err, double start);

/* A call that could not even be set up (mq_open, semget...): one line. */
void waits_setup_failed(const char *probe, const char *call, const char *what, int err);

/* The run hook: every chosen call at once, each in its child; their lines
 * printed in table order. Returns 0 (every call was attempted). */
int waits_run(const struct probe *p, const struct probe_call *const *calls, size_t n);

#endif
