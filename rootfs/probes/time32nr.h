/* time32nr.h - the 32-bit time system calls by number, for a program that
 * must name them as the kernel sees them at syscall entry (seccomp32.c's
 * filter); defined in time32nr.c.
 *
 * The list is what CONFIG_COMPAT_32BIT_TIME provides: the *_time32 entries
 * of the kernel's kernel/sys_ni.c (Debian's 6.1 tree), one row per syscall
 * of the 32-bit ABI that a program of this machine runs in: i386 on x86_64
 * (a 64-bit program's ABI has none) and on i386, ARM EABI on armhf. The
 * numbers are the kernel's uapi __NR_* names, the ones the time32 probe
 * (time32.c) calls by, never copied here as digits.
 *
 * i386 has no semtimedop of its own: its 32-bit one is ipc(SEMTIMEDOP, ...)
 * (ipc/syscall.c ksys_ipc(): the call in the low 16 bits of the first
 * argument), a row with `call` set; and besides recvmmsg, i386 reaches
 * __sys_recvmmsg() with a 32-bit timeout through socketcall(SYS_RECVMMSG,
 * ...) (net/socket.c sys_socketcall(), net/compat.c on x86_64), which
 * old C libraries used for every socket call: another such row.
 */
#ifndef TIME32NR_H
#define TIME32NR_H

#include <stddef.h>
#include <stdint.h>

struct time32_nr {
	const char *name;       /* the syscall's name in the ABI's table */
	int nr;                 /* its number there */
	int call;               /* >= 0: only when (first argument & 0xffff) == call */
};

struct time32_abi {
	const char *name;               /* "i386", "arm" */
	uint32_t audit_arch;            /* seccomp_data.arch of its calls (AUDIT_ARCH_*) */
	const struct time32_nr *nrs;
	size_t count;
};

/* The 32-bit ABIs this machine runs, each with its time32 syscalls; ABIs
 * without any (x86_64's own) are not listed. */
extern const struct time32_abi time32_abis[];
extern const size_t time32_abi_count;

#endif
