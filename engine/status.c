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
    size_t plen = (size_t)n < sizeof prefix ? (size_t)n : sizeof prefix - 1;
    size_t olen = strnlen(err->msg, sizeof err->msg - 1);
    char whole[2 * sizeof err->msg];
    memcpy(whole, prefix, plen);
    memcpy(whole + plen, err->msg, olen);
    size_t len = plen + olen, cap = sizeof err->msg - 1;
    if (len <= cap) {
        memcpy(err->msg, whole, len);
        err->msg[len] = '\0';
        return;
    }
    /* Too long (a long path or expression): keep the start, which says
     * where, and the end, which says why, cut at character boundaries. */
    static const char cut[] = " ... ";
    size_t head = cap / 3, tail = cap - head - (sizeof cut - 1);
    while (head > 0 && (whole[head] & 0xC0) == 0x80) head--;
    size_t from = len - tail;
    while (from < len && (whole[from] & 0xC0) == 0x80) from++;
    memcpy(err->msg, whole, head);
    memcpy(err->msg + head, cut, sizeof cut - 1);
    memcpy(err->msg + head + sizeof cut - 1, whole + from, len - from);
    err->msg[head + sizeof cut - 1 + len - from] = '\0';
}

void pq_error_clear(pq_error *err)
{
    if (!err) return;
    err->cls = PQ_E_NONE;
    err->msg[0] = '\0';
}
