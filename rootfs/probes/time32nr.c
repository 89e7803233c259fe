/* time32nr.c - the 32-bit time system calls by number (time32nr.h).
 *
 * This file includes the ABI's own syscall header and nothing that pulls
 * in the program's (<sys/syscall.h>): on x86_64 the numbers wanted are
 * i386's (<asm/unistd_32.h>), whose __NR_* names are those of x86_64's
 * <asm/unistd_64.h> with other values.
 */
#include "time32nr.h"

#include <linux/audit.h>
#include <linux/ipc.h>
#include <linux/net.h>

#if defined(__x86_64__) || defined(__i386__)
#include <asm/unistd_32.h>
#define ABI_NAME "i386"
#define ABI_ARCH AUDIT_ARCH_I386
#elif defined(__arm__) && defined(__ARM_EABI__)
#include <asm/unistd.h>
#define ABI_NAME "arm"
#define ABI_ARCH AUDIT_ARCH_ARM
#else
#error "no 32-bit time syscalls described for this architecture"
#endif

#define NR(name) { #name, __NR_##name, -1 }

/* kernel/sys_ni.c, "optional: time32" and the *_time32 entries above it,
 * in that file's order; each served by sys_<name>_time32() or the like
 * (time32-deny.toml names the function of each). */
static const struct time32_nr nrs[] = {
	NR(io_getevents),
	NR(io_pgetevents),
	NR(timerfd_settime),
	NR(timerfd_gettime),
	NR(futex),
	NR(mq_timedsend),
	NR(mq_timedreceive),
#ifdef __NR_semtimedop
	NR(semtimedop),
#else
	{ "ipc(SEMTIMEDOP)", __NR_ipc, SEMTIMEDOP },
#endif
	NR(recvmmsg),
#ifdef __NR_socketcall          /* i386: net/socket.c sys_socketcall(), 32-bit timeout */
	{ "socketcall(SYS_RECVMMSG)", __NR_socketcall, SYS_RECVMMSG },
#endif
#ifdef __NR_time                /* ARM EABI never had time, stime, utime */
	NR(time),
	NR(stime),
	NR(utime),
#endif
	NR(adjtimex),
	NR(sched_rr_get_interval),
	NR(nanosleep),
	NR(rt_sigtimedwait),
	NR(timer_settime),
	NR(timer_gettime),
	NR(clock_settime),
	NR(clock_gettime),
	NR(clock_getres),
	NR(clock_nanosleep),
	NR(utimes),
	NR(futimesat),
	NR(pselect6),
	NR(ppoll),
	NR(utimensat),
	NR(clock_adjtime),
};

const struct time32_abi time32_abis[] = {
	{ ABI_NAME, ABI_ARCH, nrs, sizeof(nrs) / sizeof(nrs[0]) },
};
const size_t time32_abi_count = sizeof(time32_abis) / sizeof(time32_abis[0]);
