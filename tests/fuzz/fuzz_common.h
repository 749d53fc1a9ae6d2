/* Helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c).
 *
 * Each target defines LLVMFuzzerTestOneInput; the engine must turn any input
 * into a result or an error, never a crash, a sanitizer report or a leak.
 * Targets also check invariants (a round trip, two decoding paths that must
 * agree); a broken invariant aborts through FUZZ_CHECK with a message. */
#ifndef PQ_FUZZ_COMMON_H
#define PQ_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* Reads the input front to back; past the end every read gives zeros. */
typedef struct fuzz_input {
    const uint8_t *p, *end;
} fuzz_input;

static inline void fuzz_input_init(fuzz_input *in, const uint8_t *data, size_t size)
{
    in->p = data;
    in->end = data + size;
}

static inline size_t fuzz_left(const fuzz_input *in) { return (size_t)(in->end - in->p); }

static inline uint8_t fuzz_u8(fuzz_input *in)
{
    return in->p < in->end ? *in->p++ : 0;
}

static inline uint16_t fuzz_u16(fuzz_input *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(fuzz_input *in)
{
    uint32_t lo = fuzz_u16(in);
    return lo | (uint32_t)fuzz_u16(in) << 16;
}

/* Takes up to n bytes; *got says how many there were. */
static inline const uint8_t *fuzz_take(fuzz_input *in, size_t n, size_t *got)
{
    size_t left = fuzz_left(in);
    if (n > left) n = left;
    const uint8_t *p = in->p;
    in->p += n;
    *got = n;
    return p;
}

/* An exact-size heap copy of a part of the input that a decoder reads, so
 * that ASan flags a read even one byte past it (libFuzzer's own copy of the
 * input is exact only at its end).  malloc(0) under ASan is a valid pointer
 * to nothing. */
static inline uint8_t *fuzz_copy(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n);
    if (!c && n) abort();
    if (n) memcpy(c, p, n);
    return c;
}

/* Folds bytes into a value that is used, so that views are really read. */
static inline uint32_t fuzz_touch(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* FNV-1a of the input: a deterministic seed for choices a target makes. */
static inline uint64_t fuzz_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Keeps a value alive past the optimizer. */
static volatile uint32_t fuzz_sink;

#endif
