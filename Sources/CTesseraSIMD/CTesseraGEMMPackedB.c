// The SGEMM micro-kernel over a pre-packed right operand (a linear layer's weight, packed once):
// C = epilogue(A · B) with A row-major and read in place, B in strips of 16 columns. AVX-512
// body with a per-function target attribute, picked at run time; a scalar loop elsewhere.
#include "CTesseraGEMM.h"

#include "CTesseraSIMD.h"

#include <math.h>
#include <stdlib.h>

#define STRIP TESSERA_GEMM_STRIP_COLUMNS

long tessera_sgemm_packed_b_count(long k, long n) { return (n + STRIP - 1) / STRIP * STRIP * k; }

void tessera_sgemm_pack_b(const float *b, long ldb, int transposed, long k, long n, float *packed) {
    for (long s = 0; s < n; s += STRIP) {
        float *strip = packed + s * k;
        long width = n - s < STRIP ? n - s : STRIP;
        if (transposed) {
            // b is [n, k]: column j of B is row j of b. Depth outer, columns inner: sixteen
            // sequential read streams and one sequential write stream. Column by column, every
            // write went to another cache line of a strip larger than L1: 1.7x slower on a
            // [1000, 1280] or [3072, 768] weight, level on [768, 3072] (thread CPU time).
            // Whole groups of eight columns go through tessera_gather_columns8 (8 × 8 blocks
            // transposed in registers), the rest element by element.
            long whole = width / 8 * 8;
            for (long j = 0; j < whole; j += 8) tessera_gather_columns8(b + (s + j) * ldb, ldb, k, strip + j, STRIP);
            for (long kk = 0; kk < k; kk++) {
                float *row = strip + kk * STRIP;
                for (long j = whole; j < width; j++) row[j] = b[(s + j) * ldb + kk];
            }
        } else {
            for (long kk = 0; kk < k; kk++)
                for (long j = 0; j < width; j++) strip[kk * STRIP + j] = b[kk * ldb + s + j];
        }
        for (long kk = 0; kk < k; kk++)
            for (long j = width; j < STRIP; j++) strip[kk * STRIP + j] = 0.0f;
    }
}

// The epilogue on one value of column `column` of row `row` (relative to the call's origin).
static inline float tessera_gemm_b_finish(float x, long row, long column, const tessera_gemm_epilogue *e) {
    if (!e) return x;
    if (e->bias) x = x + e->bias[column];
    if (e->residual) x = x + e->residual[row * e->ldr + column];
    x = e->lo > x ? e->lo : x;
    x = e->hi < x ? e->hi : x;
    return x;
}

// The activation over a chunk of at most TESSERA_ACTIVATION_CHUNK values; every multiply and add
// a statement of its own so that none contracts into an FMA (the element-wise programs round each).
#define TESSERA_ACTIVATION_CHUNK 256
// GELU's last step, both forms: p = (p · 0.5) · (t + 1), t holding erf(p/√2) or tanh(√(2/π)(p + 0.044715p³)).
static inline __attribute__((always_inline)) void tessera_gelu_finish(float *p, const float *t, long n) {
    for (long i = 0; i < n; i++) {
        float half = p[i] * 0.5f;
        float shifted = t[i] + 1.0f;
        p[i] = half * shifted;
    }
}

static inline __attribute__((always_inline)) void tessera_activation_chunk(int activation, float *p, long n,
                                                                           int vector) {
    float t[TESSERA_ACTIVATION_CHUNK];
    switch (activation) {
    case TESSERA_ACTIVATION_GELU_ERF:
        for (long i = 0; i < n; i++) t[i] = p[i] * 0.70710678118654752f;
        tessera_erf_f32_vector(t, t, n);
        tessera_gelu_finish(p, t, n);
        break;
    case TESSERA_ACTIVATION_GELU_TANH:
        for (long i = 0; i < n; i++) {
            float x = p[i];
            float square = x * x;
            float cube = square * x;
            float scaled = cube * 0.044715f;
            float sum = x + scaled;
            t[i] = sum * 0.79788456080286536f;
        }
        if (vector) {
            tessera_unary_f32_vector(TESSERA_UNARY_TANH, t, t, n);
        } else {
            for (long i = 0; i < n; i++) t[i] = tanhf(t[i]);
        }
        tessera_gelu_finish(p, t, n);
        break;
    case TESSERA_ACTIVATION_SILU:
        if (vector) {
            tessera_unary_f32_vector(TESSERA_UNARY_SIGMOID, p, t, n);
        } else {
            for (long i = 0; i < n; i++) t[i] = 1.0f / (1.0f + expf(-p[i]));
        }
        for (long i = 0; i < n; i++) p[i] = p[i] * t[i];
        break;
    default: break;
    }
}

