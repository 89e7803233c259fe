/* seedrng - make the guest kernel's random number generator ready at boot.
 *
 * usage: seedrng <64 hex digits>
 *        seedrng --list      the calls it prints (credits nothing)
 *
 * Credits the 256-bit seed to the kernel's pool with the RNDADDENTROPY
 * ioctl on /dev/urandom (root only), as systemd-random-seed and busybox
 * seedrng do on a real machine. The host picks the seed and passes it on
 * the kernel command line as y2038.seed=<hex>; /init hands it over.
 *
 * Why: a guest without a hardware RNG never gets its pool "ready", and
 * until it does, lib/vsprintf.c's fill_ptr_key_workfn() re-arms itself
 * every 2 s. That timer wakes the idle guest for good, which under time
 * warp (QEMU -icount sleep=off) makes guest time race ahead while the
 * guest waits for the host's next command.
 *
 * Prints one JSON line:
 *   {"probe":"seedrng","flavour":"native64","call":"seedrng","bits":256}
 *   {"probe":"seedrng","flavour":"native64","call":"seedrng","bits":256,"errno":"EPERM"}
 * Exit status: 0 credited, 1 the ioctl failed, 2 usage error.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define USAGE "usage: seedrng <64 hex digits>"
#define SEED_BYTES 32

struct seed {
	struct rand_pool_info info;     /* ends in a flexible array: buf below */
	unsigned char buf[SEED_BYTES];
};

struct request {
	struct seed seed;
	int failed;
};

static struct request request;

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void seedrng_run(void *ctx)
{
	struct request *r = ctx;
	int fd = open("/dev/urandom", O_RDWR | O_CLOEXEC);
	int err = 0;

	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &r->seed.info) != 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	probe_begin("seedrng", "seedrng");
	probe_i64("bits", r->seed.info.entropy_count);
	if (err)
		probe_str("errno", probe_errname(err));
	probe_end();
	r->failed = err != 0;
}

static int parse(const struct probe *p, int argc, char **argv)
{
	struct request *r = p->ctx;
	size_t i;

	if (argc != 2 || strlen(argv[1]) != 2 * SEED_BYTES)
		probe_usage("seedrng", USAGE);
	for (i = 0; i < SEED_BYTES; i++) {
		int high = hex_value(argv[1][2 * i]), low = hex_value(argv[1][2 * i + 1]);

		if (high < 0 || low < 0)
			probe_usage("seedrng", "the seed must be hex digits; " USAGE);
		r->seed.buf[i] = (unsigned char)(high << 4 | low);
	}
	r->seed.info.entropy_count = 8 * SEED_BYTES;
	r->seed.info.buf_size = SEED_BYTES;
	return 1;
}

static int failed(const struct probe *p)
{
	const struct request *r = p->ctx;

	return r->failed ? 1 : 0;
}

static const struct probe_call calls[] = {
	{ "seedrng", seedrng_run, NULL, 0 },
};

static const struct probe seedrng = {
	.name = "seedrng",
	.usage = USAGE,
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
	.ctx = &request,
	.parse = parse,
	.finish = failed,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &seedrng);
}
