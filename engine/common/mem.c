#include "mem.h"

#include <sys/mman.h>
#include <malloc.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>

struct pq_arena_block {
    pq_arena_block *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

void pq_arena_init(pq_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 16384;
    a->total = 0;
    a->reserved = 0;
}

void *pq_arena_alloc(pq_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n) return NULL;
    pq_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t size = a->block_size;
        if (need > size) size = need;
        b = malloc(sizeof *b + size);
        if (!b) return NULL;
        b->size = size;
        b->used = 0;
        a->reserved += sizeof *b + size;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    a->total += need;
    memset(p, 0, n);
    return p;
}

void *pq_arena_dup(pq_arena *a, const void *p, size_t n)
{
    void *q = pq_arena_alloc(a, n ? n : 1);
    if (q && n) memcpy(q, p, n);
    return q;
}

char *pq_arena_strndup(pq_arena *a, const char *s, size_t n)
{
    char *q = pq_arena_alloc(a, n + 1);
    if (!q) return NULL;
    memcpy(q, s, n);
    q[n] = '\0';
    return q;
}

int pq_arena_push_str(pq_arena *a, const char ***arr, int *n, const char *s)
{
    const char **grown = pq_arena_alloc(a, sizeof *grown * (size_t)(*n + 1));
    if (!grown) return -1;
    if (*n) memcpy(grown, *arr, sizeof *grown * (size_t)*n);
    grown[(*n)++] = s;
    *arr = grown;
    return 0;
}

void pq_arena_reset(pq_arena *a)
{
    pq_arena_block *b = a->head;
    if (!b) return;
    pq_arena_block *keep = b;
    while (keep->next) keep = keep->next; /* the oldest block is the first allocated */
    while (b && b != keep) {
        pq_arena_block *next = b->next;
        free(b);
        b = next;
    }
    keep->used = 0;
    keep->next = NULL;
    a->reserved = sizeof *keep + keep->size;
    a->head = keep;
    a->total = 0;
}

void pq_arena_free(pq_arena *a)
{
    pq_arena_block *b = a->head;
    while (b) {
        pq_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->total = 0;
    a->reserved = 0;
}

void pq_buf_init(pq_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void pq_buf_free(pq_buf *b)
{
    free(b->data);
    pq_buf_init(b);
}

int pq_buf_reserve(pq_buf *b, size_t extra)
{
    size_t need;
    if (pq_add_overflows(b->len, extra, &need)) return -1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int pq_buf_append(pq_buf *b, const void *p, size_t n)
{
    if (pq_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int pq_buf_puts(pq_buf *b, const char *s)
{
    return pq_buf_append(b, s, strlen(s));
}

char *pq_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), n = strlen(name);
    char *p = malloc(a + n + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (a) p[k++] = '/';
    memcpy(p + k, name, n + 1);
    return p;
}

int pq_buf_cat(pq_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (pq_buf_reserve(b, n + 1)) return -1;
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
    return 0;
}

int pq_buf_printf(pq_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if (pq_buf_reserve(b, (size_t)n + 1)) return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Per thread: after this many bytes, a large buffer is mostly the thread's
 * own freed memory coming back from malloc, already mapped in, where the
 * madvise would only walk page tables (a tenth of a 20M-row scan's CPU). */
#define PQ_PREFAULT_BUDGET (16u << 20)

void pq_prefault(void *p, size_t len)
{
    static _Thread_local size_t prefaulted;
    if (!p || len < (256u << 10) || prefaulted >= PQ_PREFAULT_BUDGET)
        return;
    prefaulted += len;
    static _Thread_local long page; /* per thread: no race on the first call */
    if (!page) page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t start = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)p + len) & ~((uintptr_t)page - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}

void pq_heap_stats_get(pq_heap_stats *out)
{
    *out = (pq_heap_stats){0};
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2(); /* all arenas */
    out->in_use = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
    out->free_held = (uint64_t)mi.fordblks;
#endif
}

uint64_t pq_heap_release(uint64_t keep)
{
    pq_heap_stats h;
    pq_heap_stats_get(&h);
#ifdef __GLIBC__
    if (h.free_held > keep) malloc_trim(0);
#else
    (void)keep;
#endif
    return h.free_held;
}
