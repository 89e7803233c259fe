/* agent.c - the y2038 sandbox guest agent.
 *
 * Runs shell commands sent by the host over its own serial line and returns
 * their output, framed (the protocol is described in sandbox/guest/protocol.py):
 *
 *   agent -> host  @@Y2038 READY <uname -r>
 *   host -> agent  RUN <id> <base64 of a shell script>
 *   agent -> host  @@Y2038 BEGIN <id>
 *                  <base64 of stdout, 76 columns>
 *                  @@Y2038 STDERR <id>
 *                  <base64 of stderr>
 *                  @@Y2038 END <id> <exit status>
 *
 * Lines not starting with "RUN " are ignored. A malformed RUN line gets an
 * empty reply with status 127 and the id "-" when the id itself is bad.
 *
 * "spin": between commands the agent polls its tty in a busy loop instead of
 * sleeping in read(). Under time warp (QEMU -icount sleep=off) an idle
 * guest's clock jumps to its next timer at once, so a guest that slept while
 * the host prepared the next command would see hours pass; a busy one sees
 * only the instructions it ran (docs/time-warp.md). Idle time inside a
 * command (a sleep, a timer, a timeout) still warps: that is the point.
 *
 * Why C and not a busybox script: on i386 and armhf, Debian's busybox is an
 * old (32-bit time_t) binary. Once the guest clock passes 2038 its stat()
 * fails with EOVERFLOW on any file touched since, so a shell agent that
 * makes and removes files stops working exactly when the scenarios need it.
 * This agent is built as a tool, in the machine's 64-bit time_t flavour, and
 * only hands each script to /bin/sh.
 *
 * usage: agent <tty> [spin]   a tty under /dev (e.g. ttyS1, hvc0), set raw
 *        agent - [spin]     stdin and stdout as they are (tests on the host)
 *        agent --list  the calls it prints as JSON lines: none
 */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define MAX_LINE (1 << 20)
#define WORK "/tmp/y2038-agent"

static const char B64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(int c)
{
	const char *p = c ? strchr(B64, c) : NULL;

	return p ? (int)(p - B64) : -1;
}

/* Decode text into out (at least 3/4 of its length); returns the size or -1. */
static long b64_decode(const char *text, unsigned char *out)
{
	size_t len = strlen(text), n = 0;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];

		for (int k = 0; k < 4; k++) {
			int pad = text[i + k] == '=' && i + 4 == len && k >= 2;

			v[k] = pad ? 0 : b64_value(text[i + k]);
			if (v[k] < 0)
				return -1;
		}
		out[n++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
		if (text[i + 2] != '=')
			out[n++] = (unsigned char)(v[1] << 4 | v[2] >> 2);
		if (text[i + 3] != '=')
			out[n++] = (unsigned char)(v[2] << 6 | v[3]);
	}
	return (long)n;
}

/* Print a file's bytes as base64 lines of 76 columns. */
static void b64_print_file(const char *path, FILE *to)
{
	unsigned char in[57];
	size_t got;
	FILE *from = fopen(path, "rb");

	if (!from)
		return;
	while ((got = fread(in, 1, sizeof(in), from)) > 0) {
		for (size_t i = 0; i < got; i += 3) {
			unsigned v = in[i] << 16;

			v |= i + 1 < got ? in[i + 1] << 8 : 0;
			v |= i + 2 < got ? in[i + 2] : 0;
			fputc(B64[v >> 18 & 63], to);
			fputc(B64[v >> 12 & 63], to);
			fputc(i + 1 < got ? B64[v >> 6 & 63] : '=', to);
			fputc(i + 2 < got ? B64[v & 63] : '=', to);
		}
		fputc('\n', to);
	}
	fclose(from);
}

