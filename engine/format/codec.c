/* Page compression codecs.
 *
 * Every decoder writes into the caller's buffer of exactly dst_len bytes (the
 * page header's uncompressed_page_size) and must produce exactly that many
 * bytes.  To tell "the stream holds more than dst_len bytes" apart from "the
 * stream is corrupt", the streaming decoders are handed a one-byte spill buffer
 * once dst is full: any byte landing there means the page is longer than its
 * header says, and nothing is ever written past dst + dst_len.
 *
 * Library contexts (zstd, zlib, LZ4 frame) are cached per thread behind a
 * pthread key, so a scan allocates them once per worker rather than per page,
 * and the key's destructor frees them when the worker exits. */
#define ZLIB_CONST

#include "codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <errno.h>
#include <limits.h>
#include <lz4.h>
#include <lz4frame.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

enum {
    PQ_ZSTD_DEFAULT_LEVEL = 3,
    PQ_GZIP_DEFAULT_LEVEL = 6,
    PQ_BROTLI_DEFAULT_QUALITY = 8, /* what arrow writes; 11 is far too slow for pages */
    ZLIB_WINDOW_BITS = 15,
    ZLIB_AUTODETECT_HEADER = 32, /* added to windowBits: accept zlib or gzip */
    ZLIB_GZIP_HEADER = 16,       /* added to windowBits: write a gzip header */
    ZLIB_MEM_LEVEL = 8,
    HADOOP_LZ4_PREFIX = 8,       /* [BE32 uncompressed length][BE32 compressed length] */
};

/* ------------------------------------------------------------------------ */
/* Per-thread context cache                                                   */
/* ------------------------------------------------------------------------ */

typedef struct codec_thread_cache {
    ZSTD_DCtx *zstd_decoder;
    ZSTD_CCtx *zstd_encoder;
    LZ4F_dctx *lz4_frame_decoder;
    z_stream inflater;
    int inflater_ready;
    z_stream deflater;
    int deflater_ready;
    int deflater_level; /* deflate's level is fixed at init; re-init on change */
} codec_thread_cache;

static pthread_key_t cache_key;
static pthread_once_t cache_key_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;

static void cache_destroy(void *p)
{
    codec_thread_cache *c = p;
    if (!c) return;
    ZSTD_freeDCtx(c->zstd_decoder);
    ZSTD_freeCCtx(c->zstd_encoder);
    if (c->lz4_frame_decoder) LZ4F_freeDecompressionContext(c->lz4_frame_decoder);
    if (c->inflater_ready) inflateEnd(&c->inflater);
    if (c->deflater_ready) deflateEnd(&c->deflater);
    free(c);
}

static void cache_key_create(void)
{
    cache_key_ok = pthread_key_create(&cache_key, cache_destroy) == 0;
}

