/* probe.c - JSON line output for the y2038 sandbox probes (see probe.h). */
#define _GNU_SOURCE
#include "probe.h"

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

void probe_usage(const char *prog, const char *message)
{
	fprintf(stderr, "%s: %s\n", prog, message);
	exit(2);
}
