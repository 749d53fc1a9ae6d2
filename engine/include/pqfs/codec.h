/* Page compression codecs.  One entry point per direction; codec contexts are
 * cached per thread so that a scan does not allocate per page. */
#ifndef PQ_CODEC_H
#define PQ_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "types.h"

/* Decompresses src[0..src_len) into exactly dst_len bytes at dst (the page's
 * uncompressed_page_size).  Output of any other length is an error
 * (PQ_E_CORRUPT), as is any codec failure; an unsupported codec (LZO) is
 * PQ_E_UNSUPPORTED.  Never writes past dst + dst_len.
 * Handles: UNCOMPRESSED, SNAPPY, GZIP (zlib or gzip stream, concatenated gzip
 * members), BROTLI, ZSTD (including concatenated frames), LZ4_RAW, and LZ4 in
 * Hadoop framing with a fallback to a raw LZ4 block and to the LZ4 frame format
 * (older writers used those under the same codec id). */
int pq_decompress(pq_codec codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                  size_t dst_len, pq_error *err);

/* Whether pq_decompress_prefix can decode a page's first bytes from its first
 * compressed bytes alone (ZSTD, GZIP, LZ4_RAW): other pages are fetched and
 * decoded whole. */
bool pq_codec_decodes_prefix(pq_codec codec);

/* Where a prefix decode stopped: a later call with more of the same input
 * (a longer src with the same first bytes) or a larger `want` goes on from
 * there instead of decoding from the start again.  Zero it before the first
 * call; its calls run on one thread with no other decompression on that
 * thread in between (the codec state lives in the thread's cache). */
typedef struct pq_prefix_cursor {
    size_t in_pos, out_pos;
    size_t more;               /* when the input ran out: how many more bytes the
                                  decoder asks for (ZSTD's hint: the rest of the
                                  current block); 0 when it cannot tell */
    int started;
} pq_prefix_cursor;

/* Decodes the first `want` bytes of a page whose whole output is dst_len
 * bytes (want <= dst_len), writing no further than dst + dst_len.  *got
 * receives how many bytes at dst are valid: want, or fewer when the input
 * ran out (give more through the cursor) or the stream is shorter.  For a
 * reader that needs only a page's first rows.  cur may be NULL (one call).
 * ZSTD, GZIP and LZ4_RAW can stop early (LZ4_RAW starts over on each call);
 * other codecs return PQ_E_UNSUPPORTED (decode the whole page with
 * pq_decompress).  An error resets the cursor. */
int pq_decompress_prefix(pq_codec codec, pq_prefix_cursor *cur, const uint8_t *src, size_t src_len, uint8_t *dst,
                         size_t want, size_t dst_len, size_t *got, pq_error *err);

/* Upper bound of the compressed size of n bytes (for buffer sizing). */
size_t pq_compress_bound(pq_codec codec, size_t n);

/* Compresses src[0..n) into dst (capacity dst_cap, at least
 * pq_compress_bound()).  level: codec-specific (zstd 1..22, gzip 1..9, brotli
 * 0..11); 0 means the codec's default.  LZ4 is written in Hadoop framing. */
int pq_compress(pq_codec codec, int level, const uint8_t *src, size_t n, uint8_t *dst,
                size_t dst_cap, size_t *out_len, pq_error *err);

/* Whether this build can read / write the codec. */
int pq_codec_supported(pq_codec codec);

/* A writer's compression as the ini's `compression =` and pqtool's --codec
 * spell it: "zstd", "zstd:9", "snappy", "lz4_raw" (or "lz4", as DuckDB says),
 * "gzip:6", "brotli:5", "none" (or "uncompressed"); case and spaces around
 * the parts do not matter.  Levels: zstd 1..22, gzip 1..9, brotli 0..11 (no
 * level: the codec's default, *level = 0); other codecs take none.
 * PQ_E_USAGE naming what is wrong. */
int pq_codec_parse(const char *spec, pq_codec *codec, int *level, pq_error *err);
/* The name pq_codec_parse takes for a codec ("zstd", ..., "none"). */
const char *pq_codec_spec_name(pq_codec codec);
/* Whether `level` is one the codec takes (0, its default, always is). */
bool pq_codec_level_ok(pq_codec codec, int level);

#endif