static codec_thread_cache *thread_cache(pq_error *err)
{
    pthread_once(&cache_key_once, cache_key_create);
    if (!cache_key_ok) {
        pq_fail(err, PQ_E_NOMEM, "cannot create the codec thread-local key");
        return NULL;
    }
    codec_thread_cache *c = pthread_getspecific(cache_key);
    if (c) return c;
    c = calloc(1, sizeof *c);
    if (!c || pthread_setspecific(cache_key, c) != 0) {
        free(c);
        pq_fail(err, PQ_E_NOMEM, "out of memory allocating codec contexts");
        return NULL;
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Error helpers                                                              */
/* ------------------------------------------------------------------------ */

static int fail_length(pq_error *err, pq_codec codec, size_t got, size_t want)
{
    return pq_fail(err, PQ_E_CORRUPT, "%s page decompressed to %zu bytes, header says %zu",
                   pq_codec_name(codec), got, want);
}

static int fail_overlong(pq_error *err, pq_codec codec, size_t want)
{
    return pq_fail(err, PQ_E_CORRUPT,
                   "%s page decompresses to more than the %zu bytes its header says",
                   pq_codec_name(codec), want);
}

static int fail_corrupt(pq_error *err, pq_codec codec, const char *detail)
{
    return pq_fail(err, PQ_E_CORRUPT, "%s page is corrupt: %s", pq_codec_name(codec), detail);
}

static int fail_nomem(pq_error *err, pq_codec codec)
{
    return pq_fail(err, PQ_E_NOMEM, "out of memory in the %s codec", pq_codec_name(codec));
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static uint32_t read_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void write_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ------------------------------------------------------------------------ */
/* Decoders                                                                   */
/* ------------------------------------------------------------------------ */

static int decompress_snappy(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                             pq_error *err)
{
    size_t declared;
    if (snappy_uncompressed_length((const char *)src, src_len, &declared) != SNAPPY_OK)
        return fail_corrupt(err, PQ_CODEC_SNAPPY, "invalid length prefix");
    /* Checking the prefix first turns a mismatch into a precise message and
     * keeps snappy from ever being asked to fill a buffer of the wrong size. */
    if (declared != dst_len) return fail_length(err, PQ_CODEC_SNAPPY, declared, dst_len);
    size_t out_len = dst_len;
    if (snappy_uncompress((const char *)src, src_len, (char *)dst, &out_len) != SNAPPY_OK)
        return fail_corrupt(err, PQ_CODEC_SNAPPY, "invalid compressed data");
    if (out_len != dst_len) return fail_length(err, PQ_CODEC_SNAPPY, out_len, dst_len);
    return PQ_OK;
}

/* The thread's inflater, initialised once and reset for each page. */
static int fresh_inflater(codec_thread_cache *cache, pq_error *err)
{
    z_stream *zs = &cache->inflater;
    if (!cache->inflater_ready) {
        memset(zs, 0, sizeof *zs);
        int rc = inflateInit2(zs, ZLIB_WINDOW_BITS + ZLIB_AUTODETECT_HEADER);
        if (rc == Z_MEM_ERROR) return fail_nomem(err, PQ_CODEC_GZIP);
        if (rc != Z_OK) return fail_corrupt(err, PQ_CODEC_GZIP, "cannot initialise zlib");
        cache->inflater_ready = 1;
    } else if (inflateReset(zs) != Z_OK) {
        return fail_corrupt(err, PQ_CODEC_GZIP, "cannot reset zlib");
    }
    return PQ_OK;
}

static int decompress_gzip(codec_thread_cache *cache, const uint8_t *src, size_t src_len,
                           uint8_t *dst, size_t dst_len, pq_error *err)
{
    PQ_TRY(fresh_inflater(cache, err));
    z_stream *zs = &cache->inflater;

    size_t in_pos = 0, out_pos = 0;
    uint8_t spill;
    for (;;) {
        /* zlib counts in uInt; feed oversized buffers in slices. */
        size_t in_slice = min_size(src_len - in_pos, UINT_MAX);
        int spilling = out_pos == dst_len;
        size_t out_slice = spilling ? 1 : min_size(dst_len - out_pos, UINT_MAX);
        zs->next_in = src + in_pos;
        zs->avail_in = (uInt)in_slice;
        zs->next_out = spilling ? &spill : dst + out_pos;
        zs->avail_out = (uInt)out_slice;

        int rc = inflate(zs, Z_NO_FLUSH);
        size_t consumed = in_slice - zs->avail_in;
        size_t produced = out_slice - zs->avail_out;
        in_pos += consumed;
        if (spilling && produced) return fail_overlong(err, PQ_CODEC_GZIP, dst_len);
        if (!spilling) out_pos += produced;

        if (rc == Z_STREAM_END) {
            if (in_pos == src_len) break;
            /* Another gzip member follows (files written by concatenating
             * members, e.g. parquet-testing's concatenated_gzip_members):
             * decode it as a continuation of the same page. */
            if (inflateReset(zs) != Z_OK)
                return fail_corrupt(err, PQ_CODEC_GZIP, "cannot reset zlib");
            continue;
        }
        if (rc == Z_OK && (consumed || produced)) continue;
        if (rc == Z_OK || rc == Z_BUF_ERROR) {
            if (in_pos == src_len) return fail_corrupt(err, PQ_CODEC_GZIP, "stream is truncated");
            return fail_corrupt(err, PQ_CODEC_GZIP, "decoder made no progress");
        }
        if (rc == Z_MEM_ERROR) return fail_nomem(err, PQ_CODEC_GZIP);
        if (rc == Z_NEED_DICT)
            return fail_corrupt(err, PQ_CODEC_GZIP, "stream needs a preset dictionary");
        return fail_corrupt(err, PQ_CODEC_GZIP, zs->msg ? zs->msg : "invalid deflate data");
    }
    if (out_pos != dst_len) return fail_length(err, PQ_CODEC_GZIP, out_pos, dst_len);
    return PQ_OK;
}

static int decompress_brotli(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                             pq_error *err)
{
    /* A brotli decoder cannot be reset once a stream has finished, so there is
     * nothing worth caching: one instance per page. */
    BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!st) return fail_nomem(err, PQ_CODEC_BROTLI);

    size_t avail_in = src_len, out_pos = 0;
    const uint8_t *next_in = src;
    uint8_t spill;
    int rc = PQ_OK;
    for (;;) {
        int spilling = out_pos == dst_len;
        size_t out_cap = spilling ? 1 : dst_len - out_pos;
        size_t avail_out = out_cap;
        uint8_t *next_out = spilling ? &spill : dst + out_pos;
        BrotliDecoderResult r =
            BrotliDecoderDecompressStream(st, &avail_in, &next_in, &avail_out, &next_out, NULL);
        size_t produced = out_cap - avail_out;
        if (spilling && produced) {
            rc = fail_overlong(err, PQ_CODEC_BROTLI, dst_len);
            break;
        }
        if (!spilling) out_pos += produced;
        if (r == BROTLI_DECODER_RESULT_SUCCESS) {
            if (avail_in != 0)
                rc = fail_corrupt(err, PQ_CODEC_BROTLI, "trailing bytes after the stream");
            else if (out_pos != dst_len)
                rc = fail_length(err, PQ_CODEC_BROTLI, out_pos, dst_len);
            break;
        }
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
            if (spilling) { /* no room even in the spill byte: cannot happen, but never loop */
                rc = fail_overlong(err, PQ_CODEC_BROTLI, dst_len);
                break;
            }
            continue;
        }
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
            rc = fail_corrupt(err, PQ_CODEC_BROTLI, "stream is truncated");
            break;
        }
        rc = fail_corrupt(err, PQ_CODEC_BROTLI,
                          BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)));
        break;
    }
    BrotliDecoderDestroyInstance(st);
    return rc;
}

