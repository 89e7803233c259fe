/* ipc - SysV shared memory, semaphores and message queues: touch each object
 * once, then read its times back with IPC_STAT twice, through the raw
 * syscall and through libc, as a program of this flavour sees them.
 *
 * Long on purpose: shm, sem and msg each need their own raw 32-bit ipc64
 * structs, their own raw and libc IPC_STAT and their *_high words; the three
 * kinds stay side by side so that they can be compared line for line.
 *
 * usage: ipc [shm|sem|msg ...]      (default: all three, in this order)
 *        ipc --list                  the calls it prints
 *
 * For each kind a fresh private object is created, used, stat'ed and removed:
 *   shm  shmget, shmat (sets shm_atime), shmdt (sets shm_dtime)
 *   sem  semget, semop +1 (sets sem_otime)
 *   msg  msgget, msgsnd (sets msg_stime), msgrcv (sets msg_rtime)
 * shmget/semget/msgget set the *_ctime. Then <kind>_stat_raw and
 * <kind>_stat_libc report every time field. One JSON line per call, e.g.
 *   {"probe":"ipc","flavour":"time32-libc","call":"shm_stat_raw","entry":"direct",
 *    "shm_atime":4,"shm_atime_high":1,...}
 *   {"probe":"ipc","flavour":"time32-libc","call":"shm_stat_libc","entry":"libc",
 *    "shm_atime":4,"shm_atime_high":0,...}
 *
 * "entry" names the way into the kernel: "ipc" (the ipc(2) multiplexer),
 * "direct" (shmctl(2), semctl(2), ... as their own syscalls) or "libc".
 *
 * The raw IPC_STAT reads the kernel's struct shmid64_ds / semid64_ds /
 * msqid64_ds (abi32.h: the uapi <asm/shmbuf.h>, <asm/sembuf.h>,
 * <asm/msgbuf.h> of the target ABI) with the IPC_64 layout:
 *   32-bit ABIs  each time is two unsigned words: <f> (the low 32 bits) and
 *                <f>_high (the upper 32 bits, filled since Linux 4.19 by
 *                ipc/shm.c shmctl_stat(), ipc/sem.c semctl_stat(),
 *                ipc/msg.c msgctl_stat() on 32-bit kernels and by
 *                copy_compat_{shmid,semid,msqid}_to_user() in compat mode).
 *                <f> is printed as a signed 32-bit number, which is what a
 *                32-bit time_t program (glibc < 2.34: struct shmid_ds had
 *                `__time_t shm_atime; unsigned long __unused1;`) reads:
 *                past 2038-01-19T03:14:07Z it is negative (1901).
 *                <f>_high is printed as the unsigned word it is.
 *   64-bit ABIs  each time is one signed long <f>; no <f>_high.
 * The libc IPC_STAT prints the flavour's struct shmid_ds / semid_ds /
 * msqid_ds as the program gets it: for 32-bit time_t also glibc's
 * __<f>_high word, as <f>_high.
 *
 * Like LTP, each call has variants and the flavour picks one:
 *   time32-syscall  operations and the raw IPC_STAT go through ipc(2) with
 *                   IPC_64 (i386: the only SysV entry before Linux 5.1, what
 *                   glibc < 2.34 called); on ABIs without ipc(2) (ARM EABI)
 *                   the direct syscalls. No libc IPC_STAT: this flavour is a
 *                   program that never asks libc.
 *   others          operations through libc; raw IPC_STAT through the direct
 *                   syscalls (shmctl 396, semctl 394, msgctl 402 on i386),
 *                   then the libc IPC_STAT.
 *
 * Exit status: 0 when every requested kind was attempted (a failing call is
 * an observation, reported with its errno), 2 on usage errors.
 */
#define _GNU_SOURCE
#include "abi32.h"
#include "probe.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROBE "ipc"

/* include/uapi/linux/ipc.h: ask for the *64_ds layout. */
#define KERNEL_IPC_64 0x0100

