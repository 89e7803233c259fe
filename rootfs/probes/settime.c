/* settime - set CLOCK_REALTIME from a 64-bit time_t program.
 *
 * usage: settime <unix-seconds> [settimeofday|clock_settime]
 *        (default settimeofday; nanoseconds/microseconds are set to 0)
 *
 * Prints one JSON line:
 *   {"probe":"settime","flavour":"native64","call":"settimeofday","seconds":2147483640}
 *   {"probe":"settime","flavour":"native64","call":"settimeofday","seconds":9999999999999,"errno":"EINVAL"}
 * Exit status: 0 when the clock was set, 1 when the call failed, 2 on usage
 * errors (one line on stderr, nothing on stdout).
 */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

_Static_assert(sizeof(time_t) == 8, "settime needs a 64-bit time_t (native64 or time64 build)");

#define USAGE "usage: settime <unix-seconds> [settimeofday|clock_settime]"

int main(int argc, char **argv)
{
	const char *call = "settimeofday";
	char *end;
	long long seconds;
	int ret, err;

	if (argc < 2 || argc > 3)
		probe_usage("settime", USAGE);
	errno = 0;
	seconds = strtoll(argv[1], &end, 10);
	if (argv[1][0] == '\0' || *end != '\0')
		probe_usage("settime", "seconds must be a decimal integer; " USAGE);
	if (errno == ERANGE)
		probe_usage("settime", "seconds out of range for a 64-bit time_t");
	if (argc == 3)
		call = argv[2];

	if (strcmp(call, "settimeofday") == 0) {
		struct timeval tv = { .tv_sec = (time_t)seconds, .tv_usec = 0 };
		ret = settimeofday(&tv, NULL);
	} else if (strcmp(call, "clock_settime") == 0) {
		struct timespec ts = { .tv_sec = (time_t)seconds, .tv_nsec = 0 };
		ret = clock_settime(CLOCK_REALTIME, &ts);
	} else {
		probe_usage("settime", "unknown call; " USAGE);
	}

	err = ret != 0 ? errno : 0;   /* before stdio can touch errno */

	probe_begin("settime", call);
	probe_i64("seconds", seconds);
	if (err)
		probe_str("errno", probe_errname(err));
	probe_end();
	return err ? 1 : 0;
}
