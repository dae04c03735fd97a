// Winograd F(m×m, 3×3) transforms, m = 2 or 4 (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016; interpolation points 0, ±1 for F(2,3) and 0, ±1, ±2 and
// infinity for F(4,3)). The input and output transforms work on blocks of TESSERA_WINOGRAD_BLOCK
// tiles with the tile index innermost, so every step of B and A is a linear combination of
// whole rows the compiler vectorizes; the bodies are compiled three times (AVX-512, AVX2 + FMA,
// portable) with per-function target attributes and picked at run time with cpuid.
#include "CTesseraWinograd.h"

#include "CTesseraGEMM.h"
#include "CTesseraSIMD.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Tiles per block of the input and output transforms (one 16-lane vector per row).
#define TESSERA_WINOGRAD_BLOCK 16

// Bᵀ, G and Aᵀ, row-major.
static const float tessera_wino_bt4[36] = {
    4, 0, -5, 0, 1, 0,  //
    0, -4, -4, 1, 1, 0, //
    0, 4, -4, -1, 1, 0, //
    0, -2, -1, 2, 1, 0, //
    0, 2, -1, -2, 1, 0, //
    0, 4, 0, -5, 0, 1,
};
static const float tessera_wino_at4[24] = {
    1, 1, 1, 1, 1, 0,  //
    0, 1, -1, 2, -2, 0, //
    0, 1, 1, 4, 4, 0,  //
    0, 1, -1, 8, -8, 1,
};
static const double tessera_wino_g4[18] = {
    1.0 / 4,   0,         0,         //
    -1.0 / 6,  -1.0 / 6,  -1.0 / 6,  //
    -1.0 / 6,  1.0 / 6,   -1.0 / 6,  //
    1.0 / 24,  1.0 / 12,  1.0 / 6,   //
    1.0 / 24,  -1.0 / 12, 1.0 / 6,   //
    0,         0,         1,
};
static const float tessera_wino_bt2[16] = {
    1, 0, -1, 0, //
    0, 1, 1, 0,  //
    0, -1, 1, 0, //
    0, 1, 0, -1,
};
static const float tessera_wino_at2[8] = {
    1, 1, 1, 0, //
    0, 1, -1, -1,
};
static const double tessera_wino_g2[12] = {
    1, 0, 0,        //
    0.5, 0.5, 0.5,  //
    0.5, -0.5, 0.5, //
    0, 0, 1,
};

long tessera_winograd_filter_count(int m, long o, long c) {
    long a = m + 2;
    return a * a * tessera_sgemm_packed_count(o, c);
}

// ---- bodies (instantiated per target below) ------------------------------------------------

#define TB TESSERA_WINOGRAD_BLOCK

// rows[i][q] = Σ_k mat[i][k] · in[k][q] for i < R, k < K, q < TB, skipping zero coefficients
// (mat is a constant table, so with the loops unrolled the zero terms fold away).
#define TESSERA_WINO_ROWS(R, K, mat, in, out)                                                                          \
    for (int i_ = 0; i_ < (R); i_++) {                                                                                 \
        float acc_[TB] = {0};                                                                                          \
        for (int k_ = 0; k_ < (K); k_++) {                                                                             \
            const float coef_ = (mat)[i_ * (K) + k_];                                                                  \
            if (coef_ == 0) continue;                                                                                  \
            for (int q_ = 0; q_ < TB; q_++) acc_[q_] += coef_ * (in)[k_][q_];                                          \
        }                                                                                                              \
        for (int q_ = 0; q_ < TB; q_++) (out)[i_][q_] = acc_[q_];                                                      \
    }

