/* A minimal test harness: CHECK records a failure and continues, the test's
 * main returns check_report().  No framework dependency. */
#ifndef PQ_CHECK_H
#define PQ_CHECK_H

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        check_count++;                                                                    \
        if (!(cond)) {                                                                    \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                \
    do {                                                                                  \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                   \
        check_count++;                                                                    \
        if (check_a_ != check_b_) {                                                       \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %lld, %s == %lld\n",       \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_);                      \
        }                                                                                 \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                \
    do {                                                                                  \
        const char *check_a_ = (a), *check_b_ = (b);                                      \
        check_count++;                                                                    \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                  \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK_EQ_STR failed: \"%s\" != \"%s\"\n", __FILE__,   \
                    __LINE__, check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)"); \
        }                                                                                 \
    } while (0)

/* Compare a (ptr, len) text with a C string. */
#define CHECK_EQ_MEM(p, n, s)                                                             \
    do {                                                                                  \
        const char *check_s_ = (s);                                                       \
        size_t check_n_ = (n);                                                            \
        check_count++;                                                                    \
        if (check_n_ != strlen(check_s_) || memcmp((p), check_s_, check_n_) != 0) {       \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: CHECK_EQ_MEM failed: \"%.*s\" != \"%s\"\n", __FILE__, \
                    __LINE__, (int)check_n_, (const char *)(p), check_s_);                \
        }                                                                                 \
    } while (0)

/* Mappings of the size of a thread's default stack: the thread stacks the
 * process holds (an ended thread not joined keeps its own); -1 when unknown. */
static inline int check_stack_mappings(void)
{
    pthread_attr_t a;
    size_t stack = 0;
    if (pthread_getattr_default_np(&a) == 0) {
        pthread_attr_getstacksize(&a, &stack);
        pthread_attr_destroy(&a);
    }
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f || !stack) {
        if (f) fclose(f);
        return -1;
    }
    int n = 0;
    unsigned long lo, hi;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi - lo == stack) n++;
    fclose(f);
    return n;
}

static inline int check_report(void)
{
    if (check_failures) {
        fprintf(stderr, "%d of %d checks failed\n", check_failures, check_count);
        return 1;
    }
    printf("%d checks passed\n", check_count);
    return 0;
}

#endif
