/* waits.c - what the waiting probes share (see waits.h). */
#define _GNU_SOURCE
#include "waits.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* An instrument clock read as 64-bit seconds and nanoseconds, whatever the
 * flavour's time_t: on a 32-bit ABI through clock_gettime64 (403). */
void waits_clock(clockid_t clock, long long *sec, long *nsec)
{
#if defined(__NR_clock_gettime64) && __SIZEOF_LONG__ == 4
	struct { long long tv_sec; long long tv_nsec; } ts = { 0, 0 };

	syscall(__NR_clock_gettime64, clock, &ts);
	*sec = ts.tv_sec;
	*nsec = (long)ts.tv_nsec;
#else
	struct timespec ts = { 0, 0 };

	clock_gettime(clock, &ts);
	*sec = (long long)ts.tv_sec;
	*nsec = ts.tv_nsec;
#endif
}

double waits_monotonic(void)
{
	long long sec;
	long nsec;

	waits_clock(CLOCK_MONOTONIC, &sec, &nsec);
	return (double)sec + nsec / 1e9;
}

double waits_realtime(void)
{
	long long sec;
	long nsec;

	waits_clock(CLOCK_REALTIME, &sec, &nsec);
	return (double)sec + nsec / 1e9;
}

/* "2147483649", "2038-01-19T03:14:09Z" or "+2" -> absolute seconds. */
int waits_parse_time(const char *text, long long now, long long *out)
{
	char *end;

	if (text[0] == '+') {
		errno = 0;
		*out = now + strtoll(text + 1, &end, 10);
		return text[1] != '\0' && *end == '\0' && errno == 0;
	}
	if (probe_parse_utc(text, out))
		return 1;
	errno = 0;
	*out = strtoll(text, &end, 10);
	return text[0] != '\0' && *end == '\0' && errno == 0;
}

/* "libc+N": N seconds from "now" as the flavour's C library reads
 * CLOCK_REALTIME (the instrument clock when that fails), as a program would
 * compute a deadline: under libfaketime that "now" is the faked one, while
 * the kernel's clock, which the waits are measured on, is not. The delay is
 * N whatever the two clocks say. */
static int waits_parse_libc(const struct probe *p, const char *plus_n, double now)
{
	struct waits_target *t = p->ctx;
	struct timespec ts;
	long long base = (long long)now, n;

	if (!waits_parse_time(plus_n, 0, &n) || n <= 0 || n > WAITS_MAX_DELAY)
		probe_usage(p->name, "libc+N: N seconds, 1 to " WAITS_MAX_DELAY_TEXT);
	if (clock_gettime(CLOCK_REALTIME, &ts) == 0)
		base = (long long)ts.tv_sec;
	t->seconds = base + n;
	t->delay = (double)n;
	return 1;
}

/* The target from argv[1] ("<probe> [target] [call...]") into the probe's
 * ctx; the words after it name the calls to run (probe_main()). */
int waits_parse(const struct probe *p, int argc, char **argv)
{
	struct waits_target *t = p->ctx;
	double now = waits_realtime();
	char fallback[16];
	const char *text = argc > 1 ? argv[1] : fallback;

	snprintf(fallback, sizeof(fallback), "+%d", WAITS_DEFAULT_DELAY);
	if (strncmp(text, "libc+", 5) == 0)
		return waits_parse_libc(p, text + 4, now);
	if (!waits_parse_time(text, (long long)now, &t->seconds))
		probe_usage(p->name, "target: expected seconds, YYYY-MM-DDTHH:MM:SSZ, +N or libc+N");
	t->delay = (double)t->seconds - now;
	if (t->delay <= 0.01)
		probe_usage(p->name, "the target is not in the future (the probe arms waits for it)");
	if (t->delay > WAITS_MAX_DELAY)
		probe_usage(p->name, "the target is more than " WAITS_MAX_DELAY_TEXT " away (is the clock set?)");
	return argc > 1 ? 1 : 0;
}

/* The relative timeout of a "relative" call: the delay, as a timespec of
 * the flavour's time_t (small: it fits in 32 bits). */
struct timespec waits_relative(const struct waits_target *t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t->delay;
	ts.tv_nsec = (long)((t->delay - (double)ts.tv_sec) * 1e9);
	return ts;
}

/* The absolute target as the flavour's timespec: a 32-bit time_t cannot hold
 * a time past 2038-01-19T03:14:07Z and wraps (to 1901), as it would in any
 * program that computes "now + n" in time_t. */
struct timespec waits_absolute(const struct waits_target *t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t->seconds;
	ts.tv_nsec = 0;
	return ts;
}

