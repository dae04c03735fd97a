// Scaled dot-product attention of one head as one fused step (see CTesseraAttention.h). Query
// rows go in blocks of 32; for each block the keys go in blocks of 128: the block's keys are
// transposed into scratch, the 32 × 128 scores computed, scaled and masked, each row's running
// maximum and sum of exponentials updated (the output rows rescaled when the maximum grows), and
// the exponentials times the block's values added to the output rows. The output is divided by
// the sums at the end. AVX-512 and AVX2 + FMA bodies with per-function target attributes, picked
// at run time; a scalar loop with the same blocking elsewhere.
#include "CTesseraAttention.h"

#include "CTesseraSIMD.h"

#include <math.h>
#include <stdlib.h>

#define KEY_BLOCK TESSERA_ATTENTION_KEY_BLOCK
// Query rows per block: their scores (32 × 128 floats, 16 KiB) stay in L1 with the keys.
#define ROW_BLOCK 32

static int tessera_attention_without_keys(const tessera_attention_head *h, long first_row, long rows);

// The first area holds the scalar bodies' transposed key block (E × KEY_BLOCK) or the AVX-512
// body's transposed queries and output rows ((E + Ev) × ROW_BLOCK), whichever is larger.
static long tessera_attention_first_area(long E, long Ev) {
    return E * KEY_BLOCK > (E + Ev) * ROW_BLOCK ? E * KEY_BLOCK : (E + Ev) * ROW_BLOCK;
}

long tessera_attention_scratch_count(long E, long Ev) {
    return tessera_attention_first_area(E, Ev) + ROW_BLOCK * KEY_BLOCK + 2 * ROW_BLOCK;
}

// The scratch areas: the key block transposed ([E][KEY_BLOCK]), the scores ([ROW_BLOCK][KEY_BLOCK]),
// each row's running maximum and sum.
typedef struct {
    float *kt, *scores, *maximum, *sum;
} tessera_attention_scratch;

static tessera_attention_scratch tessera_attention_split(float *scratch, long E, long Ev) {
    tessera_attention_scratch s;
    s.kt = scratch;
    s.scores = s.kt + tessera_attention_first_area(E, Ev);
    s.maximum = s.scores + ROW_BLOCK * KEY_BLOCK;
    s.sum = s.maximum + ROW_BLOCK;
    return s;
}

// Keys [first, first + count) transposed: kt[e * KEY_BLOCK + j] = k[(first + j) * ldk + e].
static void tessera_attention_transpose_keys(const tessera_attention_head *h, long first, long count, float *kt) {
    for (long j = 0; j < count; j++) {
        const float *row = h->k + (first + j) * h->ldk;
        for (long e = 0; e < h->E; e++) kt[e * KEY_BLOCK + j] = row[e];
    }
}

// The running softmax of one row over one key block: its scores p[0..<count] become
// exp(p - m_new) with m_new the larger of the running maximum and the block's; the sum and the
// output row are rescaled by exp(m_old - m_new). Returns 0 when every score so far is -infinity
// (the row is skipped: its exponentials are set to 0).
static int tessera_attention_row_update(float *p, long count, float *maximum, float *sum, float *out, long Ev,
                                        int first_block, int vector_exp) {
    float block_max = -__builtin_inff();
    for (long j = 0; j < count; j++) block_max = p[j] > block_max ? p[j] : block_max;
    // A NaN score makes the row NaN, as the composed softmax would.
    for (long j = 0; j < count; j++)
        if (p[j] != p[j]) block_max = p[j];
    float previous = *maximum;
    float next = first_block ? block_max : (block_max > previous ? block_max : previous);
    if (block_max != block_max) next = block_max;
    if (next == -__builtin_inff()) {
        for (long j = 0; j < count; j++) p[j] = 0;
        *maximum = next;
        if (first_block) *sum = 0;
        return 0;
    }
    float block_sum;
    if (vector_exp) {
        block_sum = tessera_exp_shifted_f32_vector(p, p, count, next);
    } else {
        block_sum = 0;
        for (long j = 0; j < count; j++) {
            p[j] = expf(p[j] - next);
            block_sum += p[j];
        }
    }
    if (first_block) {
        *sum = block_sum;
    } else {
        float correction = previous == next ? 1.0f : expf(previous - next);
        if (correction != 1.0f) {
            for (long c = 0; c < Ev; c++) out[c] *= correction;
        }
        *sum = *sum * correction + block_sum;
    }
    *maximum = next;
    return 1;
}

