/* Libraries loaded on first use (libcurl, libcrypto): a process that never
 * needs one pays nothing for it at start (docs/architecture.md, Libraries). */
#ifndef PQ_DLIB_H
#define PQ_DLIB_H

#include <stdbool.h>
#include <stddef.h>

/* One symbol to look up, and where its address goes (a function pointer). */
typedef struct pq_dl_sym {
    const char *name;
    void *slot;
} pq_dl_sym;

/* Opens the first of `sonames` that loads (RTLD_NOW | RTLD_LOCAL) and fills
 * every slot.  false with a message in why ("cannot load WHAT: ...", "WHAT
 * has no SYMBOL") otherwise; the library then is not used. */
bool pq_dl_load(const char *what, const char *const *sonames, size_t n_sonames, const pq_dl_sym *syms, size_t n_syms,
                char *why, size_t why_cap);

#endif