/* Does the direct *ctl syscall want IPC_64 in cmd?
 *   ARM: arch/arm/tools/syscall.tbl maps shmctl/semctl/msgctl to
 *        sys_old_shmctl() etc., which take the layout from
 *        ipc_parse_version(): the flag is needed.
 *   x86: sys_shmctl() / compat_sys_shmctl() (and sem, msg) always use
 *        IPC_64 and refuse a flagged cmd with EINVAL. */
#if defined(__arm__)
#define DIRECT_IPC_64 KERNEL_IPC_64
#else
#define DIRECT_IPC_64 0
#endif

/* ipc(2) call numbers (include/uapi/linux/ipc.h). */
enum { IPCOP_SEMOP = 1, IPCOP_SEMGET = 2, IPCOP_SEMCTL = 3,
       IPCOP_MSGSND = 11, IPCOP_MSGRCV = 12, IPCOP_MSGGET = 13, IPCOP_MSGCTL = 14,
       IPCOP_SHMAT = 21, IPCOP_SHMDT = 22, IPCOP_SHMGET = 23, IPCOP_SHMCTL = 24 };

/* glibc leaves union semun to the caller (semctl(2)). */
union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
	struct seminfo *__buf;
};

/* One message: long type + payload (msgsnd(2)). */
struct message {
	long mtype;
	char mtext[8];
};
#define MESSAGE_TEXT "y2038"

/* A raw time field f of *ds, printed as `key` and `high_key`: the low word
 * (signed, as a 32-bit time_t reads it) and the high word on 32-bit ABIs;
 * the 64-bit value alone on 64-bit ABIs. */
#if __SIZEOF_LONG__ == 4
#define PUT_RAW_TIME(ds, f, key, high_key) do {                   \
		probe_i64(key, (int32_t)(ds)->f);                 \
		probe_i64(high_key, (unsigned long)(ds)->f##_high); \
	} while (0)
#else
#define PUT_RAW_TIME(ds, f, key, high_key) probe_i64(key, (long long)(ds)->f)
#endif

/* A libc time field: 32-bit time_t structs carry glibc's __<f>_high word. */
#if defined(__TIMESIZE) && __TIMESIZE == 32 && !defined(__USE_TIME_BITS64)
#define PUT_LIBC_TIME(ds, f, key, high_key) do {                  \
		probe_i64(key, (long long)(ds)->f);               \
		probe_i64(high_key, (long long)(ds)->__##f##_high); \
	} while (0)
#else
#define PUT_LIBC_TIME(ds, f, key, high_key) probe_i64(key, (long long)(ds)->f)
#endif

/* ------------------------------------------------------------------------
 * The raw kernel entries. */

/* time32-syscall goes through ipc(2) where the ABI has it. */
#if defined(PROBE_TIME32_SYSCALL) && defined(__NR_ipc)
#define USE_IPC_MULTIPLEXER 1
#else
#define USE_IPC_MULTIPLEXER 0
#endif

#if USE_IPC_MULTIPLEXER
static long ipc_call(unsigned call, long first, long second, long third, void *ptr, long fifth)
{
	return syscall(__NR_ipc, call, first, second, third, ptr, fifth);
}
#endif

#if !USE_IPC_MULTIPLEXER
static int shm_stat_direct(int id, struct kernel_shmid64_ds *ds)
{
	return syscall(__NR_shmctl, id, IPC_STAT | DIRECT_IPC_64, ds);
}

static int sem_stat_direct(int id, struct kernel_semid64_ds *ds)
{
	/* The fourth argument is union semun, passed by value: the pointer. */
	return syscall(__NR_semctl, id, 0, IPC_STAT | DIRECT_IPC_64, ds);
}

static int msg_stat_direct(int id, struct kernel_msqid64_ds *ds)
{
	return syscall(__NR_msgctl, id, IPC_STAT | DIRECT_IPC_64, ds);
}
#endif

