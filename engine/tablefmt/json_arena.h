/* JSON trees parsed into an arena: jansson with allocation functions that
 * bump-allocate while a thread parses into an arena, so that a Delta
 * commit's 100,000 lines (a few million small objects) cost neither a
 * malloc and a free each nor a walk to free them: the trees of a batch go
 * together with their arena.  Everything else jansson allocates comes from
 * malloc as before, behind a 16-byte header that tells the two apart.
 *
 * The functions are set (json_set_alloc_funcs) before main, once, so every
 * tree of the process is made with them.  Memory jansson hands to a caller
 * (json_dumps) is freed with pq_json_free, not free.  Under AddressSanitizer
 * no arena is used (its reports inside jansson's trees are worth more than
 * the speed): pq_json_parse_in then returns heap trees, which
 * pq_json_drop decrefs.  Thread-safe: each thread parses into a part of
 * the arena of its own. */
#ifndef PQ_JSON_ARENA_H
#define PQ_JSON_ARENA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct pq_json_part pq_json_part;

typedef struct pq_json_arena {
    uint64_t id;               /* unique in the process: a thread's part is found by it */
    pthread_mutex_t mu;        /* parts are added under it, once a thread */
    pq_json_part *parts;
} pq_json_arena;

void pq_json_arena_init(pq_json_arena *a);
/* Parses text into a's memory (json_loadb's flags); NULL when it is not
 * JSON or the arena is out of memory (err says which, as json_loadb's).
 * The tree lives until pq_json_arena_free; pq_json_drop it when done
 * (never json_decref). */
json_t *pq_json_parse_in(pq_json_arena *a, const char *text, size_t len, size_t flags, json_error_t *err);
/* A tree of pq_json_parse_in is no longer used: nothing for an arena's
 * (it goes with the arena), json_decref for a heap one. */
void pq_json_drop(json_t *tree);
/* Frees every tree parsed into a, at once. */
void pq_json_arena_free(pq_json_arena *a);

/* Frees memory jansson returned (json_dumps). */
void pq_json_free(void *p);

#endif