static void tessera_attention_scalar(const tessera_attention_head *h, long first_row, long rows, float *scratch) {
    tessera_attention_scratch s = tessera_attention_split(scratch, h->E, h->Ev);
    const long E = h->E, Ev = h->Ev;
    for (long i0 = first_row; i0 < first_row + rows; i0 += ROW_BLOCK) {
        long rb = first_row + rows - i0 < ROW_BLOCK ? first_row + rows - i0 : ROW_BLOCK;
        for (long j0 = 0; j0 < h->S; j0 += KEY_BLOCK) {
            long nb = h->S - j0 < KEY_BLOCK ? h->S - j0 : KEY_BLOCK;
            int first_block = j0 == 0;
            tessera_attention_transpose_keys(h, j0, nb, s.kt);
            for (long r = 0; r < rb; r++) {
                long i = i0 + r;
                float *p = s.scores + r * KEY_BLOCK;
                const float *q = h->q + i * h->ldq;
                for (long j = 0; j < nb; j++) {
                    float x = 0;
                    for (long e = 0; e < E; e++) x = __builtin_fmaf(q[e], s.kt[e * KEY_BLOCK + j], x);
                    x *= h->scale;
                    if (h->mask) x += h->mask[i * h->ldm + (j0 + j) * h->mask_column_stride];
                    p[j] = x;
                }
                float *out = h->out + i * h->ldo;
                if (first_block)
                    for (long c = 0; c < Ev; c++) out[c] = 0;
                if (!tessera_attention_row_update(p, nb, s.maximum + r, s.sum + r, out, Ev, first_block, 0))
                    continue;
                for (long j = 0; j < nb; j++) {
                    const float *vr = h->v + (j0 + j) * h->ldv;
                    for (long c = 0; c < Ev; c++) out[c] = __builtin_fmaf(p[j], vr[c], out[c]);
                }
            }
        }
        for (long r = 0; r < rb; r++) {
            float *out = h->out + (i0 + r) * h->ldo;
            float total = s.sum[r];
            if (s.maximum[r] == -__builtin_inff()) total = 0;  // every score -inf: 0 / 0
            for (long c = 0; c < Ev; c++) out[c] = out[c] / total;
        }
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

#include "CTesseraExp.h"

#define TESSERA_ATTN_ATTR __attribute__((target("avx512f,avx2,fma"), min_vector_width(512)))
// Keys per scores micro-tile (8 keys × 32 query rows, 16 accumulators) and output columns per
// value micro-tile (8 columns × 32 rows, or 16 columns × 16 rows).
#define MICRO_KEYS 8
#define MICRO_COLUMNS 8

// The vector body keeps everything with the query rows in the lanes: the block's queries
// transposed (qt[e * ROW_BLOCK + r], 32 × E floats once per row block), the scores transposed
// (st[j * ROW_BLOCK + r] for key j and query row r) and the output rows transposed
// (ot[c * ROW_BLOCK + r], Ev × 32 floats, written to the output once per row block). So keys
// and values are read in place, one element broadcast at a time; the running maximum, the
// rescaling and the sums are vertical vector operations over 16 rows at a time; and every
// product reads its other operand from the 16 KiB of scores or the queries in L1.

// Scores of JR ≤ 8 keys (rows of k, ldk apart) against NV ≤ 2 vectors of 16 transposed query
// rows: st[j, r] = scale · Σ_e k[j, e] · qt[e, r] + mask. The mask of key j for the 16 rows of a
// vector is gathered at `rows_index` (row offsets) from mask + j · mcs, or is 0 without a mask.
// Folds the tile's scores into the block's running maximum per row, `block_max[v]`, and marks
// in `nan[v]` the rows with a NaN score.
TESSERA_ATTN_ATTR __attribute__((always_inline)) static inline void tessera_attn_scores_tile(
    const int JR, const int NV, const float *restrict k, long ldk, const float *restrict qt, long E, float scale,
    const float *mask, long mcs, __m512i rows_index0, __m512i rows_index1, __mmask16 rows0, __mmask16 rows1,
    float *restrict st, __m512 *restrict block_max, __mmask16 *restrict nan) {
    __m512 acc[MICRO_KEYS][2];
    for (int j = 0; j < JR; j++)
        for (int v = 0; v < NV; v++) acc[j][v] = _mm512_setzero_ps();
    for (long e = 0; e < E; e++) {
        __m512 qv[2];
        for (int v = 0; v < NV; v++) qv[v] = _mm512_loadu_ps(qt + e * ROW_BLOCK + 16 * v);
        for (int j = 0; j < JR; j++) {
            __m512 w = _mm512_set1_ps(k[j * ldk + e]);
            for (int v = 0; v < NV; v++) acc[j][v] = _mm512_fmadd_ps(w, qv[v], acc[j][v]);
        }
    }
    __m512 sv = _mm512_set1_ps(scale);
    for (int v = 0; v < NV; v++) {
        __m512 m = block_max[v];
        __mmask16 unordered = nan[v];
        for (int j = 0; j < JR; j++) {
            __m512 x = _mm512_mul_ps(acc[j][v], sv);
            if (mask) {
                const float *mj = mask + j * mcs;
                __m512 mv = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), v == 0 ? rows0 : rows1,
                                                     v == 0 ? rows_index0 : rows_index1, mj, 4);
                x = _mm512_add_ps(x, mv);
            }
            _mm512_storeu_ps(st + j * ROW_BLOCK + 16 * v, x);
            m = _mm512_max_ps(m, x);
            unordered |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        }
        block_max[v] = m;
        nan[v] = unordered;
    }
}