#if USE_IPC_MULTIPLEXER
static int shm_stat_ipc(int id, struct kernel_shmid64_ds *ds)
{
	return ipc_call(IPCOP_SHMCTL, id, IPC_STAT | KERNEL_IPC_64, 0, ds, 0);
}

static int sem_stat_ipc(int id, struct kernel_semid64_ds *ds)
{
	/* ipc/syscall.c: SEMCTL reads the union semun from *ptr. */
	void *arg = ds;

	return ipc_call(IPCOP_SEMCTL, id, 0, IPC_STAT | KERNEL_IPC_64, &arg, 0);
}

static int msg_stat_ipc(int id, struct kernel_msqid64_ds *ds)
{
	return ipc_call(IPCOP_MSGCTL, id, IPC_STAT | KERNEL_IPC_64, 0, ds, 0);
}
#endif

/* ------------------------------------------------------------------------
 * Operations: one table per variant. Each returns 0 (or an id) on success,
 * -1 with errno on failure. */

struct ops {
	const char *entry;
	int (*shmget)(size_t size);
	int (*shmat)(int id, void **addr);
	int (*shmdt)(void *addr);
	int (*semget)(void);
	int (*semop)(int id, struct sembuf *op);
	int (*msgget)(void);
	int (*msgsnd)(int id, struct message *m, size_t len);
	int (*msgrcv)(int id, struct message *m, size_t len);
	int (*shm_stat_raw)(int id, struct kernel_shmid64_ds *ds);
	int (*sem_stat_raw)(int id, struct kernel_semid64_ds *ds);
	int (*msg_stat_raw)(int id, struct kernel_msqid64_ds *ds);
	const char *raw_entry;
	int libc_stat;           /* also IPC_STAT through libc */
};

#ifdef PROBE_TIME32_SYSCALL
#if USE_IPC_MULTIPLEXER
static int shmget_sys(size_t size)
{
	return ipc_call(IPCOP_SHMGET, IPC_PRIVATE, size, IPC_CREAT | 0600, NULL, 0);
}

static int shmat_sys(int id, void **addr)
{
	/* ipc/syscall.c SHMAT (version 0) stores the address in *third. */
	unsigned long raddr = 0;

	if (ipc_call(IPCOP_SHMAT, id, 0, (long)&raddr, NULL, 0) != 0)
		return -1;
	*addr = (void *)raddr;
	return 0;
}

static int shmdt_sys(void *addr)
{
	return ipc_call(IPCOP_SHMDT, 0, 0, 0, addr, 0);
}

static int semget_sys(void)
{
	return ipc_call(IPCOP_SEMGET, IPC_PRIVATE, 1, IPC_CREAT | 0600, NULL, 0);
}

static int semop_sys(int id, struct sembuf *op)
{
	return ipc_call(IPCOP_SEMOP, id, 1, 0, op, 0);
}

static int msgget_sys(void)
{
	return ipc_call(IPCOP_MSGGET, IPC_PRIVATE, IPC_CREAT | 0600, 0, NULL, 0);
}

static int msgsnd_sys(int id, struct message *m, size_t len)
{
	return ipc_call(IPCOP_MSGSND, id, len, IPC_NOWAIT, m, 0);
}

static int msgrcv_sys(int id, struct message *m, size_t len)
{
	/* Version 0 of MSGRCV takes struct ipc_kludge { msgp, msgtyp }. */
	struct { void *msgp; long msgtyp; } kludge = { m, 0 };

	return ipc_call(IPCOP_MSGRCV, id, len, IPC_NOWAIT, &kludge, 0);
}
#define SYS_ENTRY "ipc"
#define SYS_STAT(kind) kind##_stat_ipc

#else /* no ipc(2): ARM EABI has only the direct syscalls */

static int shmget_sys(size_t size)
{
	return syscall(__NR_shmget, IPC_PRIVATE, size, IPC_CREAT | 0600);
}

