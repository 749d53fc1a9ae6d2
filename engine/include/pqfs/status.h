/* Error reporting for the engine.
 *
 * Every fallible engine call takes a `pq_error *` and returns 0 on success or
 * -1 on failure (PQ_OK / PQ_ERR).  The message is built innermost-first ("RLE
 * run of 9000 values overruns the page") and each layer that knows more prefixes
 * its context ("column 'a' (row group 2): "), so the final text reads
 * "FILE: column 'a' (row group 2): RLE run ... ".  Formatting happens only on the
 * error path, never per value. */
#ifndef PQ_STATUS_H
#define PQ_STATUS_H

#include <stddef.h>

#define PQ_OK 0
#define PQ_ERR (-1)

/* Error classes let adapters (FUSE, CLI) pick an errno/exit code in one place. */
typedef enum pq_errclass {
    PQ_E_NONE = 0,
    PQ_E_CORRUPT,     /* the file's bytes are invalid */
    PQ_E_UNSUPPORTED, /* valid but not supported (encryption, unknown codec) */
    PQ_E_IO,          /* storage failed */
    PQ_E_USAGE,       /* bad argument, expression, column name ... */
    PQ_E_NOMEM,
    PQ_E_NOSPACE,
    PQ_E_CANCELLED,   /* the consumer went away */
    PQ_E_NOTFOUND,    /* no such table, directory or file */
    PQ_E_READONLY,    /* a write where only reads are allowed */
    PQ_E_DENIED,      /* an operation this path does not allow (EPERM) */
    PQ_E_STALE,       /* the file changed since it was looked up (ESTALE: look it up again) */
    PQ_E_ACCESS,      /* the caller lacks permission (EACCES) */
    PQ_E_EXISTS,      /* the name is taken (EEXIST: a rename that may not replace) */
    PQ_E_CLOSED,      /* the file is no longer open for this (EBADF: written after its close put it away) */
} pq_errclass;

typedef struct pq_error {
    pq_errclass cls;
    char msg[768];
} pq_error;

/* Set the message (printf-style) and class; returns PQ_ERR so callers can
 * `return pq_fail(err, PQ_E_CORRUPT, "...")`.  err may be NULL. */
int pq_fail(pq_error *err, pq_errclass cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepend context to an existing message: "ctx: old message". */
void pq_error_prefix(pq_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void pq_error_clear(pq_error *err);

/* Short-hand for the common "corrupt input" case. */
#define PQ_CORRUPT(err, ...) pq_fail((err), PQ_E_CORRUPT, __VA_ARGS__)

/* Out of memory, the one message for it: `return PQ_NOMEM(err);`. */
#define PQ_NOMEM(err) pq_fail((err), PQ_E_NOMEM, "out of memory")

/* Propagate a failure from a call returning PQ_ERR. */
#define PQ_TRY(expr)                                                          \
    do {                                                                      \
        if ((expr) != PQ_OK) return PQ_ERR;                                   \
    } while (0)

#endif