// ot[c, r] (+)= Σ_j p[j, r] · v[j, c] for CN ≤ 8 columns of NV = 2 vectors of 16 rows, or
// CN ≤ 16 columns of NV = 1 vector, p and ot transposed (rows in the lanes, ROW_BLOCK apart per
// key and per column). The accumulators start at zero (start 0), at ot (1), or at ot times the
// block's rescaling factors f0, f1 per row (2).
TESSERA_ATTN_ATTR __attribute__((always_inline)) static inline void tessera_attn_values_tile(
    const int CN, const int NV, const float *restrict p, const float *restrict v, long ldv, long count,
    float *restrict ot, int start, __m512 f0, __m512 f1) {
    __m512 acc[2 * MICRO_COLUMNS][2];
    for (int c = 0; c < CN; c++)
        for (int u = 0; u < NV; u++) {
            if (start == 0) {
                acc[c][u] = _mm512_setzero_ps();
            } else {
                acc[c][u] = _mm512_loadu_ps(ot + c * ROW_BLOCK + 16 * u);
                if (start == 2) acc[c][u] = _mm512_mul_ps(acc[c][u], u == 0 ? f0 : f1);
            }
        }
    for (long j = 0; j < count; j++) {
        __m512 pv[2];
        for (int u = 0; u < NV; u++) pv[u] = _mm512_loadu_ps(p + j * ROW_BLOCK + 16 * u);
        for (int c = 0; c < CN; c++) {
            __m512 w = _mm512_set1_ps(v[j * ldv + c]);
            for (int u = 0; u < NV; u++) acc[c][u] = _mm512_fmadd_ps(pv[u], w, acc[c][u]);
        }
    }
    for (int c = 0; c < CN; c++)
        for (int u = 0; u < NV; u++) _mm512_storeu_ps(ot + c * ROW_BLOCK + 16 * u, acc[c][u]);
}

#define TESSERA_ATTN_SCORES(JR, NV)                                                                             \
    TESSERA_ATTN_ATTR static void tessera_attn_scores_##JR##_##NV(                                               \
        const float *k, long ldk, const float *qt, long E, float scale, const float *mask, long mcs, __m512i i0, \
        __m512i i1, __mmask16 r0, __mmask16 r1, float *st, __m512 *block_max, __mmask16 *nan) {                  \
        tessera_attn_scores_tile(JR, NV, k, ldk, qt, E, scale, mask, mcs, i0, i1, r0, r1, st, block_max, nan);  \
    }
#define TESSERA_ATTN_SCORES_NV(JR) TESSERA_ATTN_SCORES(JR, 1) TESSERA_ATTN_SCORES(JR, 2)
TESSERA_ATTN_SCORES_NV(1)
TESSERA_ATTN_SCORES_NV(2)
TESSERA_ATTN_SCORES_NV(3)
TESSERA_ATTN_SCORES_NV(4)
TESSERA_ATTN_SCORES_NV(5)
TESSERA_ATTN_SCORES_NV(6)
TESSERA_ATTN_SCORES_NV(7)
TESSERA_ATTN_SCORES_NV(8)

#define TESSERA_ATTN_VALUES(CN, NV)                                                                             \
    TESSERA_ATTN_ATTR static void tessera_attn_values_##CN##_##NV(const float *p, const float *v, long ldv,     \
                                                                  long count, float *ot, int start, __m512 f0,  \
                                                                  __m512 f1) {                                  \
        tessera_attn_values_tile(CN, NV, p, v, ldv, count, ot, start, f0, f1);                                   \
    }