static int decompress_zstd(codec_thread_cache *cache, const uint8_t *src, size_t src_len,
                           uint8_t *dst, size_t dst_len, pq_error *err)
{
    if (!cache->zstd_decoder) {
        cache->zstd_decoder = ZSTD_createDCtx();
        if (!cache->zstd_decoder) return fail_nomem(err, PQ_CODEC_ZSTD);
    }
    /* The one-shot call decodes every concatenated (and skippable) frame and
     * refuses to write beyond dst_len, reporting that as dstSize_tooSmall. */
    size_t got = ZSTD_decompressDCtx(cache->zstd_decoder, dst, dst_len, src, src_len);
    if (ZSTD_isError(got)) {
        if (ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall)
            return fail_overlong(err, PQ_CODEC_ZSTD, dst_len);
        if (ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
            return fail_nomem(err, PQ_CODEC_ZSTD);
        return fail_corrupt(err, PQ_CODEC_ZSTD, ZSTD_getErrorName(got));
    }
    if (got != dst_len) return fail_length(err, PQ_CODEC_ZSTD, got, dst_len);
    return PQ_OK;
}

static int decompress_lz4_raw(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                              pq_error *err)
{
    if (src_len > INT_MAX || dst_len > INT_MAX)
        return pq_fail(err, PQ_E_UNSUPPORTED, "LZ4_RAW page of %zu bytes is too large", dst_len);
    /* LZ4_decompress_safe stops at the capacity, so an over-long block reads
     * as an error rather than as a length we could report. */
    int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len, (int)dst_len);
    if (got < 0)
        return fail_corrupt(err, PQ_CODEC_LZ4_RAW,
                            "invalid LZ4 block or longer than the header says");
    if ((size_t)got != dst_len) return fail_length(err, PQ_CODEC_LZ4_RAW, (size_t)got, dst_len);
    return PQ_OK;
}

/* The LZ4 codec id has meant three layouts over the years; each attempt says
 * how it went so the final error can be the most telling one. */
typedef enum lz4_attempt {
    LZ4_ATTEMPT_OK,
    LZ4_ATTEMPT_INVALID, /* not this layout (or corrupt) */
    LZ4_ATTEMPT_SHORT,   /* valid, but fewer bytes than dst_len */
    LZ4_ATTEMPT_LONG,    /* valid so far, but more bytes than dst_len */
} lz4_attempt;

/* Hadoop's BlockCompressorStream layout: blocks of
 *   [BE32 uncompressed length] ([BE32 compressed length][LZ4 block])+
 * where the chunks of one block decompress to its uncompressed length.
 * parquet-mr through Hadoop writes one chunk per block unless a block
 * exceeds the codec's buffer; arrow writes exactly one block with one chunk. */
static lz4_attempt lz4_try_hadoop(const uint8_t *src, size_t src_len, uint8_t *dst,
                                  size_t dst_len, size_t *out_len)
{
    size_t in_pos = 0, out_pos = 0;
    *out_len = 0;
    if (src_len == 0) return LZ4_ATTEMPT_INVALID;
    while (in_pos < src_len) {
        if (src_len - in_pos < 4) return LZ4_ATTEMPT_INVALID;
        size_t block_len = read_be32(src + in_pos);
        in_pos += 4;
        if (block_len > dst_len - out_pos) return LZ4_ATTEMPT_LONG;
        size_t block_done = 0;
        do {
            if (src_len - in_pos < 4) return LZ4_ATTEMPT_INVALID;
            size_t chunk_len = read_be32(src + in_pos);
            in_pos += 4;
            if (chunk_len == 0 || chunk_len > src_len - in_pos || chunk_len > INT_MAX ||
                block_len - block_done > INT_MAX)
                return LZ4_ATTEMPT_INVALID;
            int got = LZ4_decompress_safe((const char *)src + in_pos,
                                          (char *)dst + out_pos + block_done, (int)chunk_len,
                                          (int)(block_len - block_done));
            if (got < 0) return LZ4_ATTEMPT_INVALID;
            /* A chunk adding nothing to a non-empty block is not Hadoop framing. */
            if (got == 0 && block_len != 0) return LZ4_ATTEMPT_INVALID;
            in_pos += chunk_len;
            block_done += (size_t)got;
        } while (block_done < block_len);
        out_pos += block_len;
    }
    *out_len = out_pos;
    return out_pos == dst_len ? LZ4_ATTEMPT_OK : LZ4_ATTEMPT_SHORT;
}

/* parquet-cpp before 2.0 (arrow < 0.17) wrote a bare LZ4 block. */
static lz4_attempt lz4_try_block(const uint8_t *src, size_t src_len, uint8_t *dst,
                                 size_t dst_len, size_t *out_len)
{
    *out_len = 0;
    if (src_len == 0 || src_len > INT_MAX || dst_len > INT_MAX) return LZ4_ATTEMPT_INVALID;
    int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len, (int)dst_len);
    if (got < 0) return LZ4_ATTEMPT_INVALID;
    *out_len = (size_t)got;
    return (size_t)got == dst_len ? LZ4_ATTEMPT_OK : LZ4_ATTEMPT_SHORT;
}

