/* abi32.h - the kernel's structs for the legacy 32-bit time syscalls, and
 * the SysV IPC structs whose time fields depend on the ABI.
 *
 * One copy of each, mirroring the kernel's own definition (Debian's 6.1
 * tree), so that a probe making a raw syscall passes exactly what the
 * kernel reads. The kernel names are kept, with a kernel_ prefix where the
 * C library already uses the name (struct stat64, the IPC *_ds structs).
 * The checks at the end hold the sizes the kernel's headers give.
 */
#ifndef ABI32_H
#define ABI32_H

#include <stddef.h>
#include <stdint.h>

/* ---- times ----------------------------------------------------------- */

/* include/vdso/time32.h struct old_timespec32 (old_time32_t is s32). */
struct old_timespec32 {
	int32_t tv_sec;
	int32_t tv_nsec;
};

/* include/vdso/time32.h struct old_timeval32. */
struct old_timeval32 {
	int32_t tv_sec;
	int32_t tv_usec;
};

/* include/linux/time32.h struct old_itimerspec32. */
struct old_itimerspec32 {
	struct old_timespec32 it_interval;
	struct old_timespec32 it_value;
};

/* kernel/time/itimer.c struct old_itimerval32 (setitimer, getitimer). */
struct old_itimerval32 {
	struct old_timeval32 it_interval;
	struct old_timeval32 it_value;
};

/* include/linux/time32.h struct old_timex32 (adjtimex, clock_adjtime). */
struct old_timex32 {
	uint32_t modes;
	int32_t offset, freq, maxerror, esterror, status, constant, precision, tolerance;
	struct old_timeval32 time;
	int32_t tick, ppsfreq, jitter, shift, stabil, jitcnt, calcnt, errcnt, stbcnt, tai;
	int32_t reserved[11];     /* s32:32 eleven times */
};

/* ---- file times ------------------------------------------------------ */

#if __SIZEOF_LONG__ == 4
/* arch/x86/include/uapi/asm/stat.h (i386) and arch/arm/include/uapi/asm/
 * stat.h struct stat64: the same declaration in both; the ABI's alignment
 * of long long gives each its layout (96 bytes on i386, 104 on arm). The
 * time fields are unsigned long in the header (named st_mtime etc. there;
 * renamed here, as glibc's <sys/stat.h> defines st_mtime as a macro); old
 * glibc copied them into a signed 32-bit time_t. */
struct kernel_stat64 {
	unsigned long long st_dev;
	unsigned char __pad0[4];
	unsigned long __st_ino;
	unsigned int st_mode;
	unsigned int st_nlink;
	unsigned long st_uid;
	unsigned long st_gid;
	unsigned long long st_rdev;
	unsigned char __pad3[4];
	long long st_size;
	unsigned long st_blksize;
	unsigned long long st_blocks;
	unsigned long k_atime;
	unsigned long k_atime_nsec;
	unsigned long k_mtime;
	unsigned long k_mtime_nsec;
	unsigned long k_ctime;
	unsigned long k_ctime_nsec;
	unsigned long long st_ino;
};
#endif

/* ---- SysV IPC (the IPC_64 layouts IPC_STAT fills) --------------------- */

/* include/uapi/asm-generic/ipcbuf.h struct ipc64_perm (i386, x86_64, arm).
 * __kernel_mode_t is unsigned short on i386 and arm (then __pad1 is two
 * bytes), unsigned int on x86_64: 32 bits either way, never read here. */
struct kernel_ipc64_perm {
	int32_t key;
	uint32_t uid, gid, cuid, cgid;
	uint32_t mode_and_pad1;
	uint16_t seq, __pad2;
	unsigned long __unused1, __unused2;
};

/* include/uapi/asm-generic/shmbuf.h struct shmid64_ds: on 32-bit ABIs each
 * time is two unsigned words, the low 32 bits and <f>_high. */
