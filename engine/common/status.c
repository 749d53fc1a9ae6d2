#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Puts whole[0..len) into err->msg; too long (a long path or expression),
 * it keeps the start, which says where, and the end, which says why, cut at
 * character boundaries. */
static void put_cut(pq_error *err, const char *whole, size_t len)
{
    size_t cap = sizeof err->msg - 1;
    if (len <= cap) {
        memmove(err->msg, whole, len);
        err->msg[len] = '\0';
        return;
    }
    static const char cut[] = " ... ";
    size_t head = cap / 3, tail = cap - head - (sizeof cut - 1);
    while (head > 0 && (whole[head] & 0xC0) == 0x80) head--;
    size_t from = len - tail;
    while (from < len && (whole[from] & 0xC0) == 0x80) from++;
    memmove(err->msg, whole, head);
    memcpy(err->msg + head, cut, sizeof cut - 1);
    memcpy(err->msg + head + sizeof cut - 1, whole + from, len - from);
    err->msg[head + sizeof cut - 1 + len - from] = '\0';
}

int pq_fail(pq_error *err, pq_errclass cls, const char *fmt, ...)
{
    if (!err) return PQ_ERR;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof err->msg) {
        /* Longer than a message holds (a 5,000-byte URL): formatted whole
         * once more, so that its end, the reason, is kept. */
        char *whole = malloc((size_t)n + 1);
        if (whole && vsnprintf(whole, (size_t)n + 1, fmt, again) == n) put_cut(err, whole, (size_t)n);
        free(whole);
    }
    va_end(again);
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
    put_cut(err, whole, plen + olen);
}

void pq_error_clear(pq_error *err)
{
    if (!err) return;
    err->cls = PQ_E_NONE;
    err->msg[0] = '\0';
}
