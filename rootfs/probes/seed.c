/* seed.c - see seed.h. */
#define _GNU_SOURCE
#include "seed.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

int seed_parse(const char *hex, unsigned char seed[SEED_BYTES])
{
	size_t i;

	if (strlen(hex) != 2 * SEED_BYTES)
		return EINVAL;
	for (i = 0; i < SEED_BYTES; i++) {
		int high = hex_value(hex[2 * i]), low = hex_value(hex[2 * i + 1]);

		if (high < 0 || low < 0)
			return EINVAL;
		seed[i] = (unsigned char)(high << 4 | low);
	}
	return 0;
}

int seed_credit(const unsigned char seed[SEED_BYTES])
{
	struct {
		struct rand_pool_info info;     /* ends in a flexible array: buf below */
		unsigned char buf[SEED_BYTES];
	} request;
	int fd = open("/dev/urandom", O_RDWR | O_CLOEXEC);
	int err = 0;

	request.info.entropy_count = 8 * SEED_BYTES;
	request.info.buf_size = SEED_BYTES;
	memcpy(request.buf, seed, SEED_BYTES);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &request.info) != 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	return err;
}