struct kernel_shmid64_ds {
	struct kernel_ipc64_perm shm_perm;
	size_t shm_segsz;                    /* __kernel_size_t */
#if __SIZEOF_LONG__ == 4
	unsigned long shm_atime, shm_atime_high;
	unsigned long shm_dtime, shm_dtime_high;
	unsigned long shm_ctime, shm_ctime_high;
#else
	long shm_atime, shm_dtime, shm_ctime;
#endif
	int32_t shm_cpid, shm_lpid;          /* __kernel_pid_t */
	unsigned long shm_nattch, __unused4, __unused5;
};

/* include/uapi/asm-generic/sembuf.h struct semid64_ds (arm), and
 * arch/x86/include/uapi/asm/sembuf.h (i386: the same; x86_64: a long time
 * followed by an unused word, for each time). */
struct kernel_semid64_ds {
	struct kernel_ipc64_perm sem_perm;
#if __SIZEOF_LONG__ == 4
	unsigned long sem_otime, sem_otime_high;
	unsigned long sem_ctime, sem_ctime_high;
#elif defined(__x86_64__)
	long sem_otime;
	unsigned long __unused1;
	long sem_ctime;
	unsigned long __unused2;
#else
	long sem_otime, sem_ctime;
#endif
	unsigned long sem_nsems, __unused3, __unused4;
};

/* include/uapi/asm-generic/msgbuf.h struct msqid64_ds (i386, x86_64, arm). */
struct kernel_msqid64_ds {
	struct kernel_ipc64_perm msg_perm;
#if __SIZEOF_LONG__ == 4
	unsigned long msg_stime, msg_stime_high;
	unsigned long msg_rtime, msg_rtime_high;
	unsigned long msg_ctime, msg_ctime_high;
#else
	long msg_stime, msg_rtime, msg_ctime;
#endif
	unsigned long msg_cbytes, msg_qnum, msg_qbytes;
	int32_t msg_lspid, msg_lrpid;        /* __kernel_pid_t */
	unsigned long __unused4, __unused5;
};

/* ---- the sizes the kernel's headers give ------------------------------ */

_Static_assert(sizeof(struct old_timespec32) == 8, "old_timespec32 is 8 bytes");
_Static_assert(sizeof(struct old_itimerspec32) == 16, "old_itimerspec32 is 16 bytes");
_Static_assert(sizeof(struct old_itimerval32) == 16, "old_itimerval32 is 16 bytes");
_Static_assert(sizeof(struct old_timex32) == 128, "old_timex32 is 128 bytes");
#if defined(__x86_64__) && defined(__ILP32__)
#error "x32 has IPC layouts of its own (arch/x86/include/uapi/asm/*buf.h): not described here"
#endif
#ifdef __i386__
_Static_assert(sizeof(struct kernel_stat64) == 96, "i386 struct stat64 is 96 bytes");
#endif
#ifdef __arm__
_Static_assert(sizeof(struct kernel_stat64) == 104, "arm struct stat64 is 104 bytes");
#endif
#if __SIZEOF_LONG__ == 4
_Static_assert(sizeof(struct kernel_shmid64_ds) == 84, "32-bit shmid64_ds is 84 bytes (asm-generic/compat.h)");
_Static_assert(sizeof(struct kernel_semid64_ds) == 64, "32-bit semid64_ds is 64 bytes");
_Static_assert(sizeof(struct kernel_msqid64_ds) == 88, "32-bit msqid64_ds is 88 bytes");
#elif defined(__x86_64__)
_Static_assert(sizeof(struct kernel_shmid64_ds) == 112, "x86_64 shmid64_ds is 112 bytes");
_Static_assert(sizeof(struct kernel_semid64_ds) == 104, "x86_64 semid64_ds is 104 bytes");
_Static_assert(sizeof(struct kernel_msqid64_ds) == 120, "x86_64 msqid64_ds is 120 bytes");
#endif

#endif