/* Some writers (older arrow-rs, parquet-cpp briefly) used the LZ4 frame
 * format.  Several concatenated frames are decoded back to back. */
static lz4_attempt lz4_try_frame(LZ4F_dctx *dctx, const uint8_t *src, size_t src_len,
                                 uint8_t *dst, size_t dst_len, size_t *out_len)
{
    size_t in_pos = 0, out_pos = 0;
    uint8_t spill;
    lz4_attempt result;
    for (;;) {
        int spilling = out_pos == dst_len;
        size_t in_avail = src_len - in_pos;
        size_t out_avail = spilling ? 1 : dst_len - out_pos;
        size_t hint = LZ4F_decompress(dctx, spilling ? &spill : dst + out_pos, &out_avail,
                                      src + in_pos, &in_avail, NULL);
        if (LZ4F_isError(hint)) {
            result = LZ4_ATTEMPT_INVALID;
            break;
        }
        in_pos += in_avail;
        if (spilling && out_avail) {
            result = LZ4_ATTEMPT_LONG;
            break;
        }
        if (!spilling) out_pos += out_avail;
        if (hint == 0) { /* a frame ended; the context is ready for the next one */
            if (in_pos == src_len) {
                result = out_pos == dst_len ? LZ4_ATTEMPT_OK : LZ4_ATTEMPT_SHORT;
                break;
            }
            continue;
        }
        if (in_avail == 0 && out_avail == 0) { /* wants input we do not have */
            result = LZ4_ATTEMPT_INVALID;
            break;
        }
    }
    *out_len = out_pos;
    return result;
}

static int decompress_lz4(codec_thread_cache *cache, const uint8_t *src, size_t src_len,
                          uint8_t *dst, size_t dst_len, pq_error *err)
{
    size_t got = 0, mismatch_len = 0;
    lz4_attempt mismatch = LZ4_ATTEMPT_INVALID;

    lz4_attempt a = lz4_try_hadoop(src, src_len, dst, dst_len, &got);
    if (a == LZ4_ATTEMPT_OK) return PQ_OK;
    if (a == LZ4_ATTEMPT_SHORT) {
        mismatch = a;
        mismatch_len = got;
    }

    a = lz4_try_block(src, src_len, dst, dst_len, &got);
    if (a == LZ4_ATTEMPT_OK) return PQ_OK;
    if (a == LZ4_ATTEMPT_SHORT && mismatch == LZ4_ATTEMPT_INVALID) {
        mismatch = a;
        mismatch_len = got;
    }

    if (!cache->lz4_frame_decoder &&
        LZ4F_isError(LZ4F_createDecompressionContext(&cache->lz4_frame_decoder, LZ4F_VERSION))) {
        cache->lz4_frame_decoder = NULL;
        return fail_nomem(err, PQ_CODEC_LZ4);
    }
    a = lz4_try_frame(cache->lz4_frame_decoder, src, src_len, dst, dst_len, &got);
    if (a == LZ4_ATTEMPT_OK) return PQ_OK;
    /* A context is clean after a completed frame, but one left mid-frame must
     * not be recycled: LZ4F_resetDecompressionContext in lz4 < 1.9.5 keeps a
     * stale frameRemainingSize (lz4 issue #1227) that fails the next frame
     * without a content size.  Failures are rare, so start afresh. */
    LZ4F_freeDecompressionContext(cache->lz4_frame_decoder);
    cache->lz4_frame_decoder = NULL;
    /* A frame is self-describing (magic number, checksums), so its verdict on
     * length is the most trustworthy of the three. */
    if (a == LZ4_ATTEMPT_SHORT || a == LZ4_ATTEMPT_LONG) {
        mismatch = a;
        mismatch_len = got;
    }

    if (mismatch == LZ4_ATTEMPT_SHORT) return fail_length(err, PQ_CODEC_LZ4, mismatch_len, dst_len);
    if (mismatch == LZ4_ATTEMPT_LONG) return fail_overlong(err, PQ_CODEC_LZ4, dst_len);
    return fail_corrupt(err, PQ_CODEC_LZ4,
                        "not Hadoop-framed LZ4, a raw LZ4 block or an LZ4 frame of the "
                        "header's length");
}

static int codec_is_known(pq_codec codec)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
    case PQ_CODEC_SNAPPY:
    case PQ_CODEC_GZIP:
    case PQ_CODEC_LZO:
    case PQ_CODEC_BROTLI:
    case PQ_CODEC_LZ4:
    case PQ_CODEC_ZSTD:
    case PQ_CODEC_LZ4_RAW:
        return 1;
    }
    return 0;
}

static int fail_unsupported(pq_codec codec, pq_error *err)
{
    if (codec == PQ_CODEC_LZO)
        return pq_fail(err, PQ_E_UNSUPPORTED, "LZO compression is not supported");
    return pq_fail(err, PQ_E_UNSUPPORTED, "unknown compression codec id %d", (int)codec);
}