// One input-transform body for a constant M. d[r·A + s][q] is tile q's patch; t1 = Bᵀ d per
// column s; then V = t1 B per row.
#define TESSERA_WINO_INPUT_BODY(M, BT)                                                                                 \
    {                                                                                                                  \
        enum { A = M + 2 };                                                                                            \
        float d[A * A][TB];                                                                                            \
        float col[A][TB], t1[A * A][TB], rowin[A][TB], res[A][TB];                                                     \
        for (long ch = c0; ch < c1; ch++) {                                                                            \
            const float *plane = x + ch * h * w;                                                                       \
            for (long t0 = 0; t0 < tiles; t0 += TB) {                                                                  \
                long nb = tiles - t0 < TB ? tiles - t0 : TB;                                                           \
                for (long q = 0; q < TB; q++) {                                                                        \
                    if (q >= nb) {                                                                                     \
                        for (int e = 0; e < A * A; e++) d[e][q] = 0;                                                   \
                        continue;                                                                                      \
                    }                                                                                                  \
                    long t = first_tile + t0 + q;                                                                      \
                    long r0 = (t / tiles_w) * M - pad_top, s0 = (t % tiles_w) * M - pad_left;                          \
                    if (r0 >= 0 && s0 >= 0 && r0 + A <= h && s0 + A <= w) {                                           \
                        for (int r = 0; r < A; r++)                                                                    \
                            for (int s = 0; s < A; s++) d[r * A + s][q] = plane[(r0 + r) * w + s0 + s];                \
                    } else {                                                                                           \
                        for (int r = 0; r < A; r++)                                                                    \
                            for (int s = 0; s < A; s++) {                                                              \
                                long rr = r0 + r, ss = s0 + s;                                                         \
                                d[r * A + s][q] = rr >= 0 && rr < h && ss >= 0 && ss < w ? plane[rr * w + ss] : 0;     \
                            }                                                                                          \
                    }                                                                                                  \
                }                                                                                                      \
                for (int s = 0; s < A; s++) {                                                                          \
                    for (int r = 0; r < A; r++) memcpy(col[r], d[r * A + s], sizeof col[r]);                           \
                    float out_[A][TB];                                                                                 \
                    TESSERA_WINO_ROWS(A, A, BT, col, out_)                                                             \
                    for (int r = 0; r < A; r++) memcpy(t1[r * A + s], out_[r], sizeof out_[r]);                        \
                }                                                                                                      \
                for (int r = 0; r < A; r++) {                                                                          \
                    for (int s = 0; s < A; s++) memcpy(rowin[s], t1[r * A + s], sizeof rowin[s]);                      \
                    TESSERA_WINO_ROWS(A, A, BT, rowin, res)                                                            \
                    for (int s = 0; s < A; s++)                                                                        \
                        memcpy(v + ((long)(r * A + s) * channels + ch) * tiles + t0, res[s], (size_t)nb * sizeof(float)); \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }

#define TESSERA_WINO_OUTPUT_BODY(M, AT)                                                                                \
    {                                                                                                                  \
        enum { A = M + 2 };                                                                                            \
        float mm[A * A][TB];                                                                                           \
        float col[A][TB], t1[M * A][TB], rowin[A][TB], y[M * M][TB];                                                   \
        for (long o = o0; o < o1; o++) {                                                                               \
            const float b = bias ? bias[o] : 0.0f;                                                                     \
            float *plane = out + o * oh * ow;                                                                          \
            const float *rplane = residual ? residual + o * oh * ow : 0;                                               \
            for (long t0 = 0; t0 < tiles; t0 += TB) {                                                                  \
                long nb = tiles - t0 < TB ? tiles - t0 : TB;                                                           \
                for (int e = 0; e < A * A; e++) {                                                                      \
                    const float *src = mb + ((long)e * outputs + o) * tiles + t0;                                      \
                    for (long q = 0; q < TB; q++) mm[e][q] = q < nb ? src[q] : 0;                                      \
                }                                                                                                      \
                for (int s = 0; s < A; s++) {                                                                          \
                    for (int r = 0; r < A; r++) memcpy(col[r], mm[r * A + s], sizeof col[r]);                          \
                    float out_[M][TB];                                                                                 \
                    TESSERA_WINO_ROWS(M, A, AT, col, out_)                                                             \
                    for (int r = 0; r < M; r++) memcpy(t1[r * A + s], out_[r], sizeof out_[r]);                        \
                }                                                                                                      \
                for (int r = 0; r < M; r++) {                                                                          \
                    for (int s = 0; s < A; s++) memcpy(rowin[s], t1[r * A + s], sizeof rowin[s]);                      \
                    float res_[M][TB];                                                                                 \
                    TESSERA_WINO_ROWS(M, A, AT, rowin, res_)                                                           \
                    for (int s = 0; s < M; s++) memcpy(y[r * M + s], res_[s], sizeof res_[s]);                         \
                }                                                                                                      \
                for (long q = 0; q < nb; q++) {                                                                        \
                    long t = first_tile + t0 + q;                                                                      \
                    long r0 = (t / tiles_w) * M, s0 = (t % tiles_w) * M;                                               \
                    for (int r = 0; r < M && r0 + r < oh; r++) {                                                       \
                        long base = (r0 + r) * ow + s0;                                                                \
                        for (int s = 0; s < M && s0 + s < ow; s++) {                                                   \
                            float value = y[r * M + s][q] + b;                                                         \
                            if (rplane) value = value + rplane[base + s];                                              \
                            value = lo > value ? lo : value;                                                           \
                            value = hi < value ? hi : value;                                                           \
                            plane[base + s] = value;                                                                   \
                        }                                                                                              \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
    }

// Filter transform straight into the panels of tessera_sgemm_pack: frequency ξ's element (row
// i, depth k) at packed[ξ · stride + (i / 8) · 8 · c + k · 8 + i % 8], rows past o as zeros.
// For each panel and depth, the 8 rows' 3×3 kernels are gathered (plain loads; rows past o read
// row p and are zeroed after, so the loop has no branch) and transformed together in double (the
// row index in the vector lanes). A block of TESSERA_WINOGRAD_FILTER_DEPTHS depths is transformed
// into a local buffer and each frequency's part written out in one contiguous run, with
// non-temporal stores when the destination is 32-byte aligned (the filter, (m + 2)² / 9 times
// the weight's size, is read only by later predictions, so the stores need not read the lines
// first). Against 8 values at a time into (m + 2)² places `stride` apart and the gather's
// per-lane branches, 2.2 times faster at 64-512 channels (clang -O2, Zen 4).
#define TESSERA_WINOGRAD_FILTER_DEPTHS 16
// Non-temporal stores are weakly ordered: fence them before the filter is handed to other
// threads.
#if defined(__x86_64__) || defined(__i386__)
#define TESSERA_WINO_STORE_FENCE() __builtin_ia32_sfence()
#else
#define TESSERA_WINO_STORE_FENCE() ((void)0)
#endif
typedef float tessera_wino_v8f __attribute__((vector_size(32)));
typedef double tessera_wino_v8d __attribute__((vector_size(64)));
#define TESSERA_WINO_FILTER_BODY(M, G)                                                                                 \
    {                                                                                                                  \
        enum { A = M + 2, R = TESSERA_GEMM_PANEL_ROWS, KB = TESSERA_WINOGRAD_FILTER_DEPTHS };                         \
        _Static_assert(R == 8, "one 8-lane vector per panel");                                                         \
        const long stride = tessera_sgemm_packed_count(o, c);                                                          \
        tessera_wino_v8f block[A * A][KB];                                                                             \
        for (long p = 0; p < o; p += R) {                                                                              \
            long rows = o - p < R ? o - p : R;                                                                         \
            const float *src[R];                                                                                       \
            for (long r = 0; r < R; r++) src[r] = w + (p + (r < rows ? r : 0)) * c * 9;                                \
            for (long k0 = 0; k0 < c; k0 += KB) {                                                                      \
                long depths = c - k0 < KB ? c - k0 : KB;                                                               \
                for (long kk = 0; kk < depths; kk++) {                                                                 \
                    const long k = k0 + kk;                                                                            \
                    float g[9][R];                                                                                     \
                    for (long r = 0; r < R; r++)                                                                       \
                        for (int q = 0; q < 9; q++) g[q][r] = src[r][k * 9 + q];                                       \
                    if (rows < R)                                                                                      \
                        for (int q = 0; q < 9; q++)                                                                    \
                            for (long r = rows; r < R; r++) g[q][r] = 0;                                               \
                    tessera_wino_v8d f[9], t[A][3];                                                                    \
                    for (int q = 0; q < 9; q++) {                                                                      \
                        tessera_wino_v8f lanes;                                                                        \
                        memcpy(&lanes, g[q], sizeof lanes);                                                            \
                        f[q] = __builtin_convertvector(lanes, tessera_wino_v8d);                                       \
                    }                                                                                                  \
                    for (int i = 0; i < A; i++)                                                                        \
                        for (int j = 0; j < 3; j++)                                                                    \
                            t[i][j] = (G)[i * 3] * f[j] + (G)[i * 3 + 1] * f[3 + j] + (G)[i * 3 + 2] * f[6 + j];       \
                    for (int i = 0; i < A; i++)                                                                        \
                        for (int j = 0; j < A; j++)                                                                    \
                            block[i * A + j][kk] = __builtin_convertvector(                                            \
                                t[i][0] * (G)[j * 3] + t[i][1] * (G)[j * 3 + 1] + t[i][2] * (G)[j * 3 + 2],            \
                                tessera_wino_v8f);                                                                     \
                }                                                                                                      \
                for (int e = 0; e < A * A; e++) {                                                                      \
                    float *to = packed + e * stride + p * c + k0 * R;                                                  \
                    if (((uintptr_t)to & (sizeof(tessera_wino_v8f) - 1)) == 0) {                                       \
                        for (long kk = 0; kk < depths; kk++)                                                           \
                            __builtin_nontemporal_store(block[e][kk], (tessera_wino_v8f *)to + kk);                    \
                    } else {                                                                                           \
                        memcpy(to, block[e], (size_t)(depths * R) * sizeof(float));                                    \
                    }                                                                                                  \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        TESSERA_WINO_STORE_FENCE();                                                                                    \
    }

#define TESSERA_WINO_DEFINE(SUFFIX, ATTR)                                                                              \
    ATTR static void tessera_wino_filter_##SUFFIX(int m, const float *w, long o, long c, float *packed) {              \
        if (m == 4)                                                                                                    \
            TESSERA_WINO_FILTER_BODY(4, tessera_wino_g4)                                                               \
        else                                                                                                           \
            TESSERA_WINO_FILTER_BODY(2, tessera_wino_g2)                                                               \
    }                                                                                                                  \
    ATTR static void tessera_wino_input_##SUFFIX(int m, const float *x, long channels, long h, long w, long pad_top,   \
                                                 long pad_left, long tiles_w, long first_tile, long tiles, long c0,    \
                                                 long c1, float *v) {                                                  \
        if (m == 4)                                                                                                    \
            TESSERA_WINO_INPUT_BODY(4, tessera_wino_bt4)                                                               \
        else                                                                                                           \
            TESSERA_WINO_INPUT_BODY(2, tessera_wino_bt2)                                                               \
    }                                                                                                                  \
    ATTR static void tessera_wino_output_##SUFFIX(int m, const float *mb, long outputs, long o0, long o1,              \
                                                  long tiles_w, long first_tile, long tiles, long oh, long ow,         \
                                                  float *out, const float *bias, const float *residual, float lo,      \
                                                  float hi) {                                                          \
        if (m == 4)                                                                                                    \
            TESSERA_WINO_OUTPUT_BODY(4, tessera_wino_at4)                                                              \
        else                                                                                                           \
            TESSERA_WINO_OUTPUT_BODY(2, tessera_wino_at2)                                                              \
    }

TESSERA_WINO_DEFINE(portable, )

#if defined(__x86_64__)
TESSERA_WINO_DEFINE(avx2, __attribute__((target("avx2,fma"))))
TESSERA_WINO_DEFINE(avx512, __attribute__((target("avx512f,avx2,fma"), min_vector_width(512))))
#endif

int tessera_winograd_variant(void) {
#if defined(__x86_64__)
    // Threads may race to fill the cache, all with the same value: relaxed atomics.
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        if (!tessera_cpu_has_avx2_fma()) {
            value = 0;
        } else {
            value = __builtin_cpu_supports("avx512f") && !getenv("TESSERA_NO_AVX512") ? 2 : 1;
        }
        __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
    }
    return value;
#else
    return 0;
#endif
}

static int tessera_wino_lowered(int variant) {
    int best = tessera_winograd_variant();
    return variant < best ? variant : best;
}

void tessera_winograd_transform_filter(int m, const float *w, long o, long c, float *packed) {
    tessera_winograd_transform_filter_variant(2, m, w, o, c, packed);
}

void tessera_winograd_transform_filter_variant(int variant, int m, const float *w, long o, long c, float *packed) {
    switch (tessera_wino_lowered(variant)) {
#if defined(__x86_64__)
    case 2: tessera_wino_filter_avx512(m, w, o, c, packed); break;
    case 1: tessera_wino_filter_avx2(m, w, o, c, packed); break;
#endif
    default: tessera_wino_filter_portable(m, w, o, c, packed);
    }
}

void tessera_winograd_transform_input_variant(int variant, int m, const float *x, long channels, long h, long w,
                                              long pad_top, long pad_left, long tiles_w, long first_tile, long tiles,
                                              long c0, long c1, float *v) {
    switch (tessera_wino_lowered(variant)) {
#if defined(__x86_64__)
    case 2: tessera_wino_input_avx512(m, x, channels, h, w, pad_top, pad_left, tiles_w, first_tile, tiles, c0, c1, v); break;
    case 1: tessera_wino_input_avx2(m, x, channels, h, w, pad_top, pad_left, tiles_w, first_tile, tiles, c0, c1, v); break;
#endif
    default:
        tessera_wino_input_portable(m, x, channels, h, w, pad_top, pad_left, tiles_w, first_tile, tiles, c0, c1, v);
    }
}

void tessera_winograd_transform_output_variant(int variant, int m, const float *mb, long outputs, long o0, long o1,
                                               long tiles_w, long first_tile, long tiles, long oh, long ow, float *out,
                                               const float *bias, const float *residual, float lo, float hi) {
    switch (tessera_wino_lowered(variant)) {
#if defined(__x86_64__)
    case 2:
        tessera_wino_output_avx512(m, mb, outputs, o0, o1, tiles_w, first_tile, tiles, oh, ow, out, bias, residual, lo, hi);
        break;
    case 1:
        tessera_wino_output_avx2(m, mb, outputs, o0, o1, tiles_w, first_tile, tiles, oh, ow, out, bias, residual, lo, hi);
        break;
#endif
    default:
        tessera_wino_output_portable(m, mb, outputs, o0, o1, tiles_w, first_tile, tiles, oh, ow, out, bias, residual, lo,
                                     hi);
    }
}

void tessera_winograd_transform_input(int m, const float *x, long channels, long h, long w, long pad_top,
                                      long pad_left, long tiles_w, long first_tile, long tiles, long c0, long c1,
                                      float *v) {
    tessera_winograd_transform_input_variant(2, m, x, channels, h, w, pad_top, pad_left, tiles_w, first_tile, tiles, c0,
                                             c1, v);
}

void tessera_winograd_transform_output(int m, const float *mb, long outputs, long o0, long o1, long tiles_w,
                                       long first_tile, long tiles, long oh, long ow, float *out, const float *bias,
                                       const float *residual, float lo, float hi) {
    tessera_winograd_transform_output_variant(2, m, mb, outputs, o0, o1, tiles_w, first_tile, tiles, oh, ow, out, bias,
                                              residual, lo, hi);
}
