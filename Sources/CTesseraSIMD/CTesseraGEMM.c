// The packed-operand SGEMM micro-kernel: AVX-512 and AVX2 + FMA bodies with per-function
// target attributes (no package-wide compiler flags), picked at run time with cpuid.
#include "CTesseraGEMM.h"

#include "CTesseraSIMD.h"

#include <stdlib.h>

// Element (i, j)'s epilogue one element at a time: the row's bias, then the residual, then the
// clamp (a NaN passing through), in the vector tiles' order.
static inline float tessera_gemm_epilogue_scalar(const tessera_gemm_epilogue *e, float x, long i, long j) {
    if (e->bias) x = x + e->bias[i];
    if (e->residual) x = x + e->residual[i * e->ldr + j];
    x = e->lo > x ? e->lo : x;
    return e->hi < x ? e->hi : x;
}

// tessera_sgemm_packed_rows one element at a time: the same FMA chain in k order from zero and the
// same epilogue (bias, then residual, then the clamp, a NaN passing through) as the vector tiles.
static void tessera_sgemm_packed_rows_scalar(const float *packed, long m, long n, long k, const float *const *rows,
                                             long band, float *c, long ldc, const tessera_gemm_epilogue *e) {
    const long mr = TESSERA_GEMM_PANEL_ROWS;
    for (long i = 0; i < m; i++) {
        const float *ap = packed + (i / mr) * mr * k + (i % mr);
        for (long j = 0; j < band * n; j++) {
            const float *const *b = rows + (j / n) * k;
            float x = 0;
            for (long kk = 0; kk < k; kk++) x = __builtin_fmaf(ap[kk * mr], b[kk][j % n], x);
            if (e) x = tessera_gemm_epilogue_scalar(e, x, i, j);
            c[i * ldc + j] = x;
        }
    }
}

long tessera_sgemm_packed_count(long m, long k) {
    return (m + TESSERA_GEMM_PANEL_ROWS - 1) / TESSERA_GEMM_PANEL_ROWS * TESSERA_GEMM_PANEL_ROWS * k;
}

void tessera_sgemm_pack(const float *a, long lda, long m, long k, float *packed) {
    const long mr = TESSERA_GEMM_PANEL_ROWS;
    for (long p = 0; p < m; p += mr) {
        float *panel = packed + p * k;
        long rows = m - p < mr ? m - p : mr;
        const float *top = a + p * lda;
        if (rows == mr) {
            tessera_gather_columns8(top, lda, k, panel, mr);
            continue;
        }
        // Depth outer, rows inner: up to eight sequential read streams, one sequential write stream.
        for (long kk = 0; kk < k; kk++) {
            float *column = panel + kk * mr;
            for (long r = 0; r < rows; r++) column[r] = top[r * lda + kk];
            for (long r = rows; r < mr; r++) column[r] = 0.0f;
        }
    }
}

// The scalar body of tessera_gather_columns8 from column `from` on.
static void tessera_gather_columns8_scalar(const float *src, long lds, long from, long k, float *dst, long ldd) {
    for (long kk = from; kk < k; kk++)
        for (long r = 0; r < 8; r++) dst[kk * ldd + r] = src[r * lds + kk];
}

#if defined(__x86_64__)
#include <immintrin.h>