#define TESSERA_ATTN_VALUES_2(CN) TESSERA_ATTN_VALUES(CN, 1) TESSERA_ATTN_VALUES(CN, 2)
TESSERA_ATTN_VALUES_2(1)
TESSERA_ATTN_VALUES_2(2)
TESSERA_ATTN_VALUES_2(3)
TESSERA_ATTN_VALUES_2(4)
TESSERA_ATTN_VALUES_2(5)
TESSERA_ATTN_VALUES_2(6)
TESSERA_ATTN_VALUES_2(7)
TESSERA_ATTN_VALUES_2(8)
TESSERA_ATTN_VALUES(9, 1)
TESSERA_ATTN_VALUES(10, 1)
TESSERA_ATTN_VALUES(11, 1)
TESSERA_ATTN_VALUES(12, 1)
TESSERA_ATTN_VALUES(13, 1)
TESSERA_ATTN_VALUES(14, 1)
TESSERA_ATTN_VALUES(15, 1)
TESSERA_ATTN_VALUES(16, 1)

typedef void (*tessera_attn_scores_fn)(const float *, long, const float *, long, float, const float *, long, __m512i,
                                       __m512i, __mmask16, __mmask16, float *, __m512 *, __mmask16 *);
typedef void (*tessera_attn_values_fn)(const float *, const float *, long, long, float *, int, __m512, __m512);
#define TESSERA_ATTN_PAIR(JR) {tessera_attn_scores_##JR##_1, tessera_attn_scores_##JR##_2}
static const tessera_attn_scores_fn tessera_attn_scores[MICRO_KEYS][2] = {
    TESSERA_ATTN_PAIR(1), TESSERA_ATTN_PAIR(2), TESSERA_ATTN_PAIR(3), TESSERA_ATTN_PAIR(4),
    TESSERA_ATTN_PAIR(5), TESSERA_ATTN_PAIR(6), TESSERA_ATTN_PAIR(7), TESSERA_ATTN_PAIR(8)};
// [CN - 1] for one vector of rows (CN ≤ 16) and for two (CN ≤ 8).
static const tessera_attn_values_fn tessera_attn_values_one[2 * MICRO_COLUMNS] = {
    tessera_attn_values_1_1,  tessera_attn_values_2_1,  tessera_attn_values_3_1,  tessera_attn_values_4_1,
    tessera_attn_values_5_1,  tessera_attn_values_6_1,  tessera_attn_values_7_1,  tessera_attn_values_8_1,
    tessera_attn_values_9_1,  tessera_attn_values_10_1, tessera_attn_values_11_1, tessera_attn_values_12_1,
    tessera_attn_values_13_1, tessera_attn_values_14_1, tessera_attn_values_15_1, tessera_attn_values_16_1};
static const tessera_attn_values_fn tessera_attn_values_two[MICRO_COLUMNS] = {
    tessera_attn_values_1_2, tessera_attn_values_2_2, tessera_attn_values_3_2, tessera_attn_values_4_2,
    tessera_attn_values_5_2, tessera_attn_values_6_2, tessera_attn_values_7_2, tessera_attn_values_8_2};

static __mmask16 tessera_attn_tail(long width) {
    if (width >= 16) return 0xFFFF;
    return (__mmask16)((1u << width) - 1u);
}

// A 16 × 16 block transposed through registers: dst[i * ldd + r] = src[r * lds + i] for source
// rows r < rows (rows past it read as zero) and columns i < columns (columns past it read as
// zero); destination row i < columns is stored in the lanes of `store` (rows past `columns` are
// not stored).
TESSERA_ATTN_ATTR static void tessera_attn_transpose16(const float *src, long lds, long rows, long columns,
                                                       float *dst, long ldd, __mmask16 store) {
    __mmask16 read = tessera_attn_tail(columns);
    __m512 r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = i < rows ? _mm512_maskz_loadu_ps(read, src + i * lds) : _mm512_setzero_ps();
    // Pairs of rows interleaved, then pairs of pairs, then the 128-bit lanes in two steps.
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int h = 0; h < 16; h += 8)
        for (int i = 0; i < 4; i++) {
            t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
            t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xDD);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
    for (int i = 0; i < columns && i < 16; i++) _mm512_mask_storeu_ps(dst + i * ldd, store, r[i]);
}

// exp of each lane through libm (the 16 rescaling factors of a block; rare enough).
TESSERA_ATTN_ATTR static __m512 tessera_attn_exp_lanes(__m512 x) {
    float lanes[16];
    _mm512_storeu_ps(lanes, x);
    for (int i = 0; i < 16; i++) lanes[i] = expf(lanes[i]);
    return _mm512_loadu_ps(lanes);
}

