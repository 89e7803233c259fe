/* devtime - the device ioctls that pass a time_t, in the flavour's layout:
 * v4l2's buffer and event ioctls, ppdev's and lp's timeouts. What the
 * kernel's time32 policy (kernel.time32_syscalls, kernel-series 0025-0026)
 * made of each.
 *
 * usage: devtime [call...]
 *        devtime --list    the calls it prints (and nothing else: safe anywhere)
 *
 * One JSON line per call, then the task's count:
 *   {"probe":"devtime","flavour":"time32-libc","call":"video_qbuf","errno":"ENOTTY",
 *    "reported_as":"VIDIOC_QBUF_TIME32"}
 *   {"probe":"devtime","flavour":"time32-libc","call":"pp_timeout","timeout":2,
 *    "reported_as":"PPSETTIME32+PPGETTIME32"}
 *   {"probe":"devtime","flavour":"time64","call":"lp_settimeout"}
 *   {"probe":"devtime","flavour":"time32-libc","call":"status","time32_syscalls":8}
 *
 * errno: the ioctl's error, absent when it was served.
 * Every flavour uses the uapi headers' numbers, which follow the C
 * library's time_t: with a 32-bit time_t (time32-syscall, time32-libc) the
 * old layouts (VIDIOC_QBUF is VIDIOC_QBUF_TIME32, PPSETTIME is
 * PPSETTIME32, LPSETTIMEOUT is LPSETTIMEOUT_OLD), as glibc 2.36 programs
 * built with 32-bit time_t make them; with a 64-bit time_t the new ones.
 * On x86_64 the 32-bit flavours reach the compat forms of the same calls.
 *
 * video_*:  /dev/video0 (vim2m, a v4l2 test device the kernel registers
 *           itself), each ioctl once with a zeroed struct: no buffers are
 *           queued, so an allowed call fails with the driver's own error
 *           (EINVAL, or ENOENT for VIDIOC_DQEVENT without events) and a
 *           denied one with ENOTTY, as on a kernel without
 *           COMPAT_32BIT_TIME.
 * pp_timeout: /dev/parport0 claimed (PPCLAIM), its timeout set to 2 s
 *           (PPSETTIME) and read back (PPGETTIME, "timeout").
 * lp_settimeout: /dev/lp0 (opened O_NONBLOCK: no printer answers), its
 *           timeout set to 3 s.
 * reported_as: the calls the policy's call reports named while the call
 *           ran (kmsg.h); absent under allow, and for the new layouts.
 * A device this kernel or machine does not have is "absent" (no parallel
 * port on armhf).
 * status:   "Time32_syscalls:" from /proc/self/status, or "absent".
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "kmsg.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/lp.h>
#include <linux/ppdev.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#define PROBE "devtime"

static int kmsg_fd = -1;
static char report_prefix[64];

struct outcome {
	const char *absent;     /* why the call was not made, else NULL */
	int err;                /* errno of the ioctl, else 0 */
	int has_timeout;
	long long timeout;      /* pp_timeout: the seconds read back */
};

/* @path opened with @flags, or -1 with @o->absent or @o->err set. */
static int open_device(const char *path, int flags, struct outcome *o)
{
	int fd = open(path, flags);

	if (fd < 0 && (errno == ENOENT || errno == ENXIO || errno == ENODEV))
		o->absent = "no such device in this guest";
	else if (fd < 0)
		o->err = errno;
	return fd;
}

/* One v4l2 ioctl with a zeroed @arg of @size bytes on /dev/video0. */
static void video_ioctl(struct outcome *o, unsigned long request, void *arg, size_t size)
{
	int fd = open_device("/dev/video0", O_RDWR | O_NONBLOCK, o);

	if (fd < 0)
		return;
	memset(arg, 0, size);
	if (ioctl(fd, request, arg) < 0)
		o->err = errno;
	close(fd);
}

static void video_buffer_ioctl(struct outcome *o, unsigned long request)
{
	struct v4l2_buffer buffer;

	video_ioctl(o, request, &buffer, sizeof(buffer));
}

