/* rtc - did the kernel set the system clock from the RTC at boot?
 *
 * usage: rtc
 *        rtc --list       the calls it prints
 *
 * Three JSON lines, read in this order:
 *   {"probe":"rtc","flavour":"time64","call":"hctosys","value":1}
 *       /sys/class/rtc/rtc0/hctosys: 1 when rtc_hctosys() (drivers/rtc/
 *       class.c) set the system clock from this RTC at boot, else 0
 *   {"probe":"rtc","flavour":"time64","call":"since_epoch","seconds":2147558401}
 *       /sys/class/rtc/rtc0/since_epoch: what the RTC reads now
 *   {"probe":"rtc","flavour":"time64","call":"clock_gettime","seconds":2147558402}
 *       CLOCK_REALTIME, the system clock
 * A file that cannot be read gives "errno" for its line.
 *
 * Meant for the 64-bit time_t flavours (time64, native64: see
 * rootfs/manifest.toml); it builds in every flavour because the Makefile
 * builds every probe in every flavour.
 * Exit status: 0 (a failed read is an observation), 2 on usage errors.
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#define RTC_SYSFS "/sys/class/rtc/rtc0/"

/* Reads one decimal number from a sysfs file; 0 or an errno. */
static int read_number(const char *path, long long *value)
{
	FILE *file = fopen(path, "r");
	int err = 0;

	if (!file)
		return errno;
	if (fscanf(file, "%lld", value) != 1)
		err = ferror(file) ? errno : EINVAL;
	fclose(file);
	return err;
}

static void report_file(const char *call, const char *path, const char *field)
{
	long long value = 0;
	int err = read_number(path, &value);

	if (err) {
		probe_errno("rtc", call, err);
		return;
	}
	probe_begin("rtc", call);
	probe_i64(field, value);
	probe_end();
}

static void hctosys_run(void *ctx)
{
	(void)ctx;
	report_file("hctosys", RTC_SYSFS "hctosys", PROBE_KEY("value"));
}

static void since_epoch_run(void *ctx)
{
	(void)ctx;
	report_file("since_epoch", RTC_SYSFS "since_epoch", PROBE_KEY("seconds"));
}

static void clock_gettime_run(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		probe_errno("rtc", "clock_gettime", errno);
		return;
	}
	probe_begin("rtc", "clock_gettime");
	probe_i64("seconds", (long long)ts.tv_sec);
	probe_end();
}

static const struct probe_call calls[] = {
	{ "hctosys",       hctosys_run,       NULL, 0 },
	{ "since_epoch",   since_epoch_run,   NULL, 0 },
	{ "clock_gettime", clock_gettime_run, NULL, 0 },
};

static const struct probe rtc = {
	.name = "rtc",
	.usage = "usage: rtc (no arguments)",
	.calls = calls,
	.ncalls = PROBE_COUNT(calls),
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &rtc);
}