// The chunks of a run, the multiply and add loops vectorised for the caller's target (the
// erf, tanh and logistic calls dispatch on their own).
#define TESSERA_ACTIVATION_RUN_BODY                                                                       \
    for (long i = 0; i < n; i += TESSERA_ACTIVATION_CHUNK)                                               \
        tessera_activation_chunk(activation, p + i, n - i < TESSERA_ACTIVATION_CHUNK ? n - i : TESSERA_ACTIVATION_CHUNK, \
                                 vector);

static void tessera_activation_run(int activation, float *p, long n, int vector) { TESSERA_ACTIVATION_RUN_BODY }

#if defined(__x86_64__)
__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static void tessera_activation_run_avx512(
    int activation, float *p, long n, int vector) {
    TESSERA_ACTIVATION_RUN_BODY
}
#endif

void tessera_activation_f32(int activation, float *p, long n) {
    if (activation == TESSERA_ACTIVATION_NONE) return;
    int vector = tessera_cpu_has_avx2_fma();
#if defined(__x86_64__)
    if (tessera_sgemm_packed_b_is_vectorized()) {
        tessera_activation_run_avx512(activation, p, n, vector);
        return;
    }
#endif
    tessera_activation_run(activation, p, n, vector);
}

static void tessera_sgemm_packed_b_scalar(long m, long n, long k, const float *a, long lda, const float *packed,
                                          float *c, long ldc, const tessera_gemm_epilogue *e, int activation) {
    for (long i = 0; i < m; i++) {
        for (long j = 0; j < n; j++) {
            const float *strip = packed + (j / STRIP) * STRIP * k + (j % STRIP);
            float x = 0;
            for (long kk = 0; kk < k; kk++) x = __builtin_fmaf(a[i * lda + kk], strip[kk * STRIP], x);
            c[i * ldc + j] = tessera_gemm_b_finish(x, i, j, e);
        }
        tessera_activation_f32(activation, c + i * ldc, n);
    }
}

#if defined(__x86_64__)
#include <immintrin.h>

#define TESSERA_GEMMB_ATTR __attribute__((target("avx512f,avx2,fma"), min_vector_width(512)))

// Rows of A per tile and strips of B per tile: 8 × 48 floats of C, 24 accumulators.
#define TESSERA_GEMMB_ROWS 8

// One tile: `rows` ≤ 8 rows of A from `a` (row stride lda) × NV ≤ 3 strips from `b` (strip
// stride k · 16), the last strip's lanes past `last` neither stored nor (for the residual) read.
// Each sum runs over k in order with FMA, from zero.
TESSERA_GEMMB_ATTR __attribute__((always_inline)) static inline void tessera_gemmb_tile(
    const int NV, const int R, const float *restrict a, long lda, const float *restrict b, long k, float *restrict c,
    long ldc, __mmask16 last, const tessera_gemm_epilogue *e, long column) {
    // Every loop over rows and strips unrolled in full, so the accumulators stay registers (a
    // loop left rolled indexes `acc` at run time: the array went to the stack, zeroed by memset).
    __m512 acc[TESSERA_GEMMB_ROWS][3];
#pragma clang loop unroll(full)
    for (int r = 0; r < R; r++)
#pragma clang loop unroll(full)
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    const long strideB = k * STRIP;
    for (long kk = 0; kk < k; kk++) {
        __m512 bv[3];
        for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + v * strideB + kk * STRIP);
        for (int r = 0; r < R; r++) {
            __m512 w = _mm512_set1_ps(a[r * lda + kk]);
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(w, bv[v], acc[r][v]);
        }
    }
    __m512 lo = _mm512_set1_ps(e ? e->lo : -__builtin_inff());
    __m512 hi = _mm512_set1_ps(e ? e->hi : __builtin_inff());
    __m512 bias[3];
    if (e && e->bias)
#pragma clang loop unroll(full)
        for (int v = 0; v < NV; v++)
            bias[v] = _mm512_maskz_loadu_ps(v == NV - 1 ? last : 0xFFFF, e->bias + column + 16 * v);
#pragma clang loop unroll(full)
    for (int r = 0; r < R; r++) {
        float *out = c + r * ldc;
#pragma clang loop unroll(full)
        for (int v = 0; v < NV; v++) {
            __mmask16 mask = v == NV - 1 ? last : 0xFFFF;
            __m512 x = acc[r][v];
            if (e) {
                if (e->bias) x = _mm512_add_ps(x, bias[v]);
                if (e->residual)
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, e->residual + r * e->ldr + column + 16 * v));
                x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
            }
            _mm512_mask_storeu_ps(out + 16 * v, mask, x);
        }
    }
}

// Tile bodies for every (strips, rows) pair, so the accumulators are registers, not memory.
#define TESSERA_GEMMB_BODY(NV, R)                                                                                \
    TESSERA_GEMMB_ATTR static void tessera_gemmb_tile_##NV##_##R(const float *a, long lda, const float *b, long k, \
                                                                 float *c, long ldc, __mmask16 last,             \
                                                                 const tessera_gemm_epilogue *e, long column) {  \
        tessera_gemmb_tile(NV, R, a, lda, b, k, c, ldc, last, e, column);                                        \
    }