TESSERA_ATTN_ATTR static void tessera_attention_avx512(const tessera_attention_head *h, long first_row, long rows,
                                                      float *scratch) {
    // Scratch: qt [E][ROW_BLOCK] and ot [Ev][ROW_BLOCK] in the first (E + Ev) · ROW_BLOCK floats,
    // st [KEY_BLOCK][ROW_BLOCK] in the scores area.
    tessera_attention_scratch s = tessera_attention_split(scratch, h->E, h->Ev);
    const long E = h->E, Ev = h->Ev;
    float *qt = s.kt, *ot = s.kt + E * ROW_BLOCK, *st = s.scores;
    const __m512 negative_infinity = _mm512_set1_ps(-__builtin_inff());
    const __m512 one = _mm512_set1_ps(1.0f);
    for (long i0 = first_row; i0 < first_row + rows; i0 += ROW_BLOCK) {
        long rb = first_row + rows - i0 < ROW_BLOCK ? first_row + rows - i0 : ROW_BLOCK;
        int NV = rb > 16 ? 2 : 1;
        __mmask16 rows0 = tessera_attn_tail(rb), rows1 = tessera_attn_tail(rb - 16 > 0 ? rb - 16 : 0);
        // The block's queries transposed, rows past the block as zeros.
        for (long r0 = 0; r0 < ROW_BLOCK; r0 += 16)
            for (long e0 = 0; e0 < E; e0 += 16)
                tessera_attn_transpose16(h->q + (i0 + r0) * h->ldq + e0, h->ldq, rb - r0, E - e0,
                                         qt + e0 * ROW_BLOCK + r0, ROW_BLOCK, 0xFFFF);
        __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        __m512i ldm = _mm512_set1_epi32((int)h->ldm);
        __m512i index0 = _mm512_mullo_epi32(lane, ldm);
        __m512i index1 = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16)), ldm);
        __m512 maximum[2] = {negative_infinity, negative_infinity};
        __m512 sum[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
        for (long j0 = 0; j0 < h->S; j0 += KEY_BLOCK) {
            long nb = h->S - j0 < KEY_BLOCK ? h->S - j0 : KEY_BLOCK;
            int first_block = j0 == 0;
            const float *mask = h->mask ? h->mask + i0 * h->ldm + j0 * h->mask_column_stride : NULL;
            __m512 block_max[2] = {negative_infinity, negative_infinity};
            __mmask16 nan[2] = {0, 0};
            for (long j = 0; j < nb; j += MICRO_KEYS) {
                int JR = (int)(nb - j < MICRO_KEYS ? nb - j : MICRO_KEYS);
                tessera_attn_scores[JR - 1][NV - 1](h->k + (j0 + j) * h->ldk, h->ldk, qt, E, h->scale,
                                                    mask ? mask + j * h->mask_column_stride : NULL,
                                                    h->mask_column_stride, index0, index1, rows0, rows1,
                                                    st + j * ROW_BLOCK, block_max, nan);
            }
            // The running softmax, 16 rows per vector: the block's maximum (NaN when any score is
            // NaN), the new running maximum, exp(score - maximum) with a -infinity maximum
            // shifting by 0 (its scores are all -infinity: exponentials 0), the sums, and the
            // factors that rescale the sums and (in the value tiles) the output rows.
            __m512 factor[2] = {one, one};
            int rescale = 0;
            for (int v = 0; v < NV; v++) {
                __m512 bm = _mm512_mask_mov_ps(block_max[v], nan[v], _mm512_set1_ps(__builtin_nanf("")));
                __m512 previous = maximum[v];
                __m512 next = _mm512_max_ps(bm, previous);
                next = _mm512_mask_mov_ps(next, _mm512_cmp_ps_mask(bm, bm, _CMP_UNORD_Q), bm);
                next = _mm512_mask_mov_ps(next, _mm512_cmp_ps_mask(previous, previous, _CMP_UNORD_Q), previous);
                __m512 shift = _mm512_mask_mov_ps(next, _mm512_cmp_ps_mask(next, negative_infinity, _CMP_EQ_OQ),
                                                  _mm512_setzero_ps());
                if (!first_block) {
                    __mmask16 same = _mm512_cmp_ps_mask(previous, shift, _CMP_EQ_OQ);
                    if (same != 0xFFFF)
                        factor[v] =
                            _mm512_mask_mov_ps(tessera_attn_exp_lanes(_mm512_sub_ps(previous, shift)), same, one);
                    if (_mm512_cmp_ps_mask(factor[v], one, _CMP_NEQ_UQ) & (v == 0 ? rows0 : rows1)) rescale = 1;
                }
                // exp(score - shift) in place, summed per row in key order (the same exp as the
                // softmax kernel's).
                __m512 block_sum = _mm512_setzero_ps();
                for (long j = 0; j < nb; j++) {
                    float *row = st + j * ROW_BLOCK + 16 * v;
                    __m512 e = tessera_exp16(_mm512_sub_ps(_mm512_loadu_ps(row), shift));
                    _mm512_storeu_ps(row, e);
                    block_sum = _mm512_add_ps(block_sum, e);
                }
                sum[v] = first_block ? block_sum : _mm512_fmadd_ps(sum[v], factor[v], block_sum);
                maximum[v] = next;
            }
            // The block's exponentials times its values, added to the transposed output rows
            // (rescaled first when a row's maximum grew).
            int start = first_block ? 0 : rescale ? 2 : 1;
            const float *v = h->v + j0 * h->ldv;
            long group = NV == 2 ? MICRO_COLUMNS : 2 * MICRO_COLUMNS;
            for (long c0 = 0; c0 < Ev; c0 += group) {
                int CN = (int)(Ev - c0 < group ? Ev - c0 : group);
                tessera_attn_values_fn tile = NV == 2 ? tessera_attn_values_two[CN - 1] : tessera_attn_values_one[CN - 1];
                tile(st, v + c0, h->ldv, nb, ot + c0 * ROW_BLOCK, start, factor[0], factor[1]);
            }
        }
        // Divide by the sums and write the rows out; a row whose every score is -infinity has
        // sum 0 and output 0: 0 / 0.
        for (long c = 0; c < Ev; c++)
            for (int v = 0; v < NV; v++) {
                float *column = ot + c * ROW_BLOCK + 16 * v;
                _mm512_storeu_ps(column, _mm512_div_ps(_mm512_loadu_ps(column), sum[v]));
            }
        for (long r0 = 0; r0 < rb; r0 += 16)
            for (long c0 = 0; c0 < Ev; c0 += 16)
                tessera_attn_transpose16(ot + c0 * ROW_BLOCK + r0, ROW_BLOCK, Ev - c0, rb - r0,
                                         h->out + (i0 + r0) * h->ldo + c0, h->ldo, tessera_attn_tail(Ev - c0));
    }
}

