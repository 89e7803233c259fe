/* probe.h - shared helpers for the y2038 sandbox probes.
 *
 * Every probe prints one JSON object per line on stdout, for example
 *   {"probe":"clock","flavour":"time32-syscall","call":"time","seconds":-2147483620}
 *   {"probe":"clock","flavour":"time32-libc","call":"time","errno":"EOVERFLOW"}
 *
 * The flavour is compiled in by rootfs/Makefile:
 *   -DPROBE_FLAVOUR="time32-libc"   the flavour name printed in every line
 *   -DPROBE_TIME_BITS=32|64         the time_t width the flavour must have
 *   -DPROBE_TIME32_SYSCALL          call the legacy 32-bit syscalls directly
 *
 * Usage:
 *   probe_begin("clock", "time");
 *   probe_i64("seconds", t);
 *   probe_end();
 * or, when the call failed:
 *   probe_errno("clock", "time", errno);
 */
#ifndef PROBE_H
#define PROBE_H

#include <time.h>

#ifndef PROBE_FLAVOUR
#error "build with -DPROBE_FLAVOUR=\"<flavour>\" (see rootfs/Makefile)"
#endif

/* A flavour built with the wrong flags would give plausible but wrong
 * observations: refuse to compile instead. */
#ifdef PROBE_TIME_BITS
_Static_assert(sizeof(time_t) * 8 == PROBE_TIME_BITS,
               "time_t width does not match the flavour (check the Makefile flags)");
#endif
#if defined(PROBE_TIME32_SYSCALL) && __SIZEOF_LONG__ != 4
#error "PROBE_TIME32_SYSCALL needs a 32-bit ABI (-m32 or a 32-bit compiler)"
#endif

/* Start a line: {"probe":...,"flavour":...,"call":... */
void probe_begin(const char *probe, const char *call);
/* Add an integer field; printed signed. */
void probe_i64(const char *key, long long value);
/* Add a string field. */
void probe_str(const char *key, const char *value);
/* Add a seconds field with microsecond digits ("elapsed":2.000131). */
void probe_f64(const char *key, double seconds);
/* Close the line and flush it. */
void probe_end(void);

/* One whole line reporting a failed call: "errno":"EOVERFLOW". */
void probe_errno(const char *probe, const char *call, int err);

/* The symbolic name of an errno value ("EOVERFLOW"); "E<number>" if glibc
 * does not know it. The result is valid until the next call. */
const char *probe_errname(int err);

/* A UTC time written YYYY-MM-DDTHH:MM:SS[Z], any year, as seconds since the
 * epoch in 64 bits whatever the flavour's time_t (the libc's timegm() stops
 * at 2038 in the 32-bit flavours). Returns 0 if TEXT is not such a time. */
int probe_parse_utc(const char *text, long long *seconds);

/* Print "<prog>: <message>" on stderr and exit 2 (usage error). */
void probe_usage(const char *prog, const char *message) __attribute__((noreturn));

#endif