static int shmat_sys(int id, void **addr)
{
	long ret = syscall(__NR_shmat, id, NULL, 0);

	if (ret == -1)
		return -1;
	*addr = (void *)ret;
	return 0;
}

static int shmdt_sys(void *addr)
{
	return syscall(__NR_shmdt, addr);
}

static int semget_sys(void)
{
	return syscall(__NR_semget, IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int semop_sys(int id, struct sembuf *op)
{
	return syscall(__NR_semop, id, op, 1);
}

static int msgget_sys(void)
{
	return syscall(__NR_msgget, IPC_PRIVATE, IPC_CREAT | 0600);
}

static int msgsnd_sys(int id, struct message *m, size_t len)
{
	return syscall(__NR_msgsnd, id, m, len, IPC_NOWAIT);
}

static int msgrcv_sys(int id, struct message *m, size_t len)
{
	return syscall(__NR_msgrcv, id, m, len, 0L, IPC_NOWAIT);
}
#define SYS_ENTRY "direct"
#define SYS_STAT(kind) kind##_stat_direct
#endif

static const struct ops OPS = {
	.entry = SYS_ENTRY,
	.shmget = shmget_sys, .shmat = shmat_sys, .shmdt = shmdt_sys,
	.semget = semget_sys, .semop = semop_sys,
	.msgget = msgget_sys, .msgsnd = msgsnd_sys, .msgrcv = msgrcv_sys,
	.shm_stat_raw = SYS_STAT(shm), .sem_stat_raw = SYS_STAT(sem),
	.msg_stat_raw = SYS_STAT(msg),
	.raw_entry = SYS_ENTRY,
	.libc_stat = 0,
};

#else /* libc API */

static int shmget_libc(size_t size)
{
	return shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
}

static int shmat_libc(int id, void **addr)
{
	void *p = shmat(id, NULL, 0);

	if (p == (void *)-1)
		return -1;
	*addr = p;
	return 0;
}

static int shmdt_libc(void *addr)
{
	return shmdt(addr);
}

static int semget_libc(void)
{
	return semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int semop_libc(int id, struct sembuf *op)
{
	return semop(id, op, 1);
}

static int msgget_libc(void)
{
	return msgget(IPC_PRIVATE, IPC_CREAT | 0600);
}

static int msgsnd_libc(int id, struct message *m, size_t len)
{
	return msgsnd(id, m, len, IPC_NOWAIT);
}

static int msgrcv_libc(int id, struct message *m, size_t len)
{
	return msgrcv(id, m, len, 0, IPC_NOWAIT);
}

static const struct ops OPS = {
	.entry = "libc",
	.shmget = shmget_libc, .shmat = shmat_libc, .shmdt = shmdt_libc,
	.semget = semget_libc, .semop = semop_libc,
	.msgget = msgget_libc, .msgsnd = msgsnd_libc, .msgrcv = msgrcv_libc,
	.shm_stat_raw = shm_stat_direct, .sem_stat_raw = sem_stat_direct,
	.msg_stat_raw = msg_stat_direct,
	.raw_entry = "direct",
	.libc_stat = 1,
};
#endif

/* ------------------------------------------------------------------------
 * Reporting. */

/* One line for an operation: {"entry":...} or the errno. 0 when it worked. */
static int report(const char *call, const char *entry, int ret)
{
	if (ret == -1) {
		probe_errno(PROBE, call, errno);
		return -1;
	}
	probe_begin(PROBE, call);
	probe_str("entry", entry);
	probe_end();
	return 0;
}

static void shm_stat(int id)
{
	struct kernel_shmid64_ds raw;
	struct shmid_ds ds;

	memset(&raw, 0, sizeof(raw));
	if (OPS.shm_stat_raw(id, &raw) == -1) {
		probe_errno(PROBE, "shm_stat_raw", errno);
	} else {
		probe_begin(PROBE, "shm_stat_raw");
		probe_str("entry", OPS.raw_entry);
		PUT_RAW_TIME(&raw, shm_atime, PROBE_KEY("shm_atime"), PROBE_KEY("shm_atime_high"));
		PUT_RAW_TIME(&raw, shm_dtime, PROBE_KEY("shm_dtime"), PROBE_KEY("shm_dtime_high"));
		PUT_RAW_TIME(&raw, shm_ctime, PROBE_KEY("shm_ctime"), PROBE_KEY("shm_ctime_high"));
		probe_i64("shm_segsz", (long long)raw.shm_segsz);
		probe_i64("shm_nattch", (long long)raw.shm_nattch);
		probe_end();
	}
	if (!OPS.libc_stat)
		return;
	memset(&ds, 0, sizeof(ds));
	if (shmctl(id, IPC_STAT, &ds) == -1) {
		probe_errno(PROBE, "shm_stat_libc", errno);
		return;
	}
	probe_begin(PROBE, "shm_stat_libc");
	probe_str("entry", "libc");
	PUT_LIBC_TIME(&ds, shm_atime, PROBE_KEY("shm_atime"), PROBE_KEY("shm_atime_high"));
	PUT_LIBC_TIME(&ds, shm_dtime, PROBE_KEY("shm_dtime"), PROBE_KEY("shm_dtime_high"));
	PUT_LIBC_TIME(&ds, shm_ctime, PROBE_KEY("shm_ctime"), PROBE_KEY("shm_ctime_high"));
	probe_i64("shm_segsz", (long long)ds.shm_segsz);
	probe_i64("shm_nattch", (long long)ds.shm_nattch);
	probe_end();
}

static void sem_stat(int id)
{
	struct kernel_semid64_ds raw;
	struct semid_ds ds;
	union semun arg = { .buf = &ds };

	memset(&raw, 0, sizeof(raw));
	if (OPS.sem_stat_raw(id, &raw) == -1) {
		probe_errno(PROBE, "sem_stat_raw", errno);
	} else {
		probe_begin(PROBE, "sem_stat_raw");
		probe_str("entry", OPS.raw_entry);
		PUT_RAW_TIME(&raw, sem_otime, PROBE_KEY("sem_otime"), PROBE_KEY("sem_otime_high"));
		PUT_RAW_TIME(&raw, sem_ctime, PROBE_KEY("sem_ctime"), PROBE_KEY("sem_ctime_high"));
		probe_i64("sem_nsems", (long long)raw.sem_nsems);
		probe_end();
	}
	if (!OPS.libc_stat)
		return;
	memset(&ds, 0, sizeof(ds));
	if (semctl(id, 0, IPC_STAT, arg) == -1) {
		probe_errno(PROBE, "sem_stat_libc", errno);
		return;
	}
	probe_begin(PROBE, "sem_stat_libc");
	probe_str("entry", "libc");
	PUT_LIBC_TIME(&ds, sem_otime, PROBE_KEY("sem_otime"), PROBE_KEY("sem_otime_high"));
	PUT_LIBC_TIME(&ds, sem_ctime, PROBE_KEY("sem_ctime"), PROBE_KEY("sem_ctime_high"));
	probe_i64("sem_nsems", (long long)ds.sem_nsems);
	probe_end();
}

static void msg_stat(int id)
{
	struct kernel_msqid64_ds raw;
	struct msqid_ds ds;

	memset(&raw, 0, sizeof(raw));
	if (OPS.msg_stat_raw(id, &raw) == -1) {
		probe_errno(PROBE, "msg_stat_raw", errno);
	} else {
		probe_begin(PROBE, "msg_stat_raw");
		probe_str("entry", OPS.raw_entry);
		PUT_RAW_TIME(&raw, msg_stime, PROBE_KEY("msg_stime"), PROBE_KEY("msg_stime_high"));
		PUT_RAW_TIME(&raw, msg_rtime, PROBE_KEY("msg_rtime"), PROBE_KEY("msg_rtime_high"));
		PUT_RAW_TIME(&raw, msg_ctime, PROBE_KEY("msg_ctime"), PROBE_KEY("msg_ctime_high"));
		probe_i64("msg_qnum", (long long)raw.msg_qnum);
		probe_end();
	}
	if (!OPS.libc_stat)
		return;
	memset(&ds, 0, sizeof(ds));
	if (msgctl(id, IPC_STAT, &ds) == -1) {
		probe_errno(PROBE, "msg_stat_libc", errno);
		return;
	}
	probe_begin(PROBE, "msg_stat_libc");
	probe_str("entry", "libc");
	PUT_LIBC_TIME(&ds, msg_stime, PROBE_KEY("msg_stime"), PROBE_KEY("msg_stime_high"));
	PUT_LIBC_TIME(&ds, msg_rtime, PROBE_KEY("msg_rtime"), PROBE_KEY("msg_rtime_high"));
	PUT_LIBC_TIME(&ds, msg_ctime, PROBE_KEY("msg_ctime"), PROBE_KEY("msg_ctime_high"));
	probe_i64("msg_qnum", (long long)ds.msg_qnum);
	probe_end();
}

/* ------------------------------------------------------------------------
 * One sequence per kind. Objects are private and removed at the end
 * (through libc: the removal is not what this probe observes). */

static void run_shm(void *ctx)
{
	void *addr = NULL;
	int id = OPS.shmget(4096);

	(void)ctx;
	if (report("shmget", OPS.entry, id == -1 ? -1 : 0) != 0)
		return;
	if (report("shmat", OPS.entry, OPS.shmat(id, &addr)) == 0)
		report("shmdt", OPS.entry, OPS.shmdt(addr));
	shm_stat(id);
	shmctl(id, IPC_RMID, NULL);
}

static void run_sem(void *ctx)
{
	struct sembuf up = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };
	int id = OPS.semget();

	(void)ctx;
	if (report("semget", OPS.entry, id == -1 ? -1 : 0) != 0)
		return;
	report("semop", OPS.entry, OPS.semop(id, &up));
	sem_stat(id);
	semctl(id, 0, IPC_RMID);
}

static void run_msg(void *ctx)
{
	struct message out = { .mtype = 1, .mtext = MESSAGE_TEXT };
	struct message in;
	int id = OPS.msgget();

	(void)ctx;
	if (report("msgget", OPS.entry, id == -1 ? -1 : 0) != 0)
		return;
	if (report("msgsnd", OPS.entry, OPS.msgsnd(id, &out, sizeof(MESSAGE_TEXT))) == 0) {
		int got = OPS.msgrcv(id, &in, sizeof(in.mtext));

		report("msgrcv", OPS.entry, got == -1 ? -1 : 0);
	}
	msg_stat(id);
	msgctl(id, IPC_RMID, NULL);
}

/* The *_stat_libc lines exist where this flavour asks libc (OPS.libc_stat). */
#ifdef PROBE_TIME32_SYSCALL
#define LIBC_STAT(call)
#else
#define LIBC_STAT(call) , call
#endif

/* The words on the command line are kinds; each prints several calls. */
static const struct probe_call kinds[] = {
	{ "shm", run_shm, PROBE_PRINTS("shmget", "shmat", "shmdt", "shm_stat_raw"
	                                LIBC_STAT("shm_stat_libc")), 0 },
	{ "sem", run_sem, PROBE_PRINTS("semget", "semop", "sem_stat_raw"
	                                LIBC_STAT("sem_stat_libc")), 0 },
	{ "msg", run_msg, PROBE_PRINTS("msgget", "msgsnd", "msgrcv", "msg_stat_raw"
	                                LIBC_STAT("msg_stat_libc")), 0 },
};

static const struct probe ipc = {
	.name = PROBE,
	.usage = "usage: ipc [shm|sem|msg ...]",
	.calls = kinds,
	.ncalls = PROBE_COUNT(kinds),
	.select_calls = 1,
};

int main(int argc, char **argv)
{
	return probe_main(argc, argv, &ipc);
}