#define TESSERA_GEMMB_BODIES(NV)                                                                                 \
    TESSERA_GEMMB_BODY(NV, 1)                                                                                    \
    TESSERA_GEMMB_BODY(NV, 2) TESSERA_GEMMB_BODY(NV, 3) TESSERA_GEMMB_BODY(NV, 4) TESSERA_GEMMB_BODY(NV, 5)     \
        TESSERA_GEMMB_BODY(NV, 6) TESSERA_GEMMB_BODY(NV, 7) TESSERA_GEMMB_BODY(NV, 8)
TESSERA_GEMMB_BODIES(1)
TESSERA_GEMMB_BODIES(2)
TESSERA_GEMMB_BODIES(3)

typedef void (*tessera_gemmb_tile_fn)(const float *, long, const float *, long, float *, long, __mmask16,
                                      const tessera_gemm_epilogue *, long);
#define TESSERA_GEMMB_ROW(NV)                                                                                    \
    {tessera_gemmb_tile_##NV##_1, tessera_gemmb_tile_##NV##_2, tessera_gemmb_tile_##NV##_3,                      \
     tessera_gemmb_tile_##NV##_4, tessera_gemmb_tile_##NV##_5, tessera_gemmb_tile_##NV##_6,                      \
     tessera_gemmb_tile_##NV##_7, tessera_gemmb_tile_##NV##_8}
static const tessera_gemmb_tile_fn tessera_gemmb_tiles[3][TESSERA_GEMMB_ROWS] = {
    TESSERA_GEMMB_ROW(1), TESSERA_GEMMB_ROW(2), TESSERA_GEMMB_ROW(3)};

TESSERA_GEMMB_ATTR static void tessera_sgemm_packed_b_avx512(long m, long n, long k, const float *a, long lda,
                                                            const float *packed, float *c, long ldc,
                                                            const tessera_gemm_epilogue *e, int activation) {
    // Rows outer: a block of 8 rows of A (8 · k floats) stays in L1 while the strips of B stream
    // past it from L2.
    for (long i = 0; i < m; i += TESSERA_GEMMB_ROWS) {
        long rows = m - i < TESSERA_GEMMB_ROWS ? m - i : TESSERA_GEMMB_ROWS;
        tessera_gemm_epilogue shifted;
        const tessera_gemm_epilogue *te = NULL;
        if (e) {
            shifted = *e;
            if (shifted.residual) shifted.residual += i * shifted.ldr;
            te = &shifted;
        }
        for (long j = 0; j < n; j += 3 * STRIP) {
            long width = n - j < 3 * STRIP ? n - j : 3 * STRIP;
            int nv = (int)((width + STRIP - 1) / STRIP);
            long tail = width - STRIP * (nv - 1);
            __mmask16 last = (__mmask16)(tail >= 16 ? 0xFFFFu : ((1u << tail) - 1u));
            tessera_gemmb_tiles[nv - 1][rows - 1](a + i * lda, lda, packed + j * k, k, c + i * ldc + j, ldc, last, te,
                                                 j);
        }
        // The block's rows were just written: finish them while they are in cache.
        if (activation != TESSERA_ACTIVATION_NONE)
            for (long r = 0; r < rows; r++) tessera_activation_f32(activation, c + (i + r) * ldc, n);
    }
}

int tessera_sgemm_packed_b_is_vectorized(void) {
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

void tessera_sgemm_packed_b_activated(long m, long n, long k, const float *a, long lda, const float *packed, float *c,
                                      long ldc, const tessera_gemm_epilogue *e, int activation) {
    if (m <= 0 || n <= 0) return;
    if (tessera_sgemm_packed_b_is_vectorized()) {
        tessera_sgemm_packed_b_avx512(m, n, k, a, lda, packed, c, ldc, e, activation);
    } else {
        tessera_sgemm_packed_b_scalar(m, n, k, a, lda, packed, c, ldc, e, activation);
    }
}

#else

int tessera_sgemm_packed_b_is_vectorized(void) { return 0; }

void tessera_sgemm_packed_b_activated(long m, long n, long k, const float *a, long lda, const float *packed, float *c,
                                      long ldc, const tessera_gemm_epilogue *e, int activation) {
    if (m <= 0 || n <= 0) return;
    tessera_sgemm_packed_b_scalar(m, n, k, a, lda, packed, c, ldc, e, activation);
}

#endif

void tessera_sgemm_packed_b(long m, long n, long k, const float *a, long lda, const float *packed, float *c, long ldc,
                            const tessera_gemm_epilogue *e) {
    tessera_sgemm_packed_b_activated(m, n, k, a, lda, packed, c, ldc, e, TESSERA_ACTIVATION_NONE);
}