static void frame(FILE *to, const char *id, int status, int with_output)
{
	fprintf(to, "@@Y2038 BEGIN %s\n", id);
	if (with_output)
		b64_print_file(WORK "/out", to);
	fprintf(to, "@@Y2038 STDERR %s\n", id);
	if (with_output)
		b64_print_file(WORK "/err", to);
	fprintf(to, "@@Y2038 END %s %d\n", id, status);
	fflush(to);
}

static int valid_id(const char *id)
{
	return *id && strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") == strlen(id);
}

static int write_file(const char *path, const unsigned char *data, long size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ok = fd >= 0 && write(fd, data, (size_t)size) == size;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* Run the script with /bin/sh: stdin from /dev/null, output to files. */
static int run_script(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 127;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(WORK "/out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(WORK "/err", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
		    dup2(err, 2) < 0 || chdir("/") < 0)
			_exit(127);
		execl("/bin/sh", "sh", WORK "/cmd", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Handle "RUN <id> <base64>" (the text after "RUN "). */
static void run(char *args, FILE *to, unsigned char *buf)
{
	char *id = strtok(args, " "), *payload = strtok(NULL, " ");
	long size;

	if (!id || !valid_id(id)) {
		frame(to, "-", 127, 0);
		return;
	}
	if (!payload || strtok(NULL, " ") || (size = b64_decode(payload, buf)) < 0 ||
	    !write_file(WORK "/cmd", buf, size)) {
		frame(to, id, 127, 0);
		return;
	}
	frame(to, id, run_script(), 1);
}

static int open_tty(const char *name, FILE **from, FILE **to)
{
	char path[64];
	struct termios raw;
	int fd;

	if (strcmp(name, "-") == 0) {
		*from = stdin;
		*to = stdout;
		return 0;
	}
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDWR | O_NOCTTY);
	if (fd < 0 || tcgetattr(fd, &raw) < 0)
		return -1;
	cfmakeraw(&raw);
	if (tcsetattr(fd, TCSANOW, &raw) < 0)
		return -1;
	*from = fdopen(fd, "r");
	*to = fdopen(dup(fd), "w");
	return *from && *to ? 0 : -1;
}

/* Bytes stdio already holds for the next fgets() (glibc's FILE fields, as
 * gnulib's freadahead() reads them): spinning on the fd while they wait
 * would never end. */
static int buffered(FILE *from)
{
	return from->_IO_read_ptr < from->_IO_read_end;
}

/* Busy-wait until a byte is there to read (see "spin" above). */
static void spin_until_readable(FILE *from)
{
	struct pollfd p = { .fd = fileno(from), .events = POLLIN };

	while (!buffered(from) && poll(&p, 1, 0) == 0)
		;
}

static int command(const struct probe *p, int argc, char **argv)
{
	FILE *from, *to;
	struct utsname uts;
	char *line = malloc(MAX_LINE);
	unsigned char *buf = malloc(MAX_LINE);

	int spin = argc == 3 && strcmp(argv[2], "spin") == 0;

	(void)p;
	if (argc < 2 || argc > 2 + spin || !line || !buf || open_tty(argv[1], &from, &to) < 0) {
		fprintf(stderr, "usage: agent <tty under /dev>|- [spin]  (cannot use '%s': %s)\n",
			argc > 1 ? argv[1] : "", strerror(errno));
		return 2;
	}
	if (mkdir(WORK, 0700) < 0 && errno != EEXIST) {
		perror("agent: " WORK);
		return 1;
	}
	uname(&uts);
	fprintf(to, "@@Y2038 READY %s\n", uts.release);
	fflush(to);
	for (;;) {
		if (spin)
			spin_until_readable(from);
		if (!fgets(line, MAX_LINE, from))
			break;
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line, "RUN ", 4) == 0)
			run(line + 4, to, buf);
	}
	return 0;
}

/* No calls: the agent prints frames, not probe lines. */
static const struct probe agent = {
	.name = "agent",
	.usage = "usage: agent <tty under /dev>|- [spin]",
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &agent);
}
