/* fuzz_rle: the RLE / bit-packed hybrid (levels, dictionary indices) and the
 * level readers of data pages v1.
 *
 * Input (12-byte header, then the encoded bytes):
 *   0      bit width (mod 34: 33 must be refused)
 *   1      mode: 0 hybrid, 1 levels v1 RLE, 2 levels v1 BIT_PACKED,
 *          3 BIT_PACKED levels at the given bit width (mod 4)
 *   2..3   values to decode (u16 LE)    4..5  maximum level (levels modes)
 *   6..11  six operations for the hybrid: bits 6..7 = 0 read u32, 1 read
 *          u16, 2 or 3 skip; low 6 bits = count (0..47, then (c - 47) * 61)
 *
 * Hybrid: decoded once with a single pq_rle_read_u32, then by the operation
 * sequence; when the single read succeeds every operation must succeed with
 * the same values, and each value must fit the bit width.  Levels: on
 * success every level is at most the maximum and the consumed length is
 * within the input. */
#include "fuzz_common.h"

#include "encoding.h"

#define N_OPS 6

static size_t op_count(uint8_t op)
{
    unsigned c = op & 63;
    return c < 48 ? c : (c - 47) * 61;
}

static void check_widths(const uint32_t *v, size_t n, int bw)
{
    if (bw >= 32) return;
    for (size_t i = 0; i < n; i++) FUZZ_CHECK((v[i] >> bw) == 0, "value %u does not fit %d bits", v[i], bw);
}

static void hybrid(int bw, size_t n, const uint8_t ops[N_OPS], const uint8_t *p, size_t len)
{
    pq_rle_dec d;
    pq_error err;
    uint32_t *all = malloc(n * sizeof *all);
    uint32_t *out32 = malloc(n * sizeof *out32);
    uint16_t *out16 = malloc(n * sizeof *out16);
    if ((!all || !out32 || !out16) && n) abort();
    bool all_ok = pq_rle_init(&d, p, len, bw, &err) == PQ_OK && pq_rle_read_u32(&d, all, n, &err) == PQ_OK;
    if (all_ok) check_widths(all, n, bw);
    else FUZZ_CHECK(err.msg[0] != '\0', "error without a message");

    if (pq_rle_init(&d, p, len, bw, &err) == PQ_OK) {
        size_t pos = 0;
        for (int i = 0; i <= N_OPS; i++) {
            int kind = i < N_OPS ? ops[i] >> 6 : 0; /* finally: read the rest */
            size_t m = i < N_OPS ? op_count(ops[i]) : n - pos;
            if (m > n - pos) m = n - pos;
            if (kind == 1 && bw > 16) kind = 0;
            int rc;
            if (kind == 0) rc = pq_rle_read_u32(&d, out32, m, &err);
            else if (kind == 1) rc = pq_rle_read_u16(&d, out16, m, &err);
            else rc = pq_rle_skip(&d, m, &err);
            if (rc != PQ_OK) {
                FUZZ_CHECK(!all_ok, "operation %d (%zu values at %zu) failed after a full read succeeded: %s",
                           kind, m, pos, err.msg);
                break;
            }
            for (size_t k = 0; k < m && kind < 2; k++) {
                uint32_t v = kind == 0 ? out32[k] : out16[k];
                FUZZ_CHECK(!all_ok || v == all[pos + k], "value %zu: %u, the full read gave %u", pos + k, v,
                           all[pos + k]);
                fuzz_sink ^= v;
            }
            pos += m;
        }
    } else {
        FUZZ_CHECK(!all_ok, "init failed the second time");
    }
    free(out16);
    free(out32);
    free(all);
}

static void levels(pq_encoding enc, int max_level, size_t n, const uint8_t *p, size_t len)
{
    uint16_t *out = malloc(n * sizeof *out);
    if (!out && n) abort();
    size_t consumed = 0;
    pq_error err;
    if (pq_levels_v1_read(enc, p, len, max_level, out, n, &consumed, NULL, &err) == PQ_OK) {
        FUZZ_CHECK(consumed <= len, "consumed %zu of %zu bytes", consumed, len);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(out[i] <= max_level, "level %u above the maximum %d", out[i], max_level);
    } else {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    }
    free(out);
}

static void bitpacked(int bw, size_t n, const uint8_t *p, size_t len)
{
    uint16_t *out = malloc(n * sizeof *out);
    if (!out && n) abort();
    pq_error err;
    if (pq_bitpacked_levels_read(p, len, bw, out, n, &err) == PQ_OK)
        for (size_t i = 0; i < n; i++) FUZZ_CHECK((out[i] >> bw) == 0, "level %u does not fit %d bits", out[i], bw);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_init(&in, data, size);
    int bw = fuzz_u8(&in) % 34;
    int mode = fuzz_u8(&in) % 4;
    size_t n = fuzz_u16(&in);
    int max_level = fuzz_u16(&in);
    uint8_t ops[N_OPS];
    for (int i = 0; i < N_OPS; i++) ops[i] = fuzz_u8(&in);
    size_t len;
    const uint8_t *rest = fuzz_take(&in, fuzz_left(&in), &len);
    uint8_t *p = fuzz_copy(rest, len);
    switch (mode) {
    case 0: hybrid(bw, n, ops, p, len); break;
    case 1: levels(PQ_ENC_RLE, max_level, n, p, len); break;
    case 2: levels(PQ_ENC_BIT_PACKED, max_level, n, p, len); break;
    default: bitpacked(bw % 17, n, p, len); break;
    }
    free(p);
    return 0;
}
