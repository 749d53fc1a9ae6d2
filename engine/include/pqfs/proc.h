/* What the OS says about a process (engine/common/proc.c, from /proc):
 * the facts that tell what a close() of a file being written means (the
 * write lifecycle in lake.h: a writer killed by a signal, a dup'd
 * descriptor closed while another stays open) and who a caller is (its
 * supplementary groups).  Nothing here is FUSE's: a FUSE request names the
 * thread that made it, and these take thread ids where the kernel's files
 * are per thread.
 *
 * Each fact has a parser of the text and a reader of the live file: the
 * parsers are pure (unit.test_proc feeds them text), the readers read
 * /proc/... and parse.  A reader that cannot read its file (the process is
 * gone, or in another PID namespace) gives the answer that changes nothing:
 * 0 or false (pq_proc_gone is the one that says "gone"). */
#ifndef PQ_PROC_H
#define PQ_PROC_H

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ parsers */

/* The "Tgid:" of a /proc/TID/status text (the thread's process); 0 when
 * it has none. */
int pq_proc_parse_tgid(const char *status);
/* Whether a /proc/TID/status text shows a signal pending that will kill
 * the thread: SIGKILL, or one neither caught (SigCgt) nor ignored (SigIgn)
 * whose default action ends the process, in SigPnd (the thread's) or
 * ShdPnd (its process's). */
bool pq_proc_parse_fatal_pending(const char *status);
/* Whether a /proc/TID/stat text shows the thread exiting because a signal
 * killed it: PF_EXITING in its flags (field 9) and a signal in the low 7
 * bits of its exit_code (field 52, set before its files are closed).  A
 * normal exit has 0 there.  The command name (field 2) may hold spaces and
 * ')': fields are counted from the last ')'. */
bool pq_proc_parse_killed(const char *stat);
/* The "Groups:" line of a /proc/PID/status text: the count, the groups in
 * *out (malloc'd; NULL when there is no such line), -1 out of memory. */
int pq_proc_parse_groups(const char *status, uint32_t **out);
/* The "ino:" of a /proc/PID/fdinfo/FD text (the inode the descriptor is
 * open on): false when it has none. */
bool pq_proc_parse_fdinfo_ino(const char *fdinfo, uint64_t *ino);

/* ------------------------------------------------------------------ readers of /proc */

/* The process (thread group) of thread tid; 0 when it cannot be told
 * (tid <= 0, another PID namespace, no /proc). */
int pq_proc_process_of(int tid);
/* pq_proc_parse_killed of /proc/TID/stat. */
bool pq_proc_killed_by_signal(int tid);
/* pq_proc_parse_fatal_pending of /proc/TID/status. */
bool pq_proc_fatal_signal_pending(int tid);
/* Whether thread tid has no /proc entry (reaped: it exited). */
bool pq_proc_gone(int tid);
/* Whether thread tid is dying: gone, a fatal signal pending, or exiting
 * killed by one.  false for tid <= 0. */
bool pq_proc_dying(int tid);
/* Whether process pid has a descriptor open on inode ino (its
 * /proc/PID/fdinfo entries' "ino:"). */
bool pq_proc_holds_inode(int pid, uint64_t ino);
/* The supplementary groups of process pid (/proc/PID/task/PID/status, read
 * whole: libfuse's fuse_req_getgroups read past its buffer for a file of
 * 4 KiB or more); -1 when it cannot be read. */
int pq_proc_groups(int pid, uint32_t **out);

/* ------------------------------------------------------------------ the questions, as a table
 * What the write lifecycle asks (lake.h, pq_lake_uploads_opts.proc):
 * pq_proc_system() answers from /proc; a test answers for processes it
 * makes up (a dying writer, a dup'd descriptor) without making them. */
typedef struct pq_proc_ops {
    void *ctx;
    int (*process_of)(void *ctx, int tid);
    bool (*killed_by_signal)(void *ctx, int tid);
    bool (*dying)(void *ctx, int tid);
    bool (*holds_inode)(void *ctx, int pid, uint64_t ino);
} pq_proc_ops;

const pq_proc_ops *pq_proc_system(void);

#endif