// Eight columns at a time: eight rows' 8-float pieces transposed in registers (unpack, shuffle,
// lane permute: only moves, so the bytes are the scalar body's).
__attribute__((target("avx2"))) static void tessera_gather_columns8_avx2(const float *src, long lds, long k,
                                                                         float *dst, long ldd) {
    long kk = 0;
    for (; kk + 8 <= k; kk += 8) {
        __m256 r0 = _mm256_loadu_ps(src + 0 * lds + kk), r1 = _mm256_loadu_ps(src + 1 * lds + kk);
        __m256 r2 = _mm256_loadu_ps(src + 2 * lds + kk), r3 = _mm256_loadu_ps(src + 3 * lds + kk);
        __m256 r4 = _mm256_loadu_ps(src + 4 * lds + kk), r5 = _mm256_loadu_ps(src + 5 * lds + kk);
        __m256 r6 = _mm256_loadu_ps(src + 6 * lds + kk), r7 = _mm256_loadu_ps(src + 7 * lds + kk);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
        __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
        float *out = dst + kk * ldd;
        _mm256_storeu_ps(out + 0 * ldd, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(out + 1 * ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(out + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(out + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(out + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(out + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(out + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
        _mm256_storeu_ps(out + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    tessera_gather_columns8_scalar(src, lds, kk, k, dst, ldd);
}
#endif

void tessera_gather_columns8_variant(int vectorized, const float *src, long lds, long k, float *dst, long ldd) {
#if defined(__x86_64__)
    if (vectorized && tessera_cpu_has_avx2_fma()) {
        tessera_gather_columns8_avx2(src, lds, k, dst, ldd);
        return;
    }
#else
    (void)vectorized;
#endif
    tessera_gather_columns8_scalar(src, lds, 0, k, dst, ldd);
}

void tessera_gather_columns8(const float *src, long lds, long k, float *dst, long ldd) {
    tessera_gather_columns8_variant(1, src, lds, k, dst, ldd);
}

#if defined(__x86_64__)
#include <immintrin.h>

static int tessera_gemm_has_avx512f(void) {
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

// How far ahead along its packed panel each AVX-512 tile prefetches a, in floats (32 depth steps,
// 1 KiB; 512 B and 2 KiB did as well). A model's weights come from L3 or memory (the layers in
// between evicted them) and a deep layer's panel is read once or twice per prediction, so the
// hardware fetches it too late: MobileNetV2's 14 × 14 and 7 × 7 pointwise products with a cold
// weight took 5-10 % longer than with a warm one, and this takes 2-4 % off them (one core, C
// harness; warm weights unchanged).
#define TESSERA_GEMM_A_AHEAD 256

#define TESSERA_GEMM512_ATTR __attribute__((target("avx512f,avx2,fma,prfchw"), min_vector_width(512)))
#define TESSERA_GEMM256_ATTR __attribute__((target("avx2,fma")))

// The end of an 8-row × (16·NV)-column tile: each of the first `rows` rows of acc, with the
// epilogue (bias per row, then the residual, then the clamp) when e is not NULL, stored to c.
TESSERA_GEMM512_ATTR __attribute__((always_inline)) static inline void tessera_gemm_tile_store_avx512(
    const int NV, __m512 acc[8][3], float *restrict c, long ldc, long rows, __mmask16 last,
    const tessera_gemm_epilogue *e) {
    const __m512 lo = _mm512_set1_ps(e ? e->lo : -__builtin_inff());
    const __m512 hi = _mm512_set1_ps(e ? e->hi : __builtin_inff());
    for (int r = 0; r < 8; r++) {
        if (r >= rows) break;
        float *out = c + r * ldc;
        if (!e) {
            for (int v = 0; v < NV; v++) {
                if (v == NV - 1) _mm512_mask_storeu_ps(out + 16 * v, last, acc[r][v]);
                else _mm512_storeu_ps(out + 16 * v, acc[r][v]);
            }
            continue;
        }
        const float *res = e->residual ? e->residual + r * e->ldr : NULL;
        for (int v = 0; v < NV; v++) {
            __m512 x = acc[r][v];
            if (e->bias) x = _mm512_add_ps(x, _mm512_set1_ps(e->bias[r]));
            if (res) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(v == NV - 1 ? last : 0xFFFF, res + 16 * v));
            x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
            if (v == NV - 1) _mm512_mask_storeu_ps(out + 16 * v, last, x);
            else _mm512_storeu_ps(out + 16 * v, x);
        }
    }
}

// One 8-row × (16·NV)-column tile, NV ≤ 3 vectors, the last one masked by `last`; `rows` ≤ 8
// of the panel's rows are stored. The accumulators stay in registers across the whole k loop.
TESSERA_GEMM512_ATTR __attribute__((always_inline)) static inline void tessera_gemm_tile_avx512(
    const int NV, const float *restrict ap, const float *restrict b, long ldb, long k, float *restrict c, long ldc,
    long rows, __mmask16 last, int accumulate, const tessera_gemm_epilogue *e) {
    __m512 acc[8][3];
    // The next tile along the row (48 columns on): its output lines are asked for with intent
    // to write now, and its rows of b a little at a time in the k loop, so the hardware fetches
    // them while this tile computes. An expanding pointwise convolution's b has k rows a plane
    // apart — more streams than the prefetcher follows — and its c is written to memory not in
    // cache; together they cost ~10 % of a cold product. Prefetches never fault, so the lines
    // past the end of a row or of the matrix are harmless.
    for (int r = 0; r < 8; r++)
        for (int v = 0; v < 3; v++) __builtin_prefetch(c + r * ldc + 48 + 16 * v, 1, 3);
    for (int r = 0; r < 8; r++)
        for (int v = 0; v < NV; v++)
            acc[r][v] = accumulate && r < rows ? _mm512_maskz_loadu_ps(v == NV - 1 ? last : 0xFFFF, c + r * ldc + 16 * v)
                                               : _mm512_setzero_ps();
    for (long kk = 0; kk < k; kk++) {
        const float *row = b + kk * ldb;
        __m512 bv[3];
        for (int v = 0; v < 3; v++) _mm_prefetch((const char *)(row + 48 + 16 * v), _MM_HINT_T0);
        for (int v = 0; v < NV; v++)
            bv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, row + 16 * v) : _mm512_loadu_ps(row + 16 * v);
        const float *a = ap + kk * 8;
        _mm_prefetch((const char *)(a + TESSERA_GEMM_A_AHEAD), _MM_HINT_T0);
        for (int r = 0; r < 8; r++) {
            __m512 w = _mm512_set1_ps(a[r]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(w, bv[v], acc[r][v]);
        }
    }
    tessera_gemm_tile_store_avx512(NV, acc, c, ldc, rows, last, e);
}

TESSERA_GEMM512_ATTR static void tessera_gemm_tile_avx512_1(const float *ap, const float *b, long ldb, long k,
                                                           float *c, long ldc, long rows, __mmask16 last, int accumulate,
                                                           const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx512(1, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}
TESSERA_GEMM512_ATTR static void tessera_gemm_tile_avx512_2(const float *ap, const float *b, long ldb, long k,
                                                           float *c, long ldc, long rows, __mmask16 last, int accumulate,
                                                           const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx512(2, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}
TESSERA_GEMM512_ATTR static void tessera_gemm_tile_avx512_3(const float *ap, const float *b, long ldb, long k,
                                                           float *c, long ldc, long rows, __mmask16 last, int accumulate,
                                                           const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx512(3, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}

// The epilogue's pointers moved to a tile starting `row` rows and `column` columns in.
static inline tessera_gemm_epilogue tessera_gemm_shifted(const tessera_gemm_epilogue *e, long row, long column) {
    tessera_gemm_epilogue s = *e;
    if (s.bias) s.bias += row;
    if (s.residual) s.residual += row * s.ldr + column;
    return s;
}

// Depth per block: a block of b (depth × 48 floats, 96 KiB) stays in L2 while every panel of a
// runs over it; blocks after the first add to the partial sums in c, the last applies the epilogue.
#define TESSERA_GEMM_DEPTH_BLOCK 512

// Whether to copy each block of b into a contiguous buffer first: when its rows are far apart (one
// page or more each) and enough panels of a reuse the copy.
static inline int tessera_gemm_packs_b(long m, long k, long ldb) { return k >= 64 && ldb >= 1024 && m >= 64; }

// Copies rows [0, kc) × columns [0, width) of b (row stride ldb) to dst with row stride `stride`.
static void tessera_gemm_copy_b(const float *b, long ldb, long kc, long width, float *dst, long stride) {
    for (long kk = 0; kk < kc; kk++) __builtin_memcpy(dst + kk * stride, b + kk * ldb, (size_t)width * sizeof(float));
}

// The driver for one ISA: columns in blocks of W (the tile's width), depth in blocks of
// TESSERA_GEMM_DEPTH_BLOCK, rows in steps of R; TILE(nv, ap, b, ldb, kc, c, rows, accumulate, e);
// AFTER_ROWS(i, rows) once rows i ..< i + rows are finished (their last tile's last depth block).
#define TESSERA_GEMM_DRIVER(W, VL, R, MASK_T, MAKE_MASK, TILE, AFTER_ROWS)                                    \
    if (m <= 0 || n <= 0) return;                                                                           \
    const long KC = TESSERA_GEMM_DEPTH_BLOCK;                                                               \
    const long depthBlocks = k == 0 ? 1 : (k + KC - 1) / KC;                                                \
    float *copy = tessera_gemm_packs_b(m, k, ldb) ? malloc(sizeof(float) * (W) * (k < KC ? k : KC)) : NULL; \
    for (long j = 0; j < n; j += (W)) {                                                                     \
        long width = n - j < (W) ? n - j : (W);                                                             \
        int nv = (int)((width + (VL) - 1) / (VL));                                                          \
        long tail = width - (VL) * (nv - 1);                                                                \
        MASK_T last = MAKE_MASK(tail);                                                                      \
        for (long block = 0; block < depthBlocks; block++) {                                                \
            long k0 = block * KC;                                                                           \
            long kc = k - k0 < KC ? k - k0 : KC;                                                            \
            const float *bb = b + k0 * ldb + j;                                                             \
            long lb = ldb;                                                                                  \
            if (copy) {                                                                                     \
                tessera_gemm_copy_b(bb, ldb, kc, width, copy, (W));                                         \
                bb = copy;                                                                                  \
                lb = (W);                                                                                   \
            }                                                                                               \
            int lastBlock = block == depthBlocks - 1;                                                       \
            for (long i = 0; i < m; i += (R)) {                                                             \
                long rows = m - i < (R) ? m - i : (R);                                                      \
                tessera_gemm_epilogue shifted;                                                              \
                const tessera_gemm_epilogue *te = NULL;                                                     \
                if (e && lastBlock) {                                                                       \
                    shifted = tessera_gemm_shifted(e, i, j);                                                \
                    te = &shifted;                                                                          \
                }                                                                                           \
                /* Rows i..i+R-1 of panel i / 8, from depth k0 on. */                                       \
                const float *ap = packed + (i / 8) * 8 * k + k0 * 8 + (i % 8);                              \
                TILE(nv, ap, bb, lb, kc, c + i * ldc + j, ldc, rows, last, block > 0, te);                  \
                if (lastBlock && j + (W) >= n) AFTER_ROWS(i, rows)                                          \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
    free(copy);

#define TESSERA_GEMM512_MASK(tail) ((__mmask16)((tail) >= 16 ? 0xFFFFu : ((1u << (tail)) - 1u)))
#define TESSERA_GEMM512_TILE(nv, ...)                                     \
    if ((nv) == 3) tessera_gemm_tile_avx512_3(__VA_ARGS__);               \
    else if ((nv) == 2) tessera_gemm_tile_avx512_2(__VA_ARGS__);          \
    else tessera_gemm_tile_avx512_1(__VA_ARGS__);

// Bytes of b per chunk of columns in the one-depth-block order below: the chunk stays in L2 while
// every panel of a runs along it.
#define TESSERA_GEMM_CHUNK_BYTES (128 << 10)

// The last W ≤ 4 columns of a product, rows in the lanes: NP panels at a time, one 8-row ymm
// accumulator per panel and column, a[kk·8 .. kk·8 + 8) · b[kk, column] added with FMA in k order
// from zero — each sum the same chain, so the same bits, as the 48-column tile's — then the
// epilogue per lane and the rows stored one by one. A 16-lane tile spends a whole vector FMA per
// row on each such column (a 7 × 7 plane's 49th column costs a third of its first 48); here a
// column costs one 8-lane FMA per panel. Each accumulator is a chain of k dependent FMAs, so the
// panels run in groups of NP with NP · W ≥ 8 chains in flight (8 panels for one column): with two
// panels, one column kept the FMA units a quarter busy and cost 8-11 % of MobileNetV2's 7 × 7
// pointwise products instead of the 2 % its arithmetic is. e's pointers are relative to row 0
// and the first of the W columns; `first` is the group's first row.
TESSERA_GEMM512_ATTR __attribute__((always_inline)) static inline void tessera_gemm_narrow_group_avx512(
    const int W, const int NP, const float *restrict packed, long first, long m, long k, const float *restrict b,
    long ldb, float *restrict c, long ldc, const tessera_gemm_epilogue *e) {
    const __m256 lo = _mm256_set1_ps(e ? e->lo : -__builtin_inff());
    const __m256 hi = _mm256_set1_ps(e ? e->hi : __builtin_inff());
    const float *a = packed + first * k;
    __m256 acc[8][4];
    for (int p = 0; p < NP; p++)
        for (int w = 0; w < W; w++) acc[p][w] = _mm256_setzero_ps();
    for (long kk = 0; kk < k; kk++) {
        __m256 x[8];
        for (int p = 0; p < NP; p++) x[p] = _mm256_loadu_ps(a + p * 8 * k + kk * 8);
        for (int w = 0; w < W; w++) {
            __m256 bw = _mm256_set1_ps(b[kk * ldb + w]);
            for (int p = 0; p < NP; p++) acc[p][w] = _mm256_fmadd_ps(x[p], bw, acc[p][w]);
        }
    }
    for (int p = 0; p < NP; p++) {
        long top = first + 8 * p;
        long rows = m - top < 8 ? m - top : 8;
        float lanes[8];
        for (long r = 0; r < 8; r++) lanes[r] = e && e->bias && r < rows ? e->bias[top + r] : 0.0f;
        const __m256 bias = _mm256_loadu_ps(lanes);
        for (int w = 0; w < W; w++) {
            __m256 v = acc[p][w];
            if (e) {
                if (e->bias) v = _mm256_add_ps(v, bias);
                if (e->residual) {
                    for (long r = 0; r < 8; r++) lanes[r] = r < rows ? e->residual[(top + r) * e->ldr + w] : 0.0f;
                    v = _mm256_add_ps(v, _mm256_loadu_ps(lanes));
                }
                v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
            }
            _mm256_storeu_ps(lanes, v);
            for (long r = 0; r < rows; r++) c[(top + r) * ldc + w] = lanes[r];
        }
    }
}

// All of m's panels: groups of 8 / W panels (at least 2) while they last, then one at a time.
TESSERA_GEMM512_ATTR __attribute__((always_inline)) static inline void tessera_gemm_narrow_avx512(
    const int W, const float *restrict packed, long m, long k, const float *restrict b, long ldb, float *restrict c,
    long ldc, const tessera_gemm_epilogue *e) {
    const long panels = (m + 7) / 8;
    long p = 0;
    if (W == 1) {
        for (; p + 8 <= panels; p += 8) tessera_gemm_narrow_group_avx512(W, 8, packed, 8 * p, m, k, b, ldb, c, ldc, e);
        for (; p + 4 <= panels; p += 4) tessera_gemm_narrow_group_avx512(W, 4, packed, 8 * p, m, k, b, ldb, c, ldc, e);
    } else if (W == 2) {
        for (; p + 4 <= panels; p += 4) tessera_gemm_narrow_group_avx512(W, 4, packed, 8 * p, m, k, b, ldb, c, ldc, e);
    }
    for (; p + 2 <= panels; p += 2) tessera_gemm_narrow_group_avx512(W, 2, packed, 8 * p, m, k, b, ldb, c, ldc, e);
    for (; p < panels; p++) tessera_gemm_narrow_group_avx512(W, 1, packed, 8 * p, m, k, b, ldb, c, ldc, e);
}

TESSERA_GEMM512_ATTR static void tessera_gemm_narrow_avx512_any(long width, const float *packed, long m, long k,
                                                               const float *b, long ldb, float *c, long ldc,
                                                               const tessera_gemm_epilogue *e) {
    switch (width) {
    case 1: tessera_gemm_narrow_avx512(1, packed, m, k, b, ldb, c, ldc, e); break;
    case 2: tessera_gemm_narrow_avx512(2, packed, m, k, b, ldb, c, ldc, e); break;
    case 3: tessera_gemm_narrow_avx512(3, packed, m, k, b, ldb, c, ldc, e); break;
    default: tessera_gemm_narrow_avx512(4, packed, m, k, b, ldb, c, ldc, e); break;
    }
}

// Column tails this narrow or narrower take tessera_gemm_narrow_avx512.
#define TESSERA_GEMM_NARROW_COLUMNS 4

// The narrow tail (columns n ..< n + narrow, narrow ≤ TESSERA_GEMM_NARROW_COLUMNS) of the panels
// of a group of 8 ending at rows [i, i + rows), run once that group's wide tiles are done, while
// its panels of a are still in L2: a 7 × 7 plane's one tile and narrow column read a 1.2 MB weight
// once instead of twice (after the wide pass, the weight had left L2 for L3).
TESSERA_GEMM512_ATTR static inline void tessera_gemm_narrow_after(const float *packed, long m, long k, const float *b,
                                                                 long ldb, float *c, long ldc,
                                                                 const tessera_gemm_epilogue *e, long n, long narrow,
                                                                 long i, long rows) {
    if (narrow == 0 || ((i / 8) % 8 != 7 && i + rows < m)) return;
    long g0 = i / 64 * 64;
    tessera_gemm_epilogue shifted;
    const tessera_gemm_epilogue *te = NULL;
    if (e) {
        shifted = tessera_gemm_shifted(e, g0, n);
        te = &shifted;
    }
    tessera_gemm_narrow_avx512_any(narrow, packed + g0 * k, i + rows - g0, k, b + n, ldb, c + g0 * ldc + n, ldc, te);
}

// Depth within one block (k ≤ TESSERA_GEMM_DEPTH_BLOCK): columns in chunks of about
// TESSERA_GEMM_CHUNK_BYTES of b, then panels of 8 rows, then tiles of 48 columns along the chunk,
// so each panel writes its 8 rows of c sequentially. (Columns outer and every panel inner writes m
// rows a page or more apart at once: on an expanding pointwise convolution — 96 × 12544 × 16, say —
// that many store streams cost ~30 % of the product with cold caches.) Each sum is the same FMA
// chain in k order from zero as the other order's. A narrow tail of `narrow` columns past n follows
// each group of 8 panels in the last chunk (tessera_gemm_narrow_after).
TESSERA_GEMM512_ATTR static void tessera_sgemm_packed_avx512_chunked(const float *packed, long m, long n, long k,
                                                                    const float *b, long ldb, float *c, long ldc,
                                                                    const tessera_gemm_epilogue *e, long narrow) {
    long chunk = TESSERA_GEMM_CHUNK_BYTES / (long)sizeof(float) / (k > 0 ? k : 1) / 48 * 48;
    if (chunk < 48) chunk = 48;
    for (long jc = 0; jc < n; jc += chunk) {
        long end = n - jc < chunk ? n : jc + chunk;
        for (long i = 0; i < m; i += 8) {
            long rows = m - i < 8 ? m - i : 8;
            const float *ap = packed + i * k;
            for (long j = jc; j < end; j += 48) {
                long width = end - j < 48 ? end - j : 48;
                int nv = (int)((width + 15) / 16);
                __mmask16 last = TESSERA_GEMM512_MASK(width - 16 * (nv - 1));
                tessera_gemm_epilogue shifted;
                const tessera_gemm_epilogue *te = NULL;
                if (e) {
                    shifted = tessera_gemm_shifted(e, i, j);
                    te = &shifted;
                }
                TESSERA_GEMM512_TILE(nv, ap, b + j, ldb, k, c + i * ldc + j, ldc, rows, last, 0, te);
            }
            if (end == n) tessera_gemm_narrow_after(packed, m, k, b, ldb, c, ldc, e, n, narrow, i, rows);
        }
    }
}

// Deeper products: columns in blocks of 48 outer, depth in blocks of TESSERA_GEMM_DEPTH_BLOCK, every
// panel inner (see TESSERA_GEMM_DRIVER), the narrow tail as in the chunked order.
TESSERA_GEMM512_ATTR static void tessera_sgemm_packed_avx512_blocked(const float *packed, long m, long n, long k,
                                                                    const float *b, long ldb, float *c, long ldc,
                                                                    const tessera_gemm_epilogue *e, long narrow) {
#define TESSERA_GEMM512_AFTER_ROWS(i, rows) tessera_gemm_narrow_after(packed, m, k, b, ldb, c, ldc, e, n, narrow, i, rows);
    TESSERA_GEMM_DRIVER(48, 16, 8, __mmask16, TESSERA_GEMM512_MASK, TESSERA_GEMM512_TILE, TESSERA_GEMM512_AFTER_ROWS)
#undef TESSERA_GEMM512_AFTER_ROWS
}

TESSERA_GEMM512_ATTR static void tessera_sgemm_packed_avx512(const float *packed, long m, long n, long k,
                                                            const float *b, long ldb, float *c, long ldc,
                                                            const tessera_gemm_epilogue *e) {
    // A tail of TESSERA_GEMM_NARROW_COLUMNS or fewer past the last full tile goes to the narrow body.
    long tail = n % 48 <= TESSERA_GEMM_NARROW_COLUMNS ? n % 48 : 0;
    long wide = n - tail;
    if (wide > 0 && k <= TESSERA_GEMM_DEPTH_BLOCK) {
        tessera_sgemm_packed_avx512_chunked(packed, m, wide, k, b, ldb, c, ldc, e, tail);
    } else if (wide > 0) {
        tessera_sgemm_packed_avx512_blocked(packed, m, wide, k, b, ldb, c, ldc, e, tail);
    } else if (tail > 0) {
        tessera_gemm_narrow_avx512_any(tail, packed, m, k, b, ldb, c, ldc, e);
    }
}

// tessera_sgemm_packed_rows: the 8-row × (16·NV)-column tile of tessera_gemm_tile_avx512 with row
// kk of b at b[kk] + column (a convolution's input rows, read in place), from zero.
TESSERA_GEMM512_ATTR __attribute__((always_inline)) static inline void tessera_gemm_rows_tile_avx512(
    const int NV, const float *restrict ap, const float *const *restrict b, long column, long k, float *restrict c,
    long ldc, long rows, __mmask16 last, const tessera_gemm_epilogue *e) {
    __m512 acc[8][3];
    // The next tile's output lines, asked for with intent to write (as tessera_gemm_tile_avx512).
    for (int r = 0; r < 8; r++)
        for (int v = 0; v < 3; v++) __builtin_prefetch(c + r * ldc + 48 + 16 * v, 1, 3);
    for (int r = 0; r < 8; r++)
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    for (long kk = 0; kk < k; kk++) {
        const float *row = b[kk] + column;
        __m512 bv[3];
        for (int v = 0; v < NV; v++)
            bv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, row + 16 * v) : _mm512_loadu_ps(row + 16 * v);
        const float *a = ap + kk * 8;
        for (int r = 0; r < 8; r++) {
            __m512 w = _mm512_set1_ps(a[r]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(w, bv[v], acc[r][v]);
        }
    }
    tessera_gemm_tile_store_avx512(NV, acc, c, ldc, rows, last, e);
}

#define TESSERA_GEMM_ROWS_TILE(NV)                                                                               \
    TESSERA_GEMM512_ATTR static void tessera_gemm_rows_tile_avx512_##NV(                                        \
        const float *ap, const float *const *b, long column, long k, float *c, long ldc, long rows, __mmask16 last, \
        const tessera_gemm_epilogue *e) {                                                                        \
        tessera_gemm_rows_tile_avx512(NV, ap, b, column, k, c, ldc, rows, last, e);                              \
    }
TESSERA_GEMM_ROWS_TILE(1)
TESSERA_GEMM_ROWS_TILE(2)
TESSERA_GEMM_ROWS_TILE(3)

// Panels of 8 rows outer, then the band's output rows, then tiles of 48 columns: a panel of A stays
// in L1 while it runs along the band, the band's input rows (k per output row) stay in L2, and
// each panel writes its rows of c front to back. (Output rows outer, every panel inner, was 13 %
// slower on MobileNetV2's first layer.)
TESSERA_GEMM512_ATTR static void tessera_sgemm_packed_rows_avx512(const float *packed, long m, long n, long k,
                                                                 const float *const *rows, long band, float *c,
                                                                 long ldc, const tessera_gemm_epilogue *e) {
    for (long i = 0; i < m; i += 8) {
        long count = m - i < 8 ? m - i : 8;
        const float *ap = packed + i * k;
        for (long t = 0; t < band; t++) {
            const float *const *b = rows + t * k;
            for (long j = 0; j < n; j += 48) {
                long width = n - j < 48 ? n - j : 48;
                int nv = (int)((width + 15) / 16);
                __mmask16 last = TESSERA_GEMM512_MASK(width - 16 * (nv - 1));
                tessera_gemm_epilogue shifted;
                const tessera_gemm_epilogue *te = NULL;
                if (e) {
                    shifted = tessera_gemm_shifted(e, i, t * n + j);
                    te = &shifted;
                }
                float *out = c + i * ldc + t * n + j;
                if (nv == 3) tessera_gemm_rows_tile_avx512_3(ap, b, j, k, out, ldc, count, last, te);
                else if (nv == 2) tessera_gemm_rows_tile_avx512_2(ap, b, j, k, out, ldc, count, last, te);
                else tessera_gemm_rows_tile_avx512_1(ap, b, j, k, out, ldc, count, last, te);
            }
        }
    }
}

// AVX2: half a panel (4 rows, `half` 0 or 1) × (8·NV) columns, NV ≤ 3; the last vector's lanes
// past `tail` are neither read nor written.
TESSERA_GEMM256_ATTR __attribute__((always_inline)) static inline void tessera_gemm_tile_avx2(
    const int NV, const int MASKED, const float *restrict ap, const float *restrict b, long ldb, long k, float *restrict c, long ldc,
    long rows, __m256i last, int accumulate, const tessera_gemm_epilogue *e) {
    __m256 acc[4][3];
    const __m256i all = _mm256_set1_epi32(-1);
    for (int r = 0; r < 4; r++)
        for (int v = 0; v < NV; v++)
            acc[r][v] = accumulate && r < rows ? _mm256_maskload_ps(c + r * ldc + 8 * v, v == NV - 1 ? last : all)
                                               : _mm256_setzero_ps();
    for (long kk = 0; kk < k; kk++) {
        const float *row = b + kk * ldb;
        __m256 bv[3];
        for (int v = 0; v < NV; v++)
            bv[v] = v == NV - 1 && MASKED ? _mm256_maskload_ps(row + 8 * v, last) : _mm256_loadu_ps(row + 8 * v);
        const float *a = ap + kk * 8;
        for (int r = 0; r < 4; r++) {
            __m256 w = _mm256_broadcast_ss(a + r);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(w, bv[v], acc[r][v]);
        }
    }
    const __m256 lo = _mm256_set1_ps(e ? e->lo : -__builtin_inff());
    const __m256 hi = _mm256_set1_ps(e ? e->hi : __builtin_inff());
    for (int r = 0; r < 4; r++) {
        if (r >= rows) break;
        float *out = c + r * ldc;
        const float *res = e && e->residual ? e->residual + r * e->ldr : NULL;
        for (int v = 0; v < NV; v++) {
            __m256 x = acc[r][v];
            if (e) {
                if (e->bias) x = _mm256_add_ps(x, _mm256_set1_ps(e->bias[r]));
                if (res) x = _mm256_add_ps(x, _mm256_maskload_ps(res + 8 * v, v == NV - 1 && MASKED ? last : all));
                x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
            }
            if (v == NV - 1 && MASKED) _mm256_maskstore_ps(out + 8 * v, last, x);
            else _mm256_storeu_ps(out + 8 * v, x);
        }
    }
}

TESSERA_GEMM256_ATTR static void tessera_gemm_tile_avx2_1(const float *ap, const float *b, long ldb, long k, float *c,
                                                         long ldc, long rows, __m256i last, int accumulate,
                                                         const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx2(1, 1, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}
TESSERA_GEMM256_ATTR static void tessera_gemm_tile_avx2_2(const float *ap, const float *b, long ldb, long k, float *c,
                                                         long ldc, long rows, __m256i last, int accumulate,
                                                         const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx2(2, 1, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}
TESSERA_GEMM256_ATTR static void tessera_gemm_tile_avx2_3(const float *ap, const float *b, long ldb, long k, float *c,
                                                         long ldc, long rows, __m256i last, int accumulate,
                                                         const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx2(3, 1, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}

// The common full tile (24 columns): plain loads and stores, which AVX2's masked ones are slower than.
TESSERA_GEMM256_ATTR static void tessera_gemm_tile_avx2_3_full(const float *ap, const float *b, long ldb, long k,
                                                              float *c, long ldc, long rows, __m256i last,
                                                              int accumulate, const tessera_gemm_epilogue *e) {
    tessera_gemm_tile_avx2(3, 0, ap, b, ldb, k, c, ldc, rows, last, accumulate, e);
}

#define TESSERA_GEMM256_TILE(nv, ...)                                     \
    if ((nv) == 3 && width == 24) tessera_gemm_tile_avx2_3_full(__VA_ARGS__); \
    else if ((nv) == 3) tessera_gemm_tile_avx2_3(__VA_ARGS__);            \
    else if ((nv) == 2) tessera_gemm_tile_avx2_2(__VA_ARGS__);            \
    else tessera_gemm_tile_avx2_1(__VA_ARGS__);

TESSERA_GEMM256_ATTR static void tessera_sgemm_packed_avx2(const float *packed, long m, long n, long k,
                                                          const float *b, long ldb, float *c, long ldc,
                                                          const tessera_gemm_epilogue *e) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#define TESSERA_GEMM256_MASK(tail) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(tail)), lanes)
#define TESSERA_GEMM256_AFTER_ROWS(i, rows) {}
    TESSERA_GEMM_DRIVER(24, 8, 4, __m256i, TESSERA_GEMM256_MASK, TESSERA_GEMM256_TILE, TESSERA_GEMM256_AFTER_ROWS)
#undef TESSERA_GEMM256_AFTER_ROWS
#undef TESSERA_GEMM256_MASK
}

int tessera_sgemm_has_avx512(void) { return tessera_gemm_has_avx512f(); }

void tessera_sgemm_packed_variant(int avx512, const float *packed, long m, long n, long k, const float *b, long ldb,
                                  float *c, long ldc, const tessera_gemm_epilogue *e) {
    if (m <= 0 || n <= 0) return;
    if (avx512 && tessera_gemm_has_avx512f()) {
        tessera_sgemm_packed_avx512(packed, m, n, k, b, ldb, c, ldc, e);
    } else {
        tessera_sgemm_packed_avx2(packed, m, n, k, b, ldb, c, ldc, e);
    }
}

void tessera_sgemm_packed(const float *packed, long m, long n, long k, const float *b, long ldb, float *c, long ldc,
                          const tessera_gemm_epilogue *e) {
    if (m <= 0 || n <= 0) return;
    if (tessera_gemm_has_avx512f()) {
        tessera_sgemm_packed_avx512(packed, m, n, k, b, ldb, c, ldc, e);
    } else {
        tessera_sgemm_packed_avx2(packed, m, n, k, b, ldb, c, ldc, e);
    }
}

void tessera_sgemm_packed_rows(const float *packed, long m, long n, long k, const float *const *rows, long band,
                               float *c, long ldc, const tessera_gemm_epilogue *e) {
    if (m <= 0 || n <= 0 || band <= 0) return;
    if (tessera_gemm_has_avx512f()) {
        tessera_sgemm_packed_rows_avx512(packed, m, n, k, rows, band, c, ldc, e);
    } else {
        tessera_sgemm_packed_rows_scalar(packed, m, n, k, rows, band, c, ldc, e);
    }
}

#else

int tessera_sgemm_has_avx512(void) { return 0; }

void tessera_sgemm_packed_rows(const float *packed, long m, long n, long k, const float *const *rows, long band,
                               float *c, long ldc, const tessera_gemm_epilogue *e) {
    if (m <= 0 || n <= 0 || band <= 0) return;
    tessera_sgemm_packed_rows_scalar(packed, m, n, k, rows, band, c, ldc, e);
}

void tessera_sgemm_packed_variant(int avx512, const float *packed, long m, long n, long k, const float *b, long ldb,
                                  float *c, long ldc, const tessera_gemm_epilogue *e) {
    (void)avx512;
    tessera_sgemm_packed(packed, m, n, k, b, ldb, c, ldc, e);
}

// Other architectures: the same sums in k order, one element at a time (Swift calls the
// kernels only on x86-64 CPUs with AVX2 + FMA; this keeps the symbol defined).
void tessera_sgemm_packed(const float *packed, long m, long n, long k, const float *b, long ldb, float *c, long ldc,
                          const tessera_gemm_epilogue *e) {
    const long mr = TESSERA_GEMM_PANEL_ROWS;
    for (long i = 0; i < m; i++) {
        const float *ap = packed + (i / mr) * mr * k + (i % mr);
        for (long j = 0; j < n; j++) {
            float x = 0;
            for (long kk = 0; kk < k; kk++) x = __builtin_fmaf(ap[kk * mr], b[kk * ldb + j], x);
            if (e) x = tessera_gemm_epilogue_scalar(e, x, i, j);
            c[i * ldc + j] = x;
        }
    }
}

#endif
