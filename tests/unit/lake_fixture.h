/* A lake over a local directory, as the lake's unit tests open it
 * (test_lake, test_uploads): 2 threads, a 64 MiB result cache, errors only
 * in its log.  NULL (the reason on stderr) when it cannot be opened. */
#ifndef PQ_TEST_LAKE_FIXTURE_H
#define PQ_TEST_LAKE_FIXTURE_H

#include <stdint.h>
#include <stdio.h>

#include "lake.h"

static inline pq_lake *open_test_lake(const char *root, const char *cache_dir, uint64_t metadata_ttl_ms)
{
    pq_error err;
    pq_error_clear(&err);
    pq_store *st = NULL;
    if (pq_store_local_new(root, &st, &err) != PQ_OK) {
        fprintf(stderr, "store: %s\n", err.msg);
        return NULL;
    }
    pq_lake_opts o = {0};
    o.store = st;
    o.metadata_ttl_ms = metadata_ttl_ms;
    o.threads = 2;
    o.cache_dir = cache_dir;
    o.cache_size = 64u << 20;
    o.log_level = PQ_LOG_ERROR;
    pq_lake *l = NULL;
    if (pq_lake_open(&o, &l, &err) != PQ_OK) {
        fprintf(stderr, "lake: %s\n", err.msg);
        return NULL;
    }
    return l;
}

#endif