static void video_querybuf(struct outcome *o) { video_buffer_ioctl(o, VIDIOC_QUERYBUF); }
static void video_qbuf(struct outcome *o) { video_buffer_ioctl(o, VIDIOC_QBUF); }
static void video_dqbuf(struct outcome *o) { video_buffer_ioctl(o, VIDIOC_DQBUF); }
static void video_prepare_buf(struct outcome *o) { video_buffer_ioctl(o, VIDIOC_PREPARE_BUF); }

static void video_dqevent(struct outcome *o)
{
	struct v4l2_event event;

	video_ioctl(o, VIDIOC_DQEVENT, &event, sizeof(event));
}

/* /dev/parport0 claimed, its timeout set to 2 s and read back. A
 * timeout belongs to the claim (each open has its own), so both ioctls go
 * through one open. */
static void pp_timeout(struct outcome *o)
{
	struct timeval two = { .tv_sec = 2 }, read_back = { 0 };
	int fd = open_device("/dev/parport0", O_RDWR, o);

	if (fd < 0)
		return;
	if (ioctl(fd, PPCLAIM) < 0) {
		o->err = errno;
	} else {
		if (ioctl(fd, PPSETTIME, &two) < 0 || ioctl(fd, PPGETTIME, &read_back) < 0) {
			o->err = errno;
		} else {
			o->has_timeout = 1;
			o->timeout = read_back.tv_sec;
		}
		ioctl(fd, PPRELEASE);
	}
	close(fd);
}

static void lp_settimeout(struct outcome *o)
{
	struct timeval three = { .tv_sec = 3 };
	int fd = open_device("/dev/lp0", O_WRONLY | O_NONBLOCK, o);

	if (fd < 0)
		return;
	if (ioctl(fd, LPSETTIMEOUT, &three) < 0)
		o->err = errno;
	close(fd);
}

static void run_call(const char *call, void (*make)(struct outcome *))
{
	struct outcome o = { 0 };
	char reported_as[256];

	make(&o);
	kmsg_reported_calls(kmsg_fd, report_prefix, reported_as, sizeof(reported_as));
	if (o.absent) {
		probe_absent(PROBE, call, o.absent);
		return;
	}
	probe_begin(PROBE, call);
	if (o.err)
		probe_str("errno", probe_errname(o.err));
	if (o.has_timeout)
		probe_i64("timeout", o.timeout);
	if (reported_as[0])
		probe_str("reported_as", reported_as);
	probe_end();
}

#define CALL(name) \
	static void name##_run(void *ctx) { (void)ctx; run_call(#name, name); }
CALL(video_querybuf)
CALL(video_qbuf)
CALL(video_dqbuf)
CALL(video_prepare_buf)
CALL(video_dqevent)
CALL(pp_timeout)
CALL(lp_settimeout)

static void status_run(void *ctx)
{
	(void)ctx;
	probe_begin(PROBE, "status");
	probe_status_field("time32_syscalls", "Time32_syscalls");
	probe_end();
}

static int prepare(const struct probe *p, const struct probe_call *const *run, size_t n)
{
	char comm[32];

	(void)p, (void)run, (void)n;
	kmsg_own_comm(comm, sizeof(comm));
	snprintf(report_prefix, sizeof(report_prefix), "time32: %s[", comm);
	kmsg_fd = kmsg_open_at_end();
	return 0;
}

static int finish(const struct probe *p)
{
	(void)p;
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	return 0;
}

#define ENTRY(name) { #name, name##_run, NULL, 0 }
static const struct probe_call calls[] = {
	ENTRY(video_querybuf),
	ENTRY(video_qbuf),
	ENTRY(video_dqbuf),
	ENTRY(video_prepare_buf),
	ENTRY(video_dqevent),
	ENTRY(pp_timeout),
	ENTRY(lp_settimeout),
	{ "status", status_run, NULL, 0 },
};

static const struct probe devtime = {
	.name = PROBE,
	.usage = "usage: devtime [call...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
	.prepare = prepare,
	.finish = finish,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &devtime);
}
