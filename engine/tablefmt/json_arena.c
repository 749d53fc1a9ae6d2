/* JSON trees parsed into an arena (json_arena.h). */
#include "json_arena.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define ARENAS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENAS 0
#endif
#endif
#ifndef ARENAS
#define ARENAS 1
#endif

/* Every block jansson gets starts 16 bytes after a header that says where
 * it came from (16 keeps jansson's alignment). */
#define HEADER 16
enum { FROM_HEAP = 0x6865617021ull, FROM_ARENA = 0x6172656e61ull };

#define CHUNK_BYTES ((size_t)64 << 10)

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

struct pq_json_part {
    pq_json_part *next;
    chunk *chunks;
};

/* The part this thread parses into now (NULL: jansson's blocks come from
 * the heap), and the last arena it parsed into, with its part there. */
static _Thread_local pq_json_part *parsing;
static _Thread_local uint64_t last_arena;
static _Thread_local pq_json_part *last_part;

static void *block_from(pq_json_part *p, size_t n)
{
    if (n > SIZE_MAX - HEADER - 15) return NULL;
    size_t need = (n + HEADER + 15) & ~(size_t)15;
    chunk *c = p->chunks;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > CHUNK_BYTES ? need : CHUNK_BYTES;
        if (!(c = malloc(sizeof *c + cap))) return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = p->chunks;
        p->chunks = c;
    }
    unsigned char *b = c->data + c->used;
    c->used += need;
    *(uint64_t *)b = FROM_ARENA;
    return b + HEADER;
}

static void *json_block(size_t n)
{
    if (parsing) return block_from(parsing, n);
    if (n > SIZE_MAX - HEADER) return NULL;
    unsigned char *b = malloc(n + HEADER);
    if (!b) return NULL;
    *(uint64_t *)b = FROM_HEAP;
    return b + HEADER;
}

static void json_block_free(void *ptr)
{
    if (!ptr) return;
    unsigned char *b = (unsigned char *)ptr - HEADER;
    if (*(uint64_t *)b == FROM_HEAP) free(b);
}

/* Before main: no tree exists yet that another allocator made. */
__attribute__((constructor)) static void set_allocator(void)
{
    json_set_alloc_funcs(json_block, json_block_free);
}

void pq_json_free(void *p)
{
    json_block_free(p);
}

void pq_json_arena_init(pq_json_arena *a)
{
    static _Atomic uint64_t next_id = 1;
    memset(a, 0, sizeof *a);
    a->id = atomic_fetch_add(&next_id, 1);
    pthread_mutex_init(&a->mu, NULL);
}

static pq_json_part *part_of(pq_json_arena *a)
{
    if (last_arena == a->id) return last_part;
    pq_json_part *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_lock(&a->mu);
    p->next = a->parts;
    a->parts = p;
    pthread_mutex_unlock(&a->mu);
    last_arena = a->id;
    last_part = p;
    return p;
}

json_t *pq_json_parse_in(pq_json_arena *a, const char *text, size_t len, size_t flags, json_error_t *err)
{
    json_error_t ignore;
    pq_json_part *p = ARENAS ? part_of(a) : NULL;
    if (ARENAS && !p) {
        if (err) snprintf(err->text, sizeof err->text, "out of memory");
        return NULL;
    }
    parsing = p;
    json_t *tree = json_loadb(text, len, flags, err ? err : &ignore);
    parsing = NULL;
    return tree;
}

void pq_json_drop(json_t *tree)
{
    if (tree && *(uint64_t *)((unsigned char *)tree - HEADER) == FROM_HEAP) json_decref(tree);
}

void pq_json_arena_free(pq_json_arena *a)
{
    for (pq_json_part *p = a->parts, *next; p; p = next) {
        next = p->next;
        for (chunk *c = p->chunks, *cn; c; c = cn) {
            cn = c->next;
            free(c);
        }
        free(p);
    }
    a->parts = NULL;
    pthread_mutex_destroy(&a->mu);
}
