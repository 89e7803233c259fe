/* kmsg.h - the kernel log (/dev/kmsg) as the probes read it: the records
 * logged since a probe started, and the time32 policy's call reports
 * (kernel-series 0021: "time32: <comm>[<pid>] tgid <tgid> exe <path>
 * called <name> (<verdict>)") about this program. */
#ifndef KMSG_H
#define KMSG_H

#include <stddef.h>

/* /dev/kmsg open non-blocking at its end (what is logged from now on),
 * or -1 when it cannot be read. */
int kmsg_open_at_end(void);

/* The text of the next record of /dev/kmsg open on @fd (non-blocking),
 * after the ';' that ends its prefix, or NULL when there is none left. */
const char *kmsg_next(int fd, char *record, size_t size);

/* This task's command name, as the kernel prints it (/proc/self/comm). */
void kmsg_own_comm(char *comm, size_t size);

/* The names of the calls the time32 policy reported since the last look
 * on @fd, from reports beginning with @prefix ("time32: <comm>["), joined
 * with '+'; "" when none (or @fd is -1). */
void kmsg_reported_calls(int fd, const char *prefix, char *names, size_t size);

#endif