// The AVX2 + FMA body: the scalar loop's blocking and order of operations (scores row-major,
// keys transposed into scratch), with the scores and the value products as register tiles of 8
// lanes: each score is the same FMA sum over e from zero, then scaled, then masked, so it equals
// the scalar loop's; the exponentials are tessera_exp_shifted_f32_vector's.
#define TESSERA_ATTN2_ATTR __attribute__((target("avx2,fma")))

// Lanes [0, width) of an 8-lane mask (width ≥ 8: all).
TESSERA_ATTN2_ATTR static __m256i tessera_attn2_tail(long width) {
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(width < 8 ? width : 8)), lane);
}

// Scores of R ≤ 4 query rows (q rows ldq apart) against NV ≤ 3 vectors of 8 transposed keys
// (kt rows KEY_BLOCK apart): p[r, j] = scale · Σ_e q[r, e] · kt[e, j]. Lanes past the block's
// keys compute on scratch and are stored into the scores row's spare room, never read.
TESSERA_ATTN2_ATTR __attribute__((always_inline)) static inline void tessera_attn2_scores_tile(
    const int R, const int NV, const float *restrict q, long ldq, const float *restrict kt, long E, float scale,
    float *restrict p) {
    __m256 acc[4][3];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_ps();
    for (long e = 0; e < E; e++) {
        __m256 kv[3];
        for (int v = 0; v < NV; v++) kv[v] = _mm256_loadu_ps(kt + e * KEY_BLOCK + 8 * v);
        for (int r = 0; r < R; r++) {
            __m256 w = _mm256_set1_ps(q[r * ldq + e]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(w, kv[v], acc[r][v]);
        }
    }
    __m256 sv = _mm256_set1_ps(scale);
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++) _mm256_storeu_ps(p + r * KEY_BLOCK + 8 * v, _mm256_mul_ps(acc[r][v], sv));
}

// out[r, c] += Σ_j p[r, j] · v[j, c] for R ≤ 4 rows (p rows KEY_BLOCK apart) and NV ≤ 4 vectors
// of 8 columns, the last one's lanes past `last` neither read nor written.
TESSERA_ATTN2_ATTR __attribute__((always_inline)) static inline void tessera_attn2_values_tile(
    const int R, const int NV, const float *restrict p, const float *restrict v, long ldv, long count,
    float *restrict out, long ldo, __m256i last) {
    const __m256i all = _mm256_set1_epi32(-1);
    __m256 acc[4][4];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < NV; c++) acc[r][c] = _mm256_maskload_ps(out + r * ldo + 8 * c, c == NV - 1 ? last : all);
    for (long j = 0; j < count; j++) {
        __m256 vv[4];
        for (int c = 0; c < NV; c++) vv[c] = _mm256_maskload_ps(v + j * ldv + 8 * c, c == NV - 1 ? last : all);
        for (int r = 0; r < R; r++) {
            __m256 w = _mm256_set1_ps(p[r * KEY_BLOCK + j]);
            for (int c = 0; c < NV; c++) acc[r][c] = _mm256_fmadd_ps(w, vv[c], acc[r][c]);
        }
    }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < NV; c++) _mm256_maskstore_ps(out + r * ldo + 8 * c, c == NV - 1 ? last : all, acc[r][c]);
}