int pq_decompress(pq_codec codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                  size_t dst_len, pq_error *err)
{
    if (!pq_codec_supported(codec)) return fail_unsupported(codec, err);
    if ((!src && src_len) || (!dst && dst_len))
        return pq_fail(err, PQ_E_USAGE, "pq_decompress: NULL buffer with a non-zero length");

    /* Libraries disagree on NULL pointers for empty buffers; give them a real
     * (never dereferenced beyond length 0) address instead. */
    static const uint8_t empty_src[1];
    uint8_t empty_dst[1];
    if (!src) src = empty_src;
    if (!dst) dst = empty_dst;

    /* An empty page with no payload (seen in data page v2 files whose values
     * are all null) is valid whatever the codec: nothing was compressed. */
    if (src_len == 0 && dst_len == 0) return PQ_OK;

    codec_thread_cache *cache = NULL;
    if (codec == PQ_CODEC_GZIP || codec == PQ_CODEC_ZSTD || codec == PQ_CODEC_LZ4) {
        cache = thread_cache(err);
        if (!cache) return PQ_ERR;
    }

    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (src_len != dst_len)
            return pq_fail(err, PQ_E_CORRUPT, "UNCOMPRESSED page holds %zu bytes, header says %zu",
                           src_len, dst_len);
        memcpy(dst, src, dst_len);
        return PQ_OK;
    case PQ_CODEC_SNAPPY: return decompress_snappy(src, src_len, dst, dst_len, err);
    case PQ_CODEC_GZIP: return decompress_gzip(cache, src, src_len, dst, dst_len, err);
    case PQ_CODEC_BROTLI: return decompress_brotli(src, src_len, dst, dst_len, err);
    case PQ_CODEC_ZSTD: return decompress_zstd(cache, src, src_len, dst, dst_len, err);
    case PQ_CODEC_LZ4_RAW: return decompress_lz4_raw(src, src_len, dst, dst_len, err);
    case PQ_CODEC_LZ4: return decompress_lz4(cache, src, src_len, dst, dst_len, err);
    case PQ_CODEC_LZO: break;
    }
    return fail_unsupported(codec, err);
}

/* ------------------------------------------------------------------------ */
/* Prefix decoding                                                            */
/* ------------------------------------------------------------------------ */

static int prefix_zstd(codec_thread_cache *cache, pq_prefix_cursor *cur, const uint8_t *src, size_t src_len,
                       uint8_t *dst, size_t want, pq_error *err)
{
    if (!cache->zstd_decoder) {
        cache->zstd_decoder = ZSTD_createDCtx();
        if (!cache->zstd_decoder) return fail_nomem(err, PQ_CODEC_ZSTD);
    }
    ZSTD_DCtx *d = cache->zstd_decoder;
    if (!cur->started) ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    cur->started = 1;
    ZSTD_outBuffer out = {dst, want, cur->out_pos};
    ZSTD_inBuffer in = {src, src_len, cur->in_pos};
    /* The streaming decoder works a block (at most 128 KiB) at a time and
     * stops once `want` bytes are out: the rest of the page is never decoded.
     * Input that ends inside a block is kept by the decoder until more comes. */
    cur->more = 0;
    while (out.pos < want) {
        size_t in_before = in.pos, out_before = out.pos;
        size_t rc = ZSTD_decompressStream(d, &out, &in);
        if (ZSTD_isError(rc)) {
            if (ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation) return fail_nomem(err, PQ_CODEC_ZSTD);
            return fail_corrupt(err, PQ_CODEC_ZSTD, ZSTD_getErrorName(rc));
        }
        if (rc == 0 && in.pos == in.size) break; /* the last frame ended */
        if (in.pos == in_before && out.pos == out_before) {
            if (in.pos < in.size) return fail_corrupt(err, PQ_CODEC_ZSTD, "no progress");
            cur->more = rc; /* needs more input: about this much */
            break;
        }
    }
    cur->in_pos = in.pos;
    cur->out_pos = out.pos;
    return PQ_OK;
}

static int prefix_gzip(codec_thread_cache *cache, pq_prefix_cursor *cur, const uint8_t *src, size_t src_len,
                       uint8_t *dst, size_t want, pq_error *err)
{
    if (!cur->started) PQ_TRY(fresh_inflater(cache, err));
    cur->started = 1;
    z_stream *zs = &cache->inflater;
    if (src_len > UINT_MAX || want > UINT_MAX) return pq_fail(err, PQ_E_UNSUPPORTED, "page too large");
    zs->next_in = src + cur->in_pos;
    zs->avail_in = (uInt)(src_len - cur->in_pos);
    zs->next_out = dst + cur->out_pos;
    zs->avail_out = (uInt)(want - cur->out_pos);
    int rc = inflate(zs, Z_SYNC_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        if (rc == Z_MEM_ERROR) return fail_nomem(err, PQ_CODEC_GZIP);
        return fail_corrupt(err, PQ_CODEC_GZIP, zs->msg ? zs->msg : "invalid deflate data");
    }
    /* A member that ends early (concatenated members) leaves the output
     * short: the caller then decodes the whole page. */
    cur->in_pos = src_len - zs->avail_in;
    cur->out_pos = want - zs->avail_out;
    return PQ_OK;
}

