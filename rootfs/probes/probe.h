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
 * or, when this ABI or C library has no such call:
 *   probe_absent("clock", "time", PROBE_NO_SYSCALL);
 *
 * A probe's main() is one call of probe_main() with its description: its
 * name, its table of calls and how its arguments are read (struct probe,
 * below). probe_main() also answers `<probe> --list`.
 */
#ifndef PROBE_H
#define PROBE_H

#include <stddef.h>
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
/* Add a number field in its shortest form, %g ("requested":2.5). */
void probe_number(const char *key, double value);
/* Close the line and flush it. */
void probe_end(void);

/* A field key written where a helper passes it on to one of the functions
 * above: probe_i64(key, ...) in the helper, PROBE_KEY("seconds") at the
 * call. The manifest test (pytest/unit/test_probe_calls.py) reads the keys
 * of a probe's source in these two forms. */
#define PROBE_KEY(key) key

/* One whole line reporting a failed call: "errno":"EOVERFLOW". */
void probe_errno(const char *probe, const char *call, int err);

/* One whole line for a call this ABI or C library does not have, so that
 * nothing was called: "errno":"ENOSYS" (what the kernel answers for a
 * syscall number it does not have) and "absent":<why>. */
void probe_absent(const char *probe, const char *call, const char *why);
#define PROBE_NO_SYSCALL "no such syscall on this ABI"
#define PROBE_NO_LIBC_CALL "no C library call for it"

/* The symbolic name of an errno value ("EOVERFLOW"); "E<number>" if glibc
 * does not know it. The result is valid until the next call. */
const char *probe_errname(int err);

/* A UTC time written YYYY-MM-DDTHH:MM:SS[Z], any year, as seconds since the
 * epoch in 64 bits whatever the flavour's time_t (the libc's timegm() stops
 * at 2038 in the 32-bit flavours). Returns 0 if TEXT is not such a time. */
int probe_parse_utc(const char *text, long long *seconds);

/* The number after "<key>:" in /proc/self/status ("Time32_truncations"),
 * or -1 when the kernel prints no such line. */
long long probe_status_number(const char *key);

/* Within a line: "<field>": that number, or "absent" without the line. */
void probe_status_field(const char *field, const char *key);

/* Print "<prog>: <message>" on stderr and exit 2 (usage error). */
void probe_usage(const char *prog, const char *message) __attribute__((noreturn));

/* ---- a probe described by data ----------------------------------------
 *
 * The command line is `<probe> [argument...] [call...]`: probe.parse reads
 * the probe's own leading arguments, the words after them name calls of the
 * table (when probe.select_calls), run in the order given; with no call
 * named, every call not marked PROBE_NAMED_ONLY runs, in table order.
 * Every word is checked before anything runs: a bad one is a usage error
 * (exit 2). `<probe> --list` alone prints the call names this binary can
 * print, one per line, and exits 0 without calling anything.
 */
struct probe;

struct probe_call {
	const char *name;               /* its name in argv, and its line's "call" */
	void (*run)(void *ctx);         /* print its line(s); ctx is probe.ctx */
	const char *const *prints;      /* the calls its lines name, when not just
	                                 * `name` (NULL-terminated; PROBE_PRINTS) */
	unsigned flags;                 /* PROBE_NAMED_ONLY, and the probe's own */
};
#define PROBE_PRINTS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define PROBE_NAMED_ONLY 1u             /* runs only when named in argv */
#define PROBE_FLAG_OWN 0x100u           /* from this bit on: the probe's own flags */

struct probe {
	const char *name;               /* the "probe" of every line */
	const char *usage;              /* "usage: clock [call...]" */
	const struct probe_call *calls;
	size_t ncalls;
	int select_calls;               /* the words after the arguments name calls */
	void *ctx;                      /* handed to every hook and call */
	/* The probe's leading arguments, argv[1] on: returns how many it took.
	 * NULL: none. Calls probe_usage() on a malformed one. */
	int (*parse)(const struct probe *p, int argc, char **argv);
	/* After every argument was checked, before any call runs: an exit
	 * status, 0 to go on. NULL: nothing to do. */
	int (*prepare)(const struct probe *p, const struct probe_call *const *run, size_t n);
	/* Runs the chosen calls. NULL: one after the other, in order. */
	int (*run)(const struct probe *p, const struct probe_call *const *run, size_t n);
	/* After the calls ran: an exit status. NULL: 0. */
	int (*finish)(const struct probe *p);
	/* A tool whose command line is not `[argument...] [call...]` reads it
	 * itself: probe_main() answers --list, then hands over to this. */
	int (*command)(const struct probe *p, int argc, char **argv);
};
#define PROBE_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* The call of that name in the table, or NULL. */
const struct probe_call *probe_find_call(const struct probe *p, const char *name);

/* Read argv as described by *p, run the calls: the exit status of main(). */
int probe_main(int argc, char **argv, const struct probe *p);

#endif