#define TESSERA_ATTN2_SCORES(R, NV)                                                                             \
    TESSERA_ATTN2_ATTR static void tessera_attn2_scores_##R##_##NV(const float *q, long ldq, const float *kt,   \
                                                                   long E, float scale, float *p) {            \
        tessera_attn2_scores_tile(R, NV, q, ldq, kt, E, scale, p);                                               \
    }
#define TESSERA_ATTN2_SCORES_NV(R) TESSERA_ATTN2_SCORES(R, 1) TESSERA_ATTN2_SCORES(R, 2) TESSERA_ATTN2_SCORES(R, 3)
TESSERA_ATTN2_SCORES_NV(1)
TESSERA_ATTN2_SCORES_NV(2)
TESSERA_ATTN2_SCORES_NV(3)
TESSERA_ATTN2_SCORES_NV(4)

#define TESSERA_ATTN2_VALUES(R, NV)                                                                             \
    TESSERA_ATTN2_ATTR static void tessera_attn2_values_##R##_##NV(const float *p, const float *v, long ldv,    \
                                                                   long count, float *out, long ldo,             \
                                                                   __m256i last) {                               \
        tessera_attn2_values_tile(R, NV, p, v, ldv, count, out, ldo, last);                                      \
    }
#define TESSERA_ATTN2_VALUES_NV(R)                                                                              \
    TESSERA_ATTN2_VALUES(R, 1) TESSERA_ATTN2_VALUES(R, 2) TESSERA_ATTN2_VALUES(R, 3) TESSERA_ATTN2_VALUES(R, 4)
TESSERA_ATTN2_VALUES_NV(1)
TESSERA_ATTN2_VALUES_NV(2)
TESSERA_ATTN2_VALUES_NV(3)
TESSERA_ATTN2_VALUES_NV(4)

typedef void (*tessera_attn2_scores_fn)(const float *, long, const float *, long, float, float *);
typedef void (*tessera_attn2_values_fn)(const float *, const float *, long, long, float *, long, __m256i);
#define TESSERA_ATTN2_TRIPLE(R) {tessera_attn2_scores_##R##_1, tessera_attn2_scores_##R##_2, tessera_attn2_scores_##R##_3}
static const tessera_attn2_scores_fn tessera_attn2_scores[4][3] = {TESSERA_ATTN2_TRIPLE(1), TESSERA_ATTN2_TRIPLE(2),
                                                                     TESSERA_ATTN2_TRIPLE(3), TESSERA_ATTN2_TRIPLE(4)};
