/* sockstamp - a socket's last packet time (SIOCGSTAMP, SIOCGSTAMPNS) in
 * the flavour's struct timeval and timespec: an ioctl, not a syscall, that
 * hands out a 32-bit time to old programs.
 *
 * usage: sockstamp [call...]
 *        sockstamp --list    the calls it prints (and nothing else: safe anywhere)
 *
 * One JSON line per call:
 *   {"probe":"sockstamp","flavour":"time32-syscall","call":"siocgstamp","seconds":-2147483626,"overrun":0}
 *   {"probe":"sockstamp","flavour":"time32-syscall","call":"siocgstampns","errno":"ENOTTY","overrun":0}
 *   {"probe":"sockstamp","flavour":"time32-libc","call":"status","time32_truncations":2}
 *
 * Each call opens a UDP socket on the loopback (brought up if it is down),
 * sends itself one datagram and receives it, so that the socket has a
 * packet time, then asks for it:
 *   time32-syscall  the ioctl numbers SIOCGSTAMP_OLD and SIOCGSTAMPNS_OLD
 *                   with the old 8-byte struct old_timeval32 and
 *                   old_timespec32, as glibc < 2.34 and klibc make them;
 *   others          the C library's SIOCGSTAMP and SIOCGSTAMPNS with its own
 *                   struct timeval and timespec: the _OLD numbers with a
 *                   32-bit time_t (time32-libc), the _NEW ones with a 64-bit
 *                   time_t on a 32-bit ABI (time64), and on a 64-bit ABI
 *                   the _OLD numbers, whose layout is 64-bit there.
 * The kernel answers in net/core/sock.c sock_gettstamp(), with the 32-bit
 * layout (put_old_timespec32(): a truncation the time32 policy counts)
 * for the _OLD numbers on a 32-bit kernel and for compat tasks on x86_64.
 *
 * seconds:  tv_sec of the answer (1901 for an old layout after 2038).
 * overrun:  how many of the 16 bytes right after the struct the kernel
 *           changed: 8 when it wrote a 64-bit timespec into the old 8-byte
 *           struct (a kernel built without COMPAT_32BIT_TIME, before
 *           kernel-series 0001), else 0. Printed whatever the call returned.
 * unstamped: (only when named) SIOCGSTAMP on a socket that has received
 *           nothing: ENOENT where the layout is served, ENOTTY where it is
 *           refused (the strict kernel; deny and trap): the kernel must
 *           refuse before it looks for a packet time (sock_gettstamp()).
 * status:   Time32_truncations from /proc/self/status ("absent" on a kernel
 *           without the time32 policy).
 * Exit status: 0 when every call was attempted, 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PROBE "sockstamp"
#define GUARD 0xa5
#define AFTER 16        /* guarded bytes after the struct */

#ifdef PROBE_TIME32_SYSCALL
#define STAMP_REQUEST 0x8906    /* SIOCGSTAMP_OLD */
#define STAMPNS_REQUEST 0x8907  /* SIOCGSTAMPNS_OLD */
typedef struct old_timeval32 stamp_t;
typedef struct old_timespec32 stampns_t;
#else
#define STAMP_REQUEST SIOCGSTAMP
#define STAMPNS_REQUEST SIOCGSTAMPNS
typedef struct timeval stamp_t;
typedef struct timespec stampns_t;
#endif

/* The loopback up, as the guest's init may leave it down (needs root). */
static void loopback_up(int fd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
}

/* A UDP socket that has received one datagram from itself, or -1 with
 * errno set. The datagram gives the socket a packet time: without one
 * the ioctls fail with ENOENT. */
static int stamped_socket(void)
{
	struct sockaddr_in self = { .sin_family = AF_INET };
	socklen_t len = sizeof(self);
	struct pollfd ready;
	char byte = 'x';
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -1;
	loopback_up(fd);
	self.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ready.fd = fd;
	ready.events = POLLIN;
	if (bind(fd, (struct sockaddr *)&self, sizeof(self)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&self, &len) < 0 ||
	    sendto(fd, &byte, 1, 0, (struct sockaddr *)&self, sizeof(self)) != 1)
		goto fail;
	if (poll(&ready, 1, 5000) != 1) {
		errno = ETIMEDOUT;
		goto fail;
	}
	if (recv(fd, &byte, 1, 0) == 1)
		return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* A UDP socket that has received nothing, or -1 with errno set. */
static int unstamped_socket(void)
{
	return socket(AF_INET, SOCK_DGRAM, 0);
}

/* Ask a socket of @open_socket for the time with @request into a struct
 * of @size (seconds first, as in every layout) followed by AFTER guard
 * bytes; print the line. */
static void ask(const char *call, int (*open_socket)(void), unsigned long request, size_t size)
{
	unsigned char buf[sizeof(stampns_t) + AFTER];
	long long seconds;
	int fd = open_socket(), err = 0, overrun = 0;
	size_t i;

	if (fd < 0) {
		if (errno == EAFNOSUPPORT)
			probe_absent(PROBE, call, "no IPv4 sockets in this kernel");
		else
			probe_errno(PROBE, call, errno);
		return;
	}
	memset(buf, GUARD, sizeof(buf));
	if (ioctl(fd, request, buf) < 0)
		err = errno;
	close(fd);
	for (i = size; i < size + AFTER; i++)
		overrun += buf[i] != GUARD;
	probe_begin(PROBE, call);
	if (err) {
		probe_str("errno", probe_errname(err));
	} else {
		if (sizeof(((stamp_t *)0)->tv_sec) == 4) {
			int32_t sec;

			memcpy(&sec, buf, sizeof(sec));
			seconds = sec;
		} else {
			int64_t sec;

			memcpy(&sec, buf, sizeof(sec));
			seconds = sec;
		}
		probe_i64("seconds", seconds);
	}
	probe_i64("overrun", overrun);
	probe_end();
}

static void siocgstamp_run(void *ctx)
{
	(void)ctx;
	ask("siocgstamp", stamped_socket, STAMP_REQUEST, sizeof(stamp_t));
}

static void siocgstampns_run(void *ctx)
{
	(void)ctx;
	ask("siocgstampns", stamped_socket, STAMPNS_REQUEST, sizeof(stampns_t));
}

static void unstamped_run(void *ctx)
{
	(void)ctx;
	ask("unstamped", unstamped_socket, STAMP_REQUEST, sizeof(stamp_t));
}

static void status_run(void *ctx)
{
	(void)ctx;
	probe_begin(PROBE, "status");
	probe_status_field("time32_truncations", "Time32_truncations");
	probe_end();
}

static const struct probe_call calls[] = {
	{ "siocgstamp",   siocgstamp_run,   NULL, 0 },
	{ "siocgstampns", siocgstampns_run, NULL, 0 },
	{ "status",       status_run,       NULL, 0 },
	{ "unstamped",    unstamped_run,    NULL, PROBE_NAMED_ONLY },
};

static const struct probe sockstamp = {
	.name = PROBE,
	.usage = "usage: sockstamp [call...]",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.select_calls = 1,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &sockstamp);
}