static int prefix_codec(pq_codec codec, pq_prefix_cursor *cur, const uint8_t *src, size_t src_len, uint8_t *dst,
                        size_t want, size_t dst_len, pq_error *err)
{
    codec_thread_cache *cache = NULL;
    int rc;
    switch (codec) {
    case PQ_CODEC_ZSTD:
        if (!(cache = thread_cache(err))) return PQ_ERR;
        rc = prefix_zstd(cache, cur, src, src_len, dst, want, err);
        break;
    case PQ_CODEC_GZIP:
        if (!(cache = thread_cache(err))) return PQ_ERR;
        rc = prefix_gzip(cache, cur, src, src_len, dst, want, err);
        break;
    case PQ_CODEC_LZ4_RAW: {
        /* one block, decoded from its start each time (it is fast) */
        if (src_len > INT_MAX || dst_len > INT_MAX)
            return pq_fail(err, PQ_E_UNSUPPORTED, "LZ4_RAW page of %zu bytes is too large", dst_len);
        int n = LZ4_decompress_safe_partial((const char *)src, (char *)dst, (int)src_len, (int)want,
                                            (int)dst_len);
        if (n < 0) {
            rc = fail_corrupt(err, PQ_CODEC_LZ4_RAW, "invalid LZ4 block");
            break;
        }
        cur->out_pos = (size_t)n;
        rc = PQ_OK;
        break;
    }
    default:
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s cannot decode a page's first bytes alone", pq_codec_name(codec));
        break;
    }
    return rc;
}

bool pq_codec_decodes_prefix(pq_codec codec)
{
    return codec == PQ_CODEC_ZSTD || codec == PQ_CODEC_GZIP || codec == PQ_CODEC_LZ4_RAW;
}

int pq_decompress_prefix(pq_codec codec, pq_prefix_cursor *cur, const uint8_t *src, size_t src_len, uint8_t *dst,
                         size_t want, size_t dst_len, size_t *got, pq_error *err)
{
    pq_prefix_cursor fresh = {0, 0, 0, 0};
    if (!cur) cur = &fresh;
    if (want > dst_len) want = dst_len;
    int rc;
    if (!src || !dst || want == 0) {
        rc = pq_fail(err, PQ_E_USAGE, "pq_decompress_prefix: nothing to decode");
    } else if (cur->in_pos > src_len || cur->out_pos > want) {
        rc = pq_fail(err, PQ_E_USAGE, "pq_decompress_prefix: the input or the output went back");
    } else {
        rc = prefix_codec(codec, cur, src, src_len, dst, want, dst_len, err);
    }
    if (rc != PQ_OK) {
        *cur = (pq_prefix_cursor){0, 0, 0, 0}; /* a later call starts over */
        *got = 0;
        return rc;
    }
    *got = cur->out_pos;
    return PQ_OK;
}

/* ------------------------------------------------------------------------ */
/* Encoders                                                                   */
/* ------------------------------------------------------------------------ */

/* a + b, saturating: a bound that overflows must still be "too much". */
static size_t add_saturating(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

static size_t lz4_block_bound(size_t n)
{
    if (n <= LZ4_MAX_INPUT_SIZE) return (size_t)LZ4_compressBound((int)n);
    /* Too large to compress at all; keep the bound finite and honest. */
    return add_saturating(n, n / 255 + 16);
}

size_t pq_compress_bound(pq_codec codec, size_t n)
{
    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED: return n;
    case PQ_CODEC_SNAPPY:
        if (n > SIZE_MAX / 2) return SIZE_MAX;
        return snappy_max_compressed_length(n);
    case PQ_CODEC_GZIP:
        /* zlib's compressBound() formula (default window and memory level)
         * plus room for the 18-byte gzip wrapper instead of zlib's 6, and a
         * margin for the extra block boundary of each uInt-sized slice. */
        return add_saturating(n, n / 4096 + n / 16384 + n / (1u << 25) + 13 + 18 +
                                     5 * (n / UINT_MAX + 1));
    case PQ_CODEC_BROTLI: {
        size_t b = BrotliEncoderMaxCompressedSize(n);
        return b ? b : SIZE_MAX;
    }
    case PQ_CODEC_ZSTD: {
        size_t b = ZSTD_compressBound(n);
        return ZSTD_isError(b) ? SIZE_MAX : b;
    }
    case PQ_CODEC_LZ4_RAW: return lz4_block_bound(n);
    case PQ_CODEC_LZ4: return add_saturating(lz4_block_bound(n), HADOOP_LZ4_PREFIX);
    case PQ_CODEC_LZO: break;
    }
    return n;
}

static int fail_small_output(pq_error *err, pq_codec codec, size_t cap)
{
    return pq_fail(err, PQ_E_USAGE, "%s output buffer of %zu bytes is too small",
                   pq_codec_name(codec), cap);
}

static int fail_level(pq_error *err, pq_codec codec, int level, int lo, int hi)
{
    return pq_fail(err, PQ_E_USAGE, "%s compression level %d is outside %d..%d",
                   pq_codec_name(codec), level, lo, hi);
}

