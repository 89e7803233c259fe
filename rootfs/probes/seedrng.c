/* seedrng - make the guest kernel's random number generator ready at boot.
 *
 * usage: seedrng <64 hex digits>
 *        seedrng --list      the calls it prints (credits nothing)
 *
 * Credits the 256-bit seed to the kernel's pool with the RNDADDENTROPY
 * ioctl on /dev/urandom (root only), as systemd-random-seed and busybox
 * seedrng do on a real machine. The host picks the seed and passes it on
 * the kernel command line as y2038.seed=<hex>; /init credits it itself at
 * every boot (init.c, with the same seed.c); this tool does it on demand.
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
#include "seed.h"

#include <string.h>

#define USAGE "usage: seedrng <64 hex digits>"

struct request {
	unsigned char seed[SEED_BYTES];
	int failed;
};

static struct request request;

static void seedrng_run(void *ctx)
{
	struct request *r = ctx;
	int err = seed_credit(r->seed);

	probe_begin("seedrng", "seedrng");
	probe_i64("bits", 8 * SEED_BYTES);
	if (err)
		probe_str("errno", probe_errname(err));
	probe_end();
	r->failed = err != 0;
}

static int parse(const struct probe *p, int argc, char **argv)
{
	struct request *r = p->ctx;

	if (argc != 2 || strlen(argv[1]) != 2 * SEED_BYTES)
		probe_usage("seedrng", USAGE);
	if (seed_parse(argv[1], r->seed) != 0)
		probe_usage("seedrng", "the seed must be hex digits; " USAGE);
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
