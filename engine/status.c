#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int pq_fail(pq_error *err, pq_errclass cls, const char *fmt, ...)
{
    if (!err) return PQ_ERR;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->cls = cls;
    return PQ_ERR;
}

void pq_error_prefix(pq_error *err, const char *fmt, ...)
{
    if (!err) return;
    char prefix[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    /* Build "prefix + old" by hand: truncation of a message is acceptable. */
    size_t plen = (size_t)n < sizeof prefix ? (size_t)n : sizeof prefix - 1;
    size_t olen = strnlen(err->msg, sizeof err->msg - 1);
    if (plen > sizeof err->msg - 1) plen = sizeof err->msg - 1;
    if (olen > sizeof err->msg - 1 - plen) olen = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, olen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + olen] = '\0';
}

void pq_error_clear(pq_error *err)
{
    if (!err) return;
    err->cls = PQ_E_NONE;
    err->msg[0] = '\0';
}
