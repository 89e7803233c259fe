/* kmsg.c - see kmsg.h. */
#define _GNU_SOURCE
#include "kmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* One record per read; EPIPE when records were overwritten meanwhile. */
const char *kmsg_next(int fd, char *record, size_t size)
{
	ssize_t n;

	while ((n = read(fd, record, size - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		const char *text;

		if (n <= 0)
			continue;
		record[n] = '\0';
		text = strchr(record, ';');
		if (text)
			return text + 1;
	}
	return NULL;
}

void kmsg_own_comm(char *comm, size_t size)
{
	FILE *file = fopen("/proc/self/comm", "r");

	if (!file || !fgets(comm, (int)size, file))
		snprintf(comm, size, "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (file)
		fclose(file);
}

void kmsg_reported_calls(int fd, const char *prefix, char *names, size_t size)
{
	char record[1024], name[64];
	size_t len = strlen(prefix);
	const char *text;

	names[0] = '\0';
	if (fd < 0)
		return;
	while ((text = kmsg_next(fd, record, sizeof(record)))) {
		const char *called = strstr(text, " called ");

		if (strncmp(text, prefix, len) != 0 || !called ||
		    sscanf(called + 8, "%63s", name) != 1)
			continue;
		snprintf(names + strlen(names), size - strlen(names), "%s%s",
			 names[0] ? "+" : "", name);
	}
}
