/* fuzz_decompress: page codecs.
 *
 * Input: byte 0 = mode and codec (bit 7 set: round trip, low 3 bits: codec
 * id 0..7), bytes 1..4 = little-endian output length (taken modulo 1 MiB + 1),
 * then the codec's input.
 *   decompress mode: the rest is compressed data, decoded into a buffer of
 *     exactly the output length (ASan catches a write past it), and its first
 *     bytes alone (pq_decompress_prefix), which must match;
 *   round trip mode: the rest is plain data, compressed at level 0..3 (the
 *     low bits of byte 1) and decompressed again; it must come back equal. */
#include "fuzz_common.h"

#include "codec.h"

#define MAX_OUTPUT (1u << 20)

static void decompress(pq_codec codec, size_t out_len, const uint8_t *src, size_t src_len)
{
    uint8_t *in = fuzz_copy(src, src_len);
    uint8_t *out = malloc(out_len);
    if (!out && out_len) abort();
    pq_error err;
    bool whole = pq_decompress(codec, in, src_len, out, out_len, &err) == PQ_OK;
    if (whole)
        fuzz_sink ^= fuzz_touch(out, out_len);
    else
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    /* The page's first bytes alone (a reader under a limit): never past
     * out_len, and equal to the whole decode where both succeed. */
    if (out_len > 0) {
        uint8_t *part = malloc(out_len);
        if (!part) abort();
        size_t want = 1 + (src_len * 7919 + out_len) % out_len, got = 0;
        if (pq_decompress_prefix(codec, NULL, in, src_len, part, want, out_len, &got, &err) == PQ_OK) {
            FUZZ_CHECK(got <= out_len, "prefix decode claims %zu bytes of %zu", got, out_len);
            if (whole && got >= want)
                FUZZ_CHECK(memcmp(part, out, want) == 0, "%s: prefix differs from the whole page",
                           pq_codec_name(codec));
        } else {
            FUZZ_CHECK(err.msg[0] != '\0', "prefix error without a message");
        }
        /* The same resumed through a cursor: the input given in three
         * growing pieces (each a new buffer, as a reader reads on), then a
         * larger want; every byte out equals the whole decode's. */
        pq_prefix_cursor cur = {0, 0, 0, 0};
        size_t cuts[4] = {src_len / 3, 2 * src_len / 3, src_len, src_len};
        size_t wants[4] = {want, want, want, out_len};
        for (int step = 0; step < 4; step++) {
            uint8_t *piece = fuzz_copy(in, cuts[step]);
            int rc = pq_decompress_prefix(codec, &cur, piece, cuts[step], part, wants[step], out_len, &got, &err);
            free(piece);
            if (rc != PQ_OK) {
                FUZZ_CHECK(err.msg[0] != '\0', "resumed prefix error without a message");
                FUZZ_CHECK(cur.in_pos == 0 && cur.out_pos == 0 && !cur.started, "an error left the cursor set");
                continue; /* starts over from the next piece */
            }
            FUZZ_CHECK(got <= wants[step] && got == cur.out_pos && cur.in_pos <= cuts[step],
                       "resumed prefix: %zu bytes out of %zu wanted, input at %zu of %zu", got, wants[step],
                       cur.in_pos, cuts[step]);
            if (whole && got > 0)
                FUZZ_CHECK(memcmp(part, out, got) == 0, "%s: resumed prefix differs from the whole page",
                           pq_codec_name(codec));
        }
        free(part);
    }
    free(out);
    free(in);
}

static void round_trip(pq_codec codec, int level, const uint8_t *src, size_t n)
{
    if (!pq_codec_supported(codec)) return;
    size_t cap = pq_compress_bound(codec, n);
    uint8_t *packed = malloc(cap ? cap : 1);
    uint8_t *back = malloc(n ? n : 1);
    if (!packed || !back) abort();
    size_t packed_len = 0;
    pq_error err;
    int rc = pq_compress(codec, level, src, n, packed, cap, &packed_len, &err);
    FUZZ_CHECK(rc == PQ_OK, "%s level %d: compressing %zu bytes failed: %s", pq_codec_name(codec), level, n,
               err.msg);
    FUZZ_CHECK(packed_len <= cap, "%zu bytes written to a buffer of %zu", packed_len, cap);
    uint8_t *exact = fuzz_copy(packed, packed_len);
    rc = pq_decompress(codec, exact, packed_len, back, n, &err);
    FUZZ_CHECK(rc == PQ_OK, "%s: decompressing what it compressed failed: %s", pq_codec_name(codec), err.msg);
    FUZZ_CHECK(n == 0 || memcmp(back, src, n) == 0, "%s: round trip changed the data", pq_codec_name(codec));
    free(exact);
    free(back);
    free(packed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_init(&in, data, size);
    uint8_t mode = fuzz_u8(&in);
    uint32_t out_word = fuzz_u32(&in);
    pq_codec codec = (pq_codec)(mode & 7);
    size_t n;
    const uint8_t *rest = fuzz_take(&in, fuzz_left(&in), &n);
    if (mode & 0x80) {
        if (n > MAX_OUTPUT) n = MAX_OUTPUT;
        round_trip(codec, (int)(out_word & 3), rest, n);
    } else {
        decompress(codec, out_word % (MAX_OUTPUT + 1), rest, n);
    }
    return 0;
}
