/* Memory helpers: a bump arena for metadata that lives and dies together, and a
 * growable byte buffer for output text.  Both keep the hot paths free of
 * per-value malloc. */
#ifndef PQ_MEM_H
#define PQ_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- arena ---- */
typedef struct pq_arena_block pq_arena_block;
typedef struct pq_arena {
    pq_arena_block *head;
    size_t block_size;
    size_t total;      /* bytes handed out, for limits and stats */
    size_t reserved;   /* bytes of its blocks: the memory it holds */
} pq_arena;

/* Maps in the pages of a large new buffer (page and chunk buffers) with one
 * system call instead of a page fault per 4 KiB, which costs microseconds
 * each in a virtual machine.  A hint: small buffers, old kernels and errors
 * are left to fault as usual, and a thread stops after its first 16 MiB
 * (later buffers are mostly its freed ones, reused). */
void pq_prefault(void *p, size_t len);

/* The process heap as the allocator sees it: bytes handed out and bytes it
 * holds free (returned to the system only when trimmed).  Zeros where the
 * C library does not tell. */
typedef struct pq_heap_stats {
    uint64_t in_use, free_held;
} pq_heap_stats;
void pq_heap_stats_get(pq_heap_stats *out);
/* Gives the heap's free pages back to the system when it holds more than
 * `keep` bytes free: a daemon whose threads each grew an arena under load
 * would otherwise keep its peak for good.  Returns the bytes it held free
 * before. */
uint64_t pq_heap_release(uint64_t keep);

void pq_arena_init(pq_arena *a, size_t block_size);
/* Returns NULL on allocation failure.  Memory is 16-byte aligned and zeroed. */
void *pq_arena_alloc(pq_arena *a, size_t n);
void *pq_arena_dup(pq_arena *a, const void *p, size_t n);
char *pq_arena_strndup(pq_arena *a, const char *s, size_t n);
/* Appends s to the arena-allocated array *arr of *n strings (grown in the
 * arena, copied each time: for short lists).  -1 when out of memory. */
int pq_arena_push_str(pq_arena *a, const char ***arr, int *n, const char *s);
/* Frees every block but the first, which is kept for reuse. */
void pq_arena_reset(pq_arena *a);
void pq_arena_free(pq_arena *a);

/* "dir/name" ("name" when dir is ""), malloc'd; NULL when out of memory. */
char *pq_path_join(const char *dir, const char *name);


/* ---- growable buffer ---- */
typedef struct pq_buf {
    char *data;
    size_t len;
    size_t cap;
} pq_buf;

void pq_buf_init(pq_buf *b);
void pq_buf_free(pq_buf *b);
/* Ensures room for `extra` more bytes; returns 0 or -1 on allocation failure. */
int pq_buf_reserve(pq_buf *b, size_t extra);
int pq_buf_append(pq_buf *b, const void *p, size_t n);
int pq_buf_puts(pq_buf *b, const char *s);
/* Appends s and keeps the bytes NUL-terminated (building a C string). */
int pq_buf_cat(pq_buf *b, const char *s);
int pq_buf_printf(pq_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void pq_buf_clear(pq_buf *b) { b->len = 0; }

/* FNV-1a of n bytes, or of a NUL-terminated string: for the small hash
 * tables of caches. */
static inline uint64_t pq_hash_bytes(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}
static inline uint64_t pq_hash_str(const char *s)
{
    return pq_hash_bytes(s, strlen(s));
}

/* Checked size arithmetic for lengths read from files. */
static inline int pq_add_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_add_overflow(a, b, out);
}
static inline int pq_mul_overflows(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

#endif