static int compress_gzip(codec_thread_cache *cache, int level, const uint8_t *src, size_t n,
                         uint8_t *dst, size_t dst_cap, size_t *out_len, pq_error *err)
{
    z_stream *zs = &cache->deflater;
    if (cache->deflater_ready && cache->deflater_level != level) {
        deflateEnd(zs);
        cache->deflater_ready = 0;
    }
    if (!cache->deflater_ready) {
        memset(zs, 0, sizeof *zs);
        int rc = deflateInit2(zs, level, Z_DEFLATED, ZLIB_WINDOW_BITS + ZLIB_GZIP_HEADER,
                              ZLIB_MEM_LEVEL, Z_DEFAULT_STRATEGY);
        if (rc == Z_MEM_ERROR) return fail_nomem(err, PQ_CODEC_GZIP);
        if (rc != Z_OK) return pq_fail(err, PQ_E_USAGE, "cannot initialise zlib deflate");
        cache->deflater_ready = 1;
        cache->deflater_level = level;
    } else if (deflateReset(zs) != Z_OK) {
        return pq_fail(err, PQ_E_USAGE, "cannot reset zlib deflate");
    }

    size_t in_pos = 0, out_pos = 0;
    for (;;) {
        if (out_pos == dst_cap) return fail_small_output(err, PQ_CODEC_GZIP, dst_cap);
        size_t in_slice = min_size(n - in_pos, UINT_MAX);
        size_t out_slice = min_size(dst_cap - out_pos, UINT_MAX);
        zs->next_in = src + in_pos;
        zs->avail_in = (uInt)in_slice;
        zs->next_out = dst + out_pos;
        zs->avail_out = (uInt)out_slice;
        int flush = in_pos + in_slice == n ? Z_FINISH : Z_NO_FLUSH;
        int rc = deflate(zs, flush);
        in_pos += in_slice - zs->avail_in;
        out_pos += out_slice - zs->avail_out;
        if (rc == Z_STREAM_END) break;
        if (rc == Z_OK || rc == Z_BUF_ERROR) continue; /* out of room is caught above */
        return pq_fail(err, PQ_E_USAGE, "zlib deflate failed (%d)", rc);
    }
    *out_len = out_pos;
    return PQ_OK;
}

static int compress_zstd(codec_thread_cache *cache, int level, const uint8_t *src, size_t n,
                         uint8_t *dst, size_t dst_cap, size_t *out_len, pq_error *err)
{
    if (!cache->zstd_encoder) {
        cache->zstd_encoder = ZSTD_createCCtx();
        if (!cache->zstd_encoder) return fail_nomem(err, PQ_CODEC_ZSTD);
    }
    size_t got = ZSTD_compressCCtx(cache->zstd_encoder, dst, dst_cap, src, n, level);
    if (ZSTD_isError(got)) {
        if (ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall)
            return fail_small_output(err, PQ_CODEC_ZSTD, dst_cap);
        if (ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
            return fail_nomem(err, PQ_CODEC_ZSTD);
        return pq_fail(err, PQ_E_USAGE, "zstd compression failed: %s", ZSTD_getErrorName(got));
    }
    *out_len = got;
    return PQ_OK;
}

/* One LZ4 block into dst; returns its size, or 0 if it did not fit. */
static size_t lz4_compress_block(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_cap)
{
    int cap = dst_cap > INT_MAX ? INT_MAX : (int)dst_cap;
    int got = LZ4_compress_default((const char *)src, (char *)dst, (int)n, cap);
    return got > 0 ? (size_t)got : 0;
}

int pq_compress(pq_codec codec, int level, const uint8_t *src, size_t n, uint8_t *dst,
                size_t dst_cap, size_t *out_len, pq_error *err)
{
    if (!pq_codec_supported(codec)) return fail_unsupported(codec, err);
    if ((!src && n) || (!dst && dst_cap) || !out_len)
        return pq_fail(err, PQ_E_USAGE, "pq_compress: NULL buffer with a non-zero length");
    static const uint8_t empty_src[1];
    if (!src) src = empty_src;
    *out_len = 0;

    codec_thread_cache *cache = NULL;
    if (codec == PQ_CODEC_GZIP || codec == PQ_CODEC_ZSTD) {
        cache = thread_cache(err);
        if (!cache) return PQ_ERR;
    }

    switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
        if (n > dst_cap) return fail_small_output(err, codec, dst_cap);
        if (n) memcpy(dst, src, n);
        *out_len = n;
        return PQ_OK;

    case PQ_CODEC_SNAPPY: {
        size_t got = dst_cap;
        if (dst_cap < snappy_max_compressed_length(n)) {
            /* snappy wants the worst case up front; stage through a temporary
             * so a caller with a tight (but sufficient) buffer still works. */
            uint8_t *tmp = malloc(snappy_max_compressed_length(n));
            if (!tmp) return fail_nomem(err, codec);
            got = snappy_max_compressed_length(n);
            snappy_status st = snappy_compress((const char *)src, n, (char *)tmp, &got);
            if (st == SNAPPY_OK && got <= dst_cap) memcpy(dst, tmp, got);
            free(tmp);
            if (st != SNAPPY_OK) return pq_fail(err, PQ_E_USAGE, "snappy compression failed");
            if (got > dst_cap) return fail_small_output(err, codec, dst_cap);
        } else if (snappy_compress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK) {
            return pq_fail(err, PQ_E_USAGE, "snappy compression failed");
        }
        *out_len = got;
        return PQ_OK;
    }

    case PQ_CODEC_GZIP:
        if (level == 0) level = PQ_GZIP_DEFAULT_LEVEL;
        if (level < 1 || level > 9) return fail_level(err, codec, level, 1, 9);
        return compress_gzip(cache, level, src, n, dst, dst_cap, out_len, err);

    case PQ_CODEC_BROTLI: {
        if (level == 0) level = PQ_BROTLI_DEFAULT_QUALITY;
        if (level < BROTLI_MIN_QUALITY || level > BROTLI_MAX_QUALITY)
            return fail_level(err, codec, level, BROTLI_MIN_QUALITY, BROTLI_MAX_QUALITY);
        uint8_t empty_dst[1];
        size_t got = dst_cap;
        if (!BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, src, &got,
                                   dst ? dst : empty_dst))
            return fail_small_output(err, codec, dst_cap);
        *out_len = got;
        return PQ_OK;
    }

    case PQ_CODEC_ZSTD:
        if (level == 0) level = PQ_ZSTD_DEFAULT_LEVEL;
        if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
            return fail_level(err, codec, level, ZSTD_minCLevel(), ZSTD_maxCLevel());
        return compress_zstd(cache, level, src, n, dst, dst_cap, out_len, err);

    case PQ_CODEC_LZ4_RAW: {
        if (n > LZ4_MAX_INPUT_SIZE)
            return pq_fail(err, PQ_E_USAGE, "LZ4_RAW cannot compress %zu bytes in one block", n);
        size_t got = lz4_compress_block(src, n, dst, dst_cap);
        if (!got) return fail_small_output(err, codec, dst_cap);
        *out_len = got;
        return PQ_OK;
    }

    case PQ_CODEC_LZ4: {
        if (n > LZ4_MAX_INPUT_SIZE)
            return pq_fail(err, PQ_E_USAGE, "LZ4 cannot compress %zu bytes in one block", n);
        if (dst_cap <= HADOOP_LZ4_PREFIX) return fail_small_output(err, codec, dst_cap);
        size_t got = lz4_compress_block(src, n, dst + HADOOP_LZ4_PREFIX,
                                        dst_cap - HADOOP_LZ4_PREFIX);
        if (!got) return fail_small_output(err, codec, dst_cap);
        write_be32(dst, (uint32_t)n);
        write_be32(dst + 4, (uint32_t)got);
        *out_len = got + HADOOP_LZ4_PREFIX;
        return PQ_OK;
    }

    case PQ_CODEC_LZO: break;
    }
    return fail_unsupported(codec, err);
}

