/* mqueue - POSIX message queue waits with an absolute timeout past 2038.
 *
 * usage: mqueue [target]      (target: see waits.h; default "+2")
 *
 * All at once, each in its own process (waits.h):
 *   mq_timedsend     on a full queue (mq_maxmsg 1, one message in it), with
 *                    the absolute CLOCK_REALTIME timeout `target`
 *   mq_timedreceive  on an empty queue, same timeout
 *
 * One JSON line per call: the errno (ETIMEDOUT when the timeout passed),
 * elapsed (s, CLOCK_MONOTONIC), woke (epoch s) and tv_sec (the timeout as
 * the flavour's time_t holds it), e.g.
 *   {"probe":"mqueue","flavour":"time64","call":"mq_timedsend","errno":"ETIMEDOUT","elapsed":2.95,"woke":2147483649,"tv_sec":2147483649}
 *
 * Variants: time32-syscall calls the legacy syscalls (__NR_mq_timedsend,
 * __NR_mq_timedreceive) with a 32-bit timespec; the other flavours call
 * glibc's mq_timedsend() / mq_timedreceive(). The queues are opened through
 * glibc in every flavour (mq_open carries no time).
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "waits.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>
#include <mqueue.h>

#define PROBE "mqueue"
#define MSG_SIZE 16

#ifdef PROBE_TIME32_SYSCALL
static int timedsend_sys32(mqd_t q, const struct waits_target *t, long long *tv_sec)
{
	struct old_timespec32 ts = { (int32_t)t->seconds, 0 };

	*tv_sec = ts.tv_sec;
	return syscall(__NR_mq_timedsend, q, "y2038", 5, 0, &ts) ? errno : 0;
}

static int timedreceive_sys32(mqd_t q, const struct waits_target *t, long long *tv_sec)
{
	struct old_timespec32 ts = { (int32_t)t->seconds, 0 };
	char buf[MSG_SIZE];

	*tv_sec = ts.tv_sec;
	return syscall(__NR_mq_timedreceive, q, buf, sizeof(buf), NULL, &ts) < 0 ? errno : 0;
}
#define VARIANT(name) name##_sys32

#else /* libc API */

static int timedsend_libc(mqd_t q, const struct waits_target *t, long long *tv_sec)
{
	struct timespec ts = waits_absolute(t);

	*tv_sec = (long long)ts.tv_sec;
	return mq_timedsend(q, "y2038", 5, 0, &ts) ? errno : 0;
}

static int timedreceive_libc(mqd_t q, const struct waits_target *t, long long *tv_sec)
{
	struct timespec ts = waits_absolute(t);
	char buf[MSG_SIZE];

	*tv_sec = (long long)ts.tv_sec;
	return mq_timedreceive(q, buf, sizeof(buf), NULL, &ts) < 0 ? errno : 0;
}
#define VARIANT(name) name##_libc
#endif

/* A fresh queue of one message of MSG_SIZE bytes, unlinked at once (the
 * descriptor keeps it alive); full: with its one message sent. */
static mqd_t open_queue(const char *probe, const char *call, int full)
{
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = MSG_SIZE };
	char name[64];
	mqd_t q;

	snprintf(name, sizeof(name), "/y2038-%s-%d", call, (int)getpid());
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	if (q == (mqd_t)-1) {
		waits_setup_failed(probe, call, "mq_open", errno);
		return q;
	}
	mq_unlink(name);
	if (full && mq_send(q, "full", 4, 0) != 0) {
		waits_setup_failed(probe, call, "mq_send", errno);
		mq_close(q);
		return (mqd_t)-1;
	}
	return q;
}

static void run(const char *probe, const char *call, int full,
                int (*wait)(mqd_t, const struct waits_target *, long long *),
                const struct waits_target *t)
{
	mqd_t q = open_queue(probe, call, full);
	long long tv_sec = 0;
	double start;
	int err;

	if (q == (mqd_t)-1)
		return;
	start = waits_monotonic();
	err = wait(q, t, &tv_sec);
	waits_line(probe, call, err, start);
	probe_i64("tv_sec", tv_sec);
	probe_end();
	mq_close(q);
}

static void run_send(void *ctx)
{
	run(PROBE, "mq_timedsend", 1, VARIANT(timedsend), ctx);
}

static void run_receive(void *ctx)
{
	run(PROBE, "mq_timedreceive", 0, VARIANT(timedreceive), ctx);
}

static const struct probe_call calls[] = {
	{ "mq_timedsend",    run_send,    NULL, 0 },
	{ "mq_timedreceive", run_receive, NULL, 0 },
};

int main(int argc, char **argv)
{
	return waits_main(argc, argv, PROBE, calls, PROBE_COUNT(calls));
}