/* One line for a call that waited: errno when it failed (0: none), elapsed
 * since `start` (monotonic), the wall clock at wake-up, and what an
 * absolute call passed. Extra fields follow: the caller ends the line. */
void waits_line(const char *probe, const char *call, int err, double start)
{
	double elapsed = waits_monotonic() - start;

	probe_begin(probe, call);
	if (err)
		probe_str("errno", probe_errname(err));
	probe_f64("elapsed", elapsed);
	probe_i64("woke", (long long)waits_realtime());
}

/* A call that could not even be set up (mq_open, semget...): one line. */
void waits_setup_failed(const char *probe, const char *call, const char *what, int err)
{
	char text[128];

	snprintf(text, sizeof(text), "setup %s: %s", what, probe_errname(err));
	probe_begin(probe, call);
	probe_str("outcome", text);
	probe_end();
}

/* How long the parent sleeps between looks at its children. Before the
 * target: a two-hundredth of the delay (at least 20 ms), so that a day-long
 * wait under time warp wakes the idle guest a few hundred times rather than
 * four million, but never past 50 ms after the target, when the children
 * are due: the parent sees them then, in every run alike. After it: 20 ms,
 * never past the moment the parent gives up. */
static struct timespec waits_nap(double delay, double to_target, double to_give_up)
{
	double nap = to_target > 0 && delay / 200 > 0.02 ? delay / 200 : 0.02;
	struct timespec ts;

	if (to_target + 0.05 > 0 && nap > to_target + 0.05)
		nap = to_target + 0.05;
	if (nap > to_give_up)
		nap = to_give_up > 0 ? to_give_up : 0;
	ts.tv_sec = (time_t)nap;
	ts.tv_nsec = (long)((nap - (double)ts.tv_sec) * 1e9);
	return ts;
}

/* Run every call at once, each in its child; print their lines in table
 * order. Returns 0 (every call was attempted). */
int waits_run(const struct probe *p, const struct probe_call *const *calls, size_t n)
{
	const struct waits_target *t = p->ctx;
	const char *probe = p->name;
	pid_t pids[WAITS_MAX_CALLS];
	int fds[WAITS_MAX_CALLS], status[WAITS_MAX_CALLS], done[WAITS_MAX_CALLS];
	double due = waits_monotonic() + t->delay, give_up = due + WAITS_GRACE;
	size_t i, left = n;
	char buf[4096];
	ssize_t got;

	if (n > WAITS_MAX_CALLS)
		probe_usage(probe, "too many calls");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		int ends[2];

		if (pipe(ends) != 0) {
			perror("pipe");
			exit(1);
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			exit(1);
		}
		if (pids[i] == 0) {
			close(ends[0]);
			dup2(ends[1], STDOUT_FILENO);
			close(ends[1]);
			calls[i]->run(p->ctx);
			fflush(stdout);
			_exit(0);
		}
		close(ends[1]);
		fds[i] = ends[0];
		done[i] = 0;
		status[i] = 0;
	}
	for (;;) {
		double now = waits_monotonic();
		struct timespec nap = waits_nap(t->delay, due - now, give_up - now);

		for (i = 0; i < n; i++)
			if (!done[i] && waitpid(pids[i], &status[i], WNOHANG) == pids[i]) {
				done[i] = 1;
				left--;
			}
		if (left == 0 || now >= give_up)
			break;
		nanosleep(&nap, NULL);
	}
	for (i = 0; i < n; i++) {
		int killed = !done[i];

		if (killed) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status[i], 0);
		}
		while ((got = read(fds[i], buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)got, stdout);
		close(fds[i]);
		if (killed || !WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0) {
			probe_begin(probe, calls[i]->name);
			if (killed)
				snprintf(buf, sizeof(buf), "killed: no wake-up %.0f s after the target",
				         WAITS_GRACE);
			else if (WIFSIGNALED(status[i]))
				snprintf(buf, sizeof(buf), "died of signal %d", WTERMSIG(status[i]));
			else
				snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(status[i]));
			probe_str("outcome", buf);
			probe_end();
		}
	}
	fflush(stdout);
	return 0;
}

int waits_main(int argc, char **argv, const char *name,
               const struct probe_call *calls, size_t ncalls)
{
	static struct waits_target target;
	static char usage[128];
	struct probe probe = {
		.name = name,
		.usage = usage,
		.calls = calls,
		.ncalls = ncalls,
		.ctx = &target,
		.select_calls = 1,
		.parse = waits_parse,
		.run = waits_run,
	};

	snprintf(usage, sizeof(usage), "usage: %s " WAITS_USAGE, name);
	return probe_main(argc, argv, &probe);
}