#define TESSERA_ATTN2_QUAD(R)                                                                                   \
    {tessera_attn2_values_##R##_1, tessera_attn2_values_##R##_2, tessera_attn2_values_##R##_3,                   \
     tessera_attn2_values_##R##_4}
static const tessera_attn2_values_fn tessera_attn2_values[4][4] = {TESSERA_ATTN2_QUAD(1), TESSERA_ATTN2_QUAD(2),
                                                                     TESSERA_ATTN2_QUAD(3), TESSERA_ATTN2_QUAD(4)};

TESSERA_ATTN2_ATTR static void tessera_attention_avx2(const tessera_attention_head *h, long first_row, long rows,
                                                     float *scratch) {
    tessera_attention_scratch s = tessera_attention_split(scratch, h->E, h->Ev);
    const long E = h->E, Ev = h->Ev;
    for (long i0 = first_row; i0 < first_row + rows; i0 += ROW_BLOCK) {
        long rb = first_row + rows - i0 < ROW_BLOCK ? first_row + rows - i0 : ROW_BLOCK;
        int live[ROW_BLOCK];
        for (long j0 = 0; j0 < h->S; j0 += KEY_BLOCK) {
            long nb = h->S - j0 < KEY_BLOCK ? h->S - j0 : KEY_BLOCK;
            int first_block = j0 == 0;
            tessera_attention_transpose_keys(h, j0, nb, s.kt);
            // Scores: 4 rows × 24 keys per tile (the keys rounded up to 8 lanes: the scores rows
            // and the transposed keys have KEY_BLOCK floats of room).
            for (long r0 = 0; r0 < rb; r0 += 4) {
                int R = (int)(rb - r0 < 4 ? rb - r0 : 4);
                for (long j = 0; j < nb; j += 24) {
                    long width = nb - j < 24 ? nb - j : 24;
                    int NV = (int)((width + 7) / 8);
                    tessera_attn2_scores[R - 1][NV - 1](h->q + (i0 + r0) * h->ldq, h->ldq, s.kt + j, E, h->scale,
                                                        s.scores + r0 * KEY_BLOCK + j);
                }
            }
            for (long r = 0; r < rb; r++) {
                long i = i0 + r;
                float *p = s.scores + r * KEY_BLOCK;
                if (h->mask)
                    for (long j = 0; j < nb; j++) p[j] += h->mask[i * h->ldm + (j0 + j) * h->mask_column_stride];
                float *out = h->out + i * h->ldo;
                if (first_block)
                    for (long c = 0; c < Ev; c++) out[c] = 0;
                live[r] = tessera_attention_row_update(p, nb, s.maximum + r, s.sum + r, out, Ev, first_block, 1);
            }
            // The value products, 4 rows × 32 columns per tile; rows whose scores are all
            // -infinity so far are left alone (a group containing one goes row by row).
            const float *v = h->v + j0 * h->ldv;
            for (long r0 = 0; r0 < rb; r0 += 4) {
                int R = (int)(rb - r0 < 4 ? rb - r0 : 4);
                int all_live = 1;
                for (int r = 0; r < R; r++) all_live &= live[r0 + r];
                for (int r = 0; r < R; r += all_live ? R : 1) {
                    if (!all_live && !live[r0 + r]) continue;
                    int tile_rows = all_live ? R : 1;
                    for (long c0 = 0; c0 < Ev; c0 += 32) {
                        long width = Ev - c0 < 32 ? Ev - c0 : 32;
                        int CV = (int)((width + 7) / 8);
                        tessera_attn2_values[tile_rows - 1][CV - 1](
                            s.scores + (r0 + r) * KEY_BLOCK, v + c0, h->ldv, nb, h->out + (i0 + r0 + r) * h->ldo + c0,
                            h->ldo, tessera_attn2_tail(width - 8 * (CV - 1)));
                    }
                }
            }
        }
        for (long r = 0; r < rb; r++) {
            float *out = h->out + (i0 + r) * h->ldo;
            float total = s.sum[r];
            if (s.maximum[r] == -__builtin_inff()) total = 0;  // every score -inf: 0 / 0
            for (long c = 0; c < Ev; c++) out[c] = out[c] / total;
        }
    }
}

int tessera_attention_is_vectorized(void) {
    // Threads may race to fill the cache, all with the same value: relaxed atomics.
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = tessera_cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") && !getenv("TESSERA_NO_AVX512");
        __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
    }
    return value;
}

void tessera_attention_f32_variant(int vectorized, const tessera_attention_head *h, long first_row, long rows,
                                   float *scratch) {
    if (rows <= 0 || h->Ev <= 0 || tessera_attention_without_keys(h, first_row, rows)) return;
    if (vectorized == 1 && tessera_attention_is_vectorized()) {
        tessera_attention_avx512(h, first_row, rows, scratch);
    } else if (vectorized != 0 && tessera_cpu_has_avx2_fma()) {
        tessera_attention_avx2(h, first_row, rows, scratch);
    } else {
        tessera_attention_scalar(h, first_row, rows, scratch);
    }
}

#else

int tessera_attention_is_vectorized(void) { return 0; }

void tessera_attention_f32_variant(int vectorized, const tessera_attention_head *h, long first_row, long rows,
                                   float *scratch) {
    (void)vectorized;
    if (rows <= 0 || h->Ev <= 0 || tessera_attention_without_keys(h, first_row, rows)) return;
    tessera_attention_scalar(h, first_row, rows, scratch);
}

#endif

void tessera_attention_f32(const tessera_attention_head *h, long first_row, long rows, float *scratch) {
    tessera_attention_f32_variant(1, h, first_row, rows, scratch);
}

// No keys: the composed product of an empty softmax row and an empty value matrix is zero.
static int tessera_attention_without_keys(const tessera_attention_head *h, long first_row, long rows) {
    if (h->S > 0) return 0;
    for (long i = first_row; i < first_row + rows; i++)
        for (long c = 0; c < h->Ev; c++) h->out[i * h->ldo + c] = 0;
    return 1;
}