int pq_codec_supported(pq_codec codec)
{
    return codec_is_known(codec) && codec != PQ_CODEC_LZO;
}

/* ------------------------------------------------------------------ write settings */

static const struct codec_spec {
    const char *name;
    pq_codec codec;
    int min_level, max_level; /* 0, 0: takes no level */
} codec_specs[] = {
    {"zstd", PQ_CODEC_ZSTD, 1, 22},         {"gzip", PQ_CODEC_GZIP, 1, 9},
    {"brotli", PQ_CODEC_BROTLI, 0, 11},     {"snappy", PQ_CODEC_SNAPPY, 0, 0},
    {"lz4_raw", PQ_CODEC_LZ4_RAW, 0, 0},    {"lz4", PQ_CODEC_LZ4_RAW, 0, 0},
    {"none", PQ_CODEC_UNCOMPRESSED, 0, 0},  {"uncompressed", PQ_CODEC_UNCOMPRESSED, 0, 0},
};
#define N_CODEC_SPECS (sizeof codec_specs / sizeof codec_specs[0])
#define CODEC_SPELLINGS "zstd[:1-22], snappy, lz4_raw, gzip[:1-9], brotli[:0-11], none"

static const char *skip_spaces(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

int pq_codec_parse(const char *spec, pq_codec *codec, int *level, pq_error *err)
{
    const char *name = skip_spaces(spec);
    size_t len = strcspn(name, ":");
    while (len > 0 && (name[len - 1] == ' ' || name[len - 1] == '\t')) len--;
    for (size_t i = 0; i < N_CODEC_SPECS; i++) {
        const struct codec_spec *c = &codec_specs[i];
        if (strlen(c->name) != len || strncasecmp(name, c->name, len) != 0) continue;
        const char *colon = strchr(name, ':');
        long long n = 0;
        if (colon) {
            if (c->max_level == 0) return pq_fail(err, PQ_E_USAGE, "%s takes no level", c->name);
            const char *v = skip_spaces(colon + 1);
            char *end;
            errno = 0;
            n = strtoll(v, &end, 10);
            if (end == v || errno || *skip_spaces(end)) return pq_fail(err, PQ_E_USAGE, "'%s' is not a level", v);
            if (n < c->min_level || n > c->max_level)
                return pq_fail(err, PQ_E_USAGE, "%s level %lld is out of range (%d..%d)", c->name, n, c->min_level,
                               c->max_level);
        }
        *codec = c->codec;
        *level = (int)n;
        return PQ_OK;
    }
    return pq_fail(err, PQ_E_USAGE, "'%s' is not a compression (" CODEC_SPELLINGS ")", spec);
}

const char *pq_codec_spec_name(pq_codec codec)
{
    for (size_t i = 0; i < N_CODEC_SPECS; i++)
        if (codec_specs[i].codec == codec) return codec_specs[i].name;
    return pq_codec_name(codec);
}

bool pq_codec_level_ok(pq_codec codec, int level)
{
    if (level == 0) return true;
    for (size_t i = 0; i < N_CODEC_SPECS; i++)
        if (codec_specs[i].codec == codec) return level >= codec_specs[i].min_level && level <= codec_specs[i].max_level;
    return false;
}
