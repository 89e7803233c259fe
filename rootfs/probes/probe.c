/* probe.c - JSON line output for the y2038 sandbox probes (see probe.h). */
#define _GNU_SOURCE
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int probe_line_open;

static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void put_key(const char *key)
{
	putchar(',');
	put_json_string(key);
	putchar(':');
}

void probe_begin(const char *probe, const char *call)
{
	if (probe_line_open)
		probe_end();
	probe_line_open = 1;
	fputs("{\"probe\":", stdout);
	put_json_string(probe);
	put_key("flavour");
	put_json_string(PROBE_FLAVOUR);
	put_key("call");
	put_json_string(call);
}

void probe_i64(const char *key, long long value)
{
	put_key(key);
	printf("%lld", value);
}

void probe_str(const char *key, const char *value)
{
	put_key(key);
	put_json_string(value);
}

void probe_f64(const char *key, double seconds)
{
	put_key(key);
	printf("%.6f", seconds);
}

void probe_number(const char *key, double value)
{
	put_key(key);
	printf("%g", value);
}

void probe_end(void)
{
	fputs("}\n", stdout);
	fflush(stdout);
	probe_line_open = 0;
}

const char *probe_errname(int err)
{
	static char buf[24];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

void probe_errno(const char *probe, const char *call, int err)
{
	probe_begin(probe, call);
	probe_str("errno", probe_errname(err));
	probe_end();
}

void probe_absent(const char *probe, const char *call, const char *why)
{
	probe_begin(probe, call);
	probe_str("errno", probe_errname(ENOSYS));
	probe_str("absent", why);
	probe_end();
}

long long probe_status_number(const char *key)
{
	char line[256];
	long long value = -1;
	size_t len = strlen(key);
	FILE *status = fopen("/proc/self/status", "r");

	while (status && fgets(line, sizeof(line), status))
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			value = strtoll(line + len + 1, NULL, 10);
	if (status)
		fclose(status);
	return value;
}

void probe_status_field(const char *field, const char *key)
{
	long long value = probe_status_number(key);

	if (value < 0)
		probe_str(field, "absent");
	else
		probe_i64(field, value);
}

void probe_usage(const char *prog, const char *message)
{
	fprintf(stderr, "%s: %s\n", prog, message);
	exit(2);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (as sandbox/base/timefmt.py). */
static long long days_from_civil(long long y, int m, int d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The proleptic Gregorian rule (as sandbox/base/timefmt.py is_leap()). */
static int is_leap(long long y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

int probe_parse_utc(const char *text, long long *seconds)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long long y;
	int mo, d, h, mi, s, n = 0;

	if (sscanf(text, "%lld-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6)
		return 0;
	if (strcmp(text + n, "") != 0 && strcmp(text + n, "Z") != 0)
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59)
		return 0;
	if (d > mdays[mo - 1] + (mo == 2 && is_leap(y)))
		return 0;
	*seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	return 1;
}

/* ---- probe_main ------------------------------------------------------- */

const struct probe_call *probe_find_call(const struct probe *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ncalls; i++)
		if (strcmp(name, p->calls[i].name) == 0)
			return &p->calls[i];
	return NULL;
}

static void list_calls(const struct probe *p)
{
	const char *const *name;
	size_t i;

	for (i = 0; i < p->ncalls; i++) {
		if (!p->calls[i].prints) {
			puts(p->calls[i].name);
			continue;
		}
		for (name = p->calls[i].prints; *name; name++)
			puts(*name);
	}
}

/* "'<word>' is not a call (expected a, b or c)", then exit 2. */
static void unknown_call(const struct probe *p, const char *word)
{
	char message[1024];
	size_t used, i;

	used = (size_t)snprintf(message, sizeof(message), "'%s' is not a call (expected ", word);
	for (i = 0; i < p->ncalls && used < sizeof(message); i++)
		used += (size_t)snprintf(message + used, sizeof(message) - used, "%s%s",
		                         i == 0 ? "" : i + 1 == p->ncalls ? " or " : ", ",
		                         p->calls[i].name);
	if (used < sizeof(message))
		snprintf(message + used, sizeof(message) - used, ")");
	probe_usage(p->name, message);
}

int probe_main(int argc, char **argv, const struct probe *p)
{
	const struct probe_call **chosen;
	size_t n = 0, i;
	int first = 1, a, status = 0, done;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		list_calls(p);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (p->command)
		return p->command(p, argc, argv);
	if (p->parse)
		first += p->parse(p, argc, argv);
	if (first < argc && !p->select_calls)
		probe_usage(p->name, p->usage);
	chosen = calloc((size_t)argc + p->ncalls, sizeof(*chosen));
	if (!chosen) {
		perror(p->name);
		return 1;
	}
	/* Check every name before running anything. */
	for (a = first; a < argc; a++) {
		if (!(chosen[n++] = probe_find_call(p, argv[a])))
			unknown_call(p, argv[a]);
	}
	if (n == 0)
		for (i = 0; i < p->ncalls; i++)
			if (!(p->calls[i].flags & PROBE_NAMED_ONLY))
				chosen[n++] = &p->calls[i];
	if (p->prepare && (status = p->prepare(p, chosen, n)) != 0) {
		free(chosen);
		return status;
	}
	if (p->run)
		status = p->run(p, chosen, n);
	else
		for (i = 0; i < n; i++)
			chosen[i]->run(p->ctx);
	if (p->finish && (done = p->finish(p)) != 0 && status == 0)
		status = done;
	free(chosen);
	return status;
}
