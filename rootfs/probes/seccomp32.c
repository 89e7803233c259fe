/* seccomp32 - a program run under a seccomp filter that logs, denies or
 * traps the 32-bit time system calls: what a filter gives without the
 * kernel's time32 policy (kernel.time32_syscalls, kernel-series/), for the
 * scenario that sets the two side by side (scenarios/kernel/time32-seccomp.toml).
 *
 * usage: seccomp32 log|deny|trap -- <program> [arg]...
 *
 * PR_SET_NO_NEW_PRIVS, then seccomp(SECCOMP_SET_MODE_FILTER) with a BPF
 * program that returns, for each 32-bit time syscall (time32nr.h: the
 * *_time32 entries of kernel/sys_ni.c) of the ABI it was made in,
 *   log   SECCOMP_RET_LOG: the call runs, and an audit record is written
 *         (only with CONFIG_AUDIT: kernel/seccomp.c seccomp_log() ->
 *         audit_seccomp(), a no-op without it);
 *   deny  SECCOMP_RET_ERRNO | ENOSYS: the call fails as on a kernel
 *         without CONFIG_COMPAT_32BIT_TIME;
 *   trap  SECCOMP_RET_TRAP: the call is rolled back (syscall_rollback())
 *         and SIGSYS sent with si_code SYS_SECCOMP (1), si_syscall its
 *         number; a handler that returns leaves in the return register what
 *         the rollback put there (the number on x86, the first argument on
 *         ARM), not an error;
 * and SECCOMP_RET_ALLOW for everything else, then execs the program, which
 * keeps the filter (so do its children). The arch is checked first
 * (seccomp_data.arch): on x86_64 an i386 program's calls (AUDIT_ARCH_I386)
 * are matched with the i386 numbers, a 64-bit program's (AUDIT_ARCH_X86_64)
 * never, having no 32-bit time syscalls; on i386 the i386 numbers, on armhf
 * (AUDIT_ARCH_ARM) the EABI ones.
 *
 * Prints nothing of its own. Exit status: the program's (it replaces this
 * one); 2 on usage errors; 3 when no filter could be installed (the errno
 * named); 126 when the program cannot run, 127 when it is not found (as
 * env(1)); each with one line on stderr.
 */
#define _GNU_SOURCE
#include "probe.h"
#include "time32nr.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME "seccomp32"
#define USAGE "usage: seccomp32 log|deny|trap -- <program> [arg]..."
#define NO_FILTER 3
#define MAX_INSNS 256

/* The actions, and the name of each in the availability check's error. */
static const struct {
	const char *word;
	unsigned int action;
	const char *check;
} actions[] = {
	{ "log", SECCOMP_RET_LOG,
	  "seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_LOG)" },
	{ "deny", SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA),
	  "seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_ERRNO)" },
	{ "trap", SECCOMP_RET_TRAP,
	  "seccomp(SECCOMP_GET_ACTION_AVAIL, SECCOMP_RET_TRAP)" },
};

/* The low 32 bits of the first argument (both ABIs are little-endian). */
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ARG0_LOW assumes little-endian");

struct filter {
	struct sock_filter insns[MAX_INSNS];
	unsigned short n;
	unsigned short to_hit[MAX_INSNS];   /* the jumps whose jt is the action */
	unsigned short nhits;
};

static void emit(struct filter *f, struct sock_filter insn)
{
	if (f->n == MAX_INSNS)
		probe_usage(NAME, "internal error: the filter outgrew MAX_INSNS");
	f->insns[f->n++] = insn;
}

/* A jump to the action when A == k, on to the next instruction otherwise. */
static void emit_hit_if(struct filter *f, unsigned int k)
{
	f->to_hit[f->nhits++] = f->n;
	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0));
}

/* One ABI's block: entered with A = arch; returns ALLOW when no row matches. */
static void emit_abi(struct filter *f, const struct time32_abi *abi)
{
	unsigned short check = f->n, i;

	emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abi->audit_arch, 0, 0));
	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	for (i = 0; i < abi->count; i++)
		if (abi->nrs[i].call < 0)
			emit_hit_if(f, (unsigned int)abi->nrs[i].nr);
	for (i = 0; i < abi->count; i++) {
		if (abi->nrs[i].call < 0)
			continue;
		/* nr == row's ? A = arg0 & 0xffff, == call ? hit : reload nr */
		emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)abi->nrs[i].nr, 0, 3));
		emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW));
		emit(f, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff));
		emit_hit_if(f, (unsigned int)abi->nrs[i].call);
		emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	}
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	f->insns[check].jf = (unsigned char)(f->n - check - 1);   /* another arch: the next block */
}

/* The whole program: per ABI a block, ALLOW for any other arch, then the action. */
static void build(struct filter *f, unsigned int action)
{
	unsigned short i, hit;

	emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	for (i = 0; i < time32_abi_count; i++)
		emit_abi(f, &time32_abis[i]);
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	hit = f->n;
	emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action));
	for (i = 0; i < f->nhits; i++) {
		if (hit - f->to_hit[i] - 1 > 255)
			probe_usage(NAME, "internal error: a jump of the filter is longer than 255");
		f->insns[f->to_hit[i]].jt = (unsigned char)(hit - f->to_hit[i] - 1);
	}
}

static int no_filter(const char *what, int err)
{
	const char *why = err == ENOSYS ? ": this kernel has no seccomp (CONFIG_SECCOMP)"
		: err == EINVAL ? ": this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"
		: err == EOPNOTSUPP ? ": this kernel does not know the action" : "";

	fprintf(stderr, NAME ": %s: %s (%s)%s\n", what, probe_errname(err), strerror(err), why);
	return NO_FILTER;
}

static int command(const struct probe *p, int argc, char **argv)
{
	static struct filter f;
	struct sock_fprog prog;
	unsigned int action, avail;
	size_t i;

	(void)p;
	if (argc < 4 || strcmp(argv[2], "--") != 0)
		probe_usage(NAME, argc < 2 ? "no action; " USAGE
			    : argc < 3 || strcmp(argv[2], "--") != 0 ? "expected '--' after the action; " USAGE
			    : "no program; " USAGE);
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (strcmp(argv[1], actions[i].word) == 0)
			break;
	if (i == sizeof(actions) / sizeof(actions[0])) {
		char message[256];

		snprintf(message, sizeof(message), "unknown action '%s' (expected log, deny or trap); " USAGE,
			 argv[1]);
		probe_usage(NAME, message);
	}
	action = actions[i].action;
	avail = action & SECCOMP_RET_ACTION_FULL;
	build(&f, action);
	prog.len = f.n;
	prog.filter = f.insns;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return no_filter("prctl(PR_SET_NO_NEW_PRIVS)", errno);
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &avail) != 0)
		return no_filter(actions[i].check, errno);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return no_filter("seccomp(SECCOMP_SET_MODE_FILTER)", errno);
	execvp(argv[3], argv + 3);
	fprintf(stderr, NAME ": cannot run '%s': %s\n", argv[3], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* No calls: it prints nothing of its own. */
static const struct probe seccomp32 = {
	.name = NAME,
	.usage = USAGE,
	.command = command,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &seccomp32);
}
