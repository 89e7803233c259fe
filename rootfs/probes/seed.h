/* seed.h - the host's seed for the guest kernel's random pool: parsed from
 * hex and credited with RNDADDENTROPY (seed.c). Used by /init (init.c) at
 * every boot and by the seedrng tool (seedrng.c). */
#ifndef Y2038_SEED_H
#define Y2038_SEED_H

#define SEED_BYTES 32

/* 0, or EINVAL when hex is not SEED_BYTES * 2 hex digits. */
int seed_parse(const char *hex, unsigned char seed[SEED_BYTES]);

/* Credits the SEED_BYTES * 8 bits to the pool (root only): 0 or an errno. */
int seed_credit(const unsigned char seed[SEED_BYTES]);

#endif
