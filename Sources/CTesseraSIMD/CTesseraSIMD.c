// Runtime-dispatched vector kernels: compiled for AVX2 + FMA with per-function target
// attributes (no package-wide compiler flags), called only when the CPU has them.
#include "CTesseraSIMD.h"

#include <stdlib.h>

// The error function in float32, one algorithm at every width. |x| is clamped to 4 (erf(4) is
// 1 - 1.5e-8, which rounds to 1) and cut into eight intervals of width 1/2; on interval i,
// erf(i/2 + t) for t in [0, 1/2) is a degree-7 polynomial in t, a minimax fit (Lawson-weighted
// least squares) made by tools/fit_erf_coefficients.py: of erf itself for i >= 1, of erf(t)/t for
// i = 0, whose polynomial then has no constant term so tiny x keeps full relative precision.
// Against the C library's double erf, every float in [0, 4] (checked exhaustively) is within
// 8.9e-8 (the worst, 8.8e-8 near 0.486, is 1.5 units in the last place); beyond 4 the result is
// 1, within 1.6e-8. At most 1, odd (erf(-x) = -erf(x), -0 stays -0), ±1 at ±inf, NaN for NaN.
// No division, no exp: eight permutes and eight FMAs per vector.
#define TESSERA_ERF_DEGREE 7
#define TESSERA_ERF_INTERVALS 8
#define TESSERA_ERF_CLAMP 4.0f
// Row k holds the coefficient of t^k for the eight intervals.
static const float tessera_erf_coefficients[TESSERA_ERF_DEGREE + 1][TESSERA_ERF_INTERVALS]
    __attribute__((aligned(32))) = {
    {0.000000000e+00f, 5.204998851e-01f, 8.427007794e-01f, 9.661051631e-01f, 9.953222871e-01f, 9.995930195e-01f, 9.999778867e-01f, 9.999992847e-01f},
    {1.128379226e+00f, 8.787826300e-01f, 4.151073396e-01f, 1.189303100e-01f, 2.066701651e-02f, 2.178282011e-03f, 1.392504928e-04f, 5.399060683e-06f},
    {-1.580989419e-06f, -4.393949509e-01f, -4.151002467e-01f, -1.783961207e-01f, -4.133530706e-02f, -5.445621908e-03f, -4.176498041e-04f, -1.888204315e-05f},
    {-3.760773838e-01f, -1.463994235e-01f, 1.382524371e-01f, 1.387613714e-01f, 4.824488238e-02f, 8.348817006e-03f, 7.873116410e-04f, 4.202938362e-05f},
    {-5.649166415e-04f, 1.825171262e-01f, 7.010836899e-02f, -4.465583712e-02f, -3.462232649e-02f, -8.613913320e-03f, -1.029951149e-03f, -6.551307160e-05f},
    {1.158784106e-01f, 1.006408688e-02f, -7.315263152e-02f, -1.472638361e-02f, 1.387573965e-02f, 6.091188639e-03f, 9.525870555e-04f, 7.198843377e-05f},
    {-8.006053045e-03f, -5.778222904e-02f, 1.402161736e-02f, 1.940875873e-02f, -1.507158624e-03f, -2.778546419e-03f, -5.782450899e-04f, -5.086652163e-05f},
    {-1.797696576e-02f, 1.782741956e-02f, 3.757908940e-03f, -5.919792224e-03f, -7.271096110e-04f, 6.346997689e-04f, 1.739931904e-04f, 1.724244976e-05f},
};

// One value, the operations of the vector versions: min(4, |x|) (NaN passes through), the
// interval index min(2z, 7) truncated, t = z - index/2 (exact), Horner by FMA, copysign.
static inline float tessera_erf_f32_scalar(float x) {
    float z = __builtin_fabsf(x);
    z = TESSERA_ERF_CLAMP < z ? TESSERA_ERF_CLAMP : z;
    float scaled = z * 2.0f;
    long index = scaled < (float)(TESSERA_ERF_INTERVALS - 1) ? (long)scaled : TESSERA_ERF_INTERVALS - 1;
    float t = __builtin_fmaf((float)index, -0.5f, z);
    float p = tessera_erf_coefficients[TESSERA_ERF_DEGREE][index];
    for (int k = TESSERA_ERF_DEGREE - 1; k >= 0; k--) p = __builtin_fmaf(p, t, tessera_erf_coefficients[k][index]);
    return __builtin_copysignf(p, x);
}

#if defined(__x86_64__)
#include <immintrin.h>

#include "CTesseraExp.h"

int tessera_cpu_has_avx2_fma(void) {
    // Threads may race to fill the cache, all with the same value: relaxed atomics.
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
    }
    return value;
}

/// Whether the CPU has AVX-512F as well (the 16-lane versions of the plain loops), unless
/// the environment variable TESSERA_NO_AVX512 is set (for comparing the two widths).
static int tessera_cpu_has_avx512f(void) {
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

__attribute__((target("avx2,fma"))) float tessera_exp_shifted_f32_avx2(const float *src, float *dst, long n,
                                                                      float shift) {
    const __m256 s = _mm256_set1_ps(shift);
    __m256 sum0 = _mm256_setzero_ps();
    __m256 sum1 = _mm256_setzero_ps();
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 e0 = tessera_exp8(_mm256_sub_ps(_mm256_loadu_ps(src + i), s));
        __m256 e1 = tessera_exp8(_mm256_sub_ps(_mm256_loadu_ps(src + i + 8), s));
        if (dst) {
            _mm256_storeu_ps(dst + i, e0);
            _mm256_storeu_ps(dst + i + 8, e1);
        }
        sum0 = _mm256_add_ps(sum0, e0);
        sum1 = _mm256_add_ps(sum1, e1);
    }
    for (; i < n; i += 8) {
        float lanes[8];
        long count = n - i < 8 ? n - i : 8;
        for (long j = 0; j < 8; j++) lanes[j] = j < count ? src[i + j] - shift : -__builtin_inff();
        __m256 e = tessera_exp8(_mm256_loadu_ps(lanes));
        _mm256_storeu_ps(lanes, e);
        if (dst) for (long j = 0; j < count; j++) dst[i + j] = lanes[j];
        sum0 = _mm256_add_ps(sum0, e);
    }
    float parts[8];
    _mm256_storeu_ps(parts, _mm256_add_ps(sum0, sum1));
    return ((parts[0] + parts[1]) + (parts[2] + parts[3])) + ((parts[4] + parts[5]) + (parts[6] + parts[7]));
}

// tessera_exp_shifted_f32_avx2 with the 16-element body in one AVX-512 register: lanes 0-7
// accumulate exactly as its sum0 and lanes 8-15 as its sum1, the tail and the final sum are
// the same code, so the results and the sum are bit-identical.
__attribute__((target("avx512f,avx2,fma"))) static float tessera_exp_shifted_f32_avx512(const float *src, float *dst,
                                                                                       long n, float shift) {
    const __m512 s = _mm512_set1_ps(shift);
    __m512 sum = _mm512_setzero_ps();
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 e = tessera_exp16(_mm512_sub_ps(_mm512_loadu_ps(src + i), s));
        if (dst) _mm512_storeu_ps(dst + i, e);
        sum = _mm512_add_ps(sum, e);
    }
    __m256 sum0 = _mm512_castps512_ps256(sum);
    __m256 sum1 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sum), 1));
    for (; i < n; i += 8) {
        float lanes[8];
        long count = n - i < 8 ? n - i : 8;
        for (long j = 0; j < 8; j++) lanes[j] = j < count ? src[i + j] - shift : -__builtin_inff();
        __m256 e = tessera_exp8(_mm256_loadu_ps(lanes));
        _mm256_storeu_ps(lanes, e);
        if (dst) for (long j = 0; j < count; j++) dst[i + j] = lanes[j];
        sum0 = _mm256_add_ps(sum0, e);
    }
    float parts[8];
    _mm256_storeu_ps(parts, _mm256_add_ps(sum0, sum1));
    return ((parts[0] + parts[1]) + (parts[2] + parts[3])) + ((parts[4] + parts[5]) + (parts[6] + parts[7]));
}

#define TESSERA_BINARY_LOOP(EXPR)                                                               \
    do {                                                                                        \
        if (a && b) {                                                                           \
            for (long i = 0; i < n; i++) { float x = a[i], y = b[i]; dst[i] = (EXPR); }          \
        } else if (a) {                                                                         \
            float y = bs;                                                                       \
            for (long i = 0; i < n; i++) { float x = a[i]; dst[i] = (EXPR); }                    \
        } else {                                                                                \
            float x = as;                                                                       \
            for (long i = 0; i < n; i++) { float y = b[i]; dst[i] = (EXPR); }                    \
        }                                                                                       \
    } while (0)

// Plain loops: clang vectorises them with 256-bit (or, in the AVX-512 copies, 512-bit)
// instructions under the target attributes (no FMA contraction: each result is one IEEE
// operation, as in the Swift bodies, so both widths give identical results).
#define TESSERA_BINARY_BODY                                                                     \
    switch (op) {                                                                               \
    case 0: TESSERA_BINARY_LOOP(x + y); break;                                                  \
    case 1: TESSERA_BINARY_LOOP(x - y); break;                                                  \
    case 2: TESSERA_BINARY_LOOP(x * y); break;                                                  \
    case 3: TESSERA_BINARY_LOOP(x / y); break;                                                  \
    case 4: TESSERA_BINARY_LOOP(TESSERA_NAN_MIN(x, y)); break;                                  \
    case 5: TESSERA_BINARY_LOOP(TESSERA_NAN_MAX(x, y)); break;                                  \
    case 6: TESSERA_BINARY_LOOP(x == y ? 1.0f : 0.0f); break;                                   \
    case 7: TESSERA_BINARY_LOOP(x != y ? 1.0f : 0.0f); break;                                   \
    case 8: TESSERA_BINARY_LOOP(x < y ? 1.0f : 0.0f); break;                                    \
    case 9: TESSERA_BINARY_LOOP(x <= y ? 1.0f : 0.0f); break;                                   \
    case 10: TESSERA_BINARY_LOOP(x > y ? 1.0f : 0.0f); break;                                   \
    default: TESSERA_BINARY_LOOP(x >= y ? 1.0f : 0.0f); break;                                  \
    }

// NaN-propagating minimum and maximum, as the Swift bodies select: the smaller (larger) value,
// else x; x when x is NaN; y when y is NaN (so y's NaN when both are).
#define TESSERA_NAN_MIN(x, y) ((y) != (y) ? (y) : ((x) != (x) ? (x) : ((y) < (x) ? (y) : (x))))
#define TESSERA_NAN_MAX(x, y) ((y) != (y) ? (y) : ((x) != (x) ? (x) : ((y) > (x) ? (y) : (x))))

__attribute__((target("avx2,fma"))) static void tessera_binary_f32_avx2(int op, const float *a, float as,
                                                                          const float *b, float bs, float *dst,
                                                                          long n) {
#pragma clang fp contract(off)
    TESSERA_BINARY_BODY
}

__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static void tessera_binary_f32_avx512(
    int op, const float *a, float as, const float *b, float bs, float *dst, long n) {
#pragma clang fp contract(off)
    TESSERA_BINARY_BODY
}

// One of + - * / (codes 0-3) of x and y: each an IEEE single-precision operation, so a lane
// gives what the scalar operation gives.
#define TESSERA_ARITHMETIC(CODE, X, Y) \
    ((CODE) == 0 ? (X) + (Y) : (CODE) == 1 ? (X) - (Y) : (CODE) == 2 ? (X) * (Y) : (X) / (Y))

// t = left1 ? x op1 s1 : s1 op1 x, then left2 ? t op2 s2 : s2 op2 t, per element.
#define TESSERA_BINARY_PAIR_BODY(VEC, LOAD, STORE, LANES)                                       \
    VEC v1 = s1, v2 = s2;                                                                       \
    long i = 0;                                                                                 \
    for (; i + LANES <= n; i += LANES) {                                                        \
        VEC x = LOAD(p + i);                                                                    \
        VEC t = left1 ? TESSERA_ARITHMETIC(op1, x, v1) : TESSERA_ARITHMETIC(op1, v1, x);        \
        STORE(dst + i, left2 ? TESSERA_ARITHMETIC(op2, t, v2) : TESSERA_ARITHMETIC(op2, v2, t)); \
    }                                                                                           \
    for (; i < n; i++) {                                                                        \
        float x = p[i];                                                                         \
        float t = left1 ? TESSERA_ARITHMETIC(op1, x, s1) : TESSERA_ARITHMETIC(op1, s1, x);      \
        dst[i] = left2 ? TESSERA_ARITHMETIC(op2, t, s2) : TESSERA_ARITHMETIC(op2, s2, t);       \
    }

typedef float tessera_float8v_unaligned __attribute__((ext_vector_type(8), aligned(4)));
typedef float tessera_float8v __attribute__((ext_vector_type(8)));
#define tessera_pair_load8(address) (*(const tessera_float8v_unaligned *)(address))
#define tessera_pair_store8(address, value) (*(tessera_float8v_unaligned *)(address) = (value))
typedef float tessera_pair_float16v_unaligned __attribute__((ext_vector_type(16), aligned(4)));
#define tessera_pair_load16(address) (*(const tessera_pair_float16v_unaligned *)(address))
#define tessera_pair_store16(address, value) (*(tessera_pair_float16v_unaligned *)(address) = (value))

__attribute__((target("avx2,fma"))) static void tessera_binary_pair_f32_avx2(int op1, int left1, float s1, int op2,
                                                                               int left2, float s2, const float *p,
                                                                               float *dst, long n) {
#pragma clang fp contract(off)
    TESSERA_BINARY_PAIR_BODY(tessera_float8v, tessera_pair_load8, tessera_pair_store8, 8)
}

__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static void tessera_binary_pair_f32_avx512(
    int op1, int left1, float s1, int op2, int left2, float s2, const float *p, float *dst, long n) {
#pragma clang fp contract(off)
    TESSERA_BINARY_PAIR_BODY(tessera_float16v, tessera_pair_load16, tessera_pair_store16, 16)
}

void tessera_binary_pair_f32_vector(int op1, int left1, float s1, int op2, int left2, float s2, const float *p,
                                    float *dst, long n) {
    if (tessera_cpu_has_avx512f() && n >= 64) {
        tessera_binary_pair_f32_avx512(op1, left1, s1, op2, left2, s2, p, dst, n);
    } else {
        tessera_binary_pair_f32_avx2(op1, left1, s1, op2, left2, s2, p, dst, n);
    }
}

void tessera_binary_f32_vector(int op, const float *a, float as, const float *b, float bs, float *dst, long n) {
    if (tessera_cpu_has_avx512f() && n >= 64) {
        tessera_binary_f32_avx512(op, a, as, b, bs, dst, n);
    } else {
        tessera_binary_f32_avx2(op, a, as, b, bs, dst, n);
    }
}

__attribute__((target("avx2,fma"))) static void tessera_sqrt_f32_avx2(const float *src, float *dst, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_sqrt_ps(_mm256_loadu_ps(src + i)));
    for (; i < n; i++) dst[i] = __builtin_sqrtf(src[i]);
}

__attribute__((target("avx512f,avx2,fma"))) static void tessera_sqrt_f32_avx512(const float *src, float *dst,
                                                                               long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_sqrt_ps(_mm512_loadu_ps(src + i)));
    for (; i < n; i++) dst[i] = __builtin_sqrtf(src[i]);
}

void tessera_sqrt_f32_vector(const float *src, float *dst, long n) {
    if (tessera_cpu_has_avx512f() && n >= 64) {
        tessera_sqrt_f32_avx512(src, dst, n);
    } else {
        tessera_sqrt_f32_avx2(src, dst, n);
    }
}
// The sum of a contiguous run with four 16-lane accumulators, written with clang's vector
// types so the AVX2 and AVX-512 copies do the same additions in the same order as the Swift
// `FloatReduction.sum` (element i + 16j + 64k goes to accumulator j, lane i; the accumulators
// are combined as (a0 + a1) + (a2 + a3), then halved down to one lane; the scalar tail is
// added last). Every width therefore gives bit-identical results.
#define TESSERA_SUM_BODY_OF(TERM16, TERM1)                                                      \
    tessera_float16v a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                            \
    long i = 0;                                                                                 \
    for (; i + 64 <= n; i += 64) {                                                              \
        a0 += TERM16(p + i);                                                                    \
        a1 += TERM16(p + i + 16);                                                               \
        a2 += TERM16(p + i + 32);                                                               \
        a3 += TERM16(p + i + 48);                                                               \
    }                                                                                           \
    for (; i + 16 <= n; i += 16) a0 += TERM16(p + i);                                           \
    float tail = 0;                                                                             \
    for (; i < n; i++) tail += TERM1(p[i]);                                                     \
    tessera_float16v v = (a0 + a1) + (a2 + a3);                                                 \
    typedef float f8 __attribute__((ext_vector_type(8)));                                       \
    typedef float f4 __attribute__((ext_vector_type(4)));                                       \
    typedef float f2 __attribute__((ext_vector_type(2)));                                       \
    f8 v8 = v.lo + v.hi;                                                                        \
    f4 v4 = v8.lo + v8.hi;                                                                      \
    f2 v2 = v4.lo + v4.hi;                                                                      \
    return (v2.x + v2.y) + tail;
#define TESSERA_SUM_BODY TESSERA_SUM_BODY_OF(tessera_load16, )
// The summed term of the centred sums of squares: d = x - center, then d * d (two rounded
// operations, no fused multiply-add), as a fused program computing `(x - m) * (x - m)` does.
#define TESSERA_CENTERED_SQUARE16(address) tessera_square16(tessera_load16(address) - center)
#define TESSERA_CENTERED_SQUARE1(x) (((x) - center) * ((x) - center))

/// Sixteen floats at any 4-byte-aligned address.
typedef float tessera_float16v_unaligned __attribute__((ext_vector_type(16), aligned(4)));
#define tessera_load16(address) (*(const tessera_float16v_unaligned *)(address))
#define tessera_square16(d) ({ tessera_float16v d_ = (d); d_ * d_; })

__attribute__((target("avx2,fma"))) static float tessera_sum_f32_avx2(const float *p, long n) {
#pragma clang fp contract(off)
    TESSERA_SUM_BODY
}

__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static float tessera_sum_f32_avx512(
    const float *p, long n) {
#pragma clang fp contract(off)
    TESSERA_SUM_BODY
}

float tessera_sum_f32_vector(const float *p, long n) {
    return tessera_cpu_has_avx512f() ? tessera_sum_f32_avx512(p, n) : tessera_sum_f32_avx2(p, n);
}

__attribute__((target("avx2,fma"))) static float tessera_centered_square_sum_f32_avx2(const float *p, long n,
                                                                                       float center) {
#pragma clang fp contract(off)
    TESSERA_SUM_BODY_OF(TESSERA_CENTERED_SQUARE16, TESSERA_CENTERED_SQUARE1)
}

__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static float
tessera_centered_square_sum_f32_avx512(const float *p, long n, float center) {
#pragma clang fp contract(off)
    TESSERA_SUM_BODY_OF(TESSERA_CENTERED_SQUARE16, TESSERA_CENTERED_SQUARE1)
}

float tessera_centered_square_sum_f32_vector(const float *p, long n, float center) {
    return tessera_cpu_has_avx512f() ? tessera_centered_square_sum_f32_avx512(p, n, center)
                                     : tessera_centered_square_sum_f32_avx2(p, n, center);
}

float tessera_exp_shifted_f32_vector(const float *src, float *dst, long n, float shift) {
    return tessera_cpu_has_avx512f() ? tessera_exp_shifted_f32_avx512(src, dst, n, shift)
                                     : tessera_exp_shifted_f32_avx2(src, dst, n, shift);
}
// The error function of eight (sixteen) lanes, the operations of tessera_erf_f32_scalar in the
// same order (so every width gives the same bits): the interval of |x| picked by a permute of the
// coefficient rows, Horner's rule by FMA, the sign of x put back. NaN stays NaN (min keeps its
// second operand when either is NaN; the index of a NaN is INT_MIN, whose low bits pick row 0).
__attribute__((target("avx2,fma"))) static inline __m256 tessera_erf8(__m256 x) {
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    __m256 z = _mm256_min_ps(_mm256_set1_ps(TESSERA_ERF_CLAMP), _mm256_andnot_ps(signbit, x));
    __m256 scaled = _mm256_min_ps(_mm256_set1_ps(TESSERA_ERF_INTERVALS - 1), _mm256_mul_ps(z, _mm256_set1_ps(2.0f)));
    __m256i index = _mm256_cvttps_epi32(scaled);
    __m256 t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(index), _mm256_set1_ps(-0.5f), z);
    __m256 p = _mm256_permutevar8x32_ps(_mm256_load_ps(tessera_erf_coefficients[TESSERA_ERF_DEGREE]), index);
    for (int k = TESSERA_ERF_DEGREE - 1; k >= 0; k--)
        p = _mm256_fmadd_ps(p, t, _mm256_permutevar8x32_ps(_mm256_load_ps(tessera_erf_coefficients[k]), index));
    return _mm256_or_ps(_mm256_andnot_ps(signbit, p), _mm256_and_ps(signbit, x));
}

__attribute__((target("avx512f,avx2,fma"))) static inline __m512 tessera_erf16(__m512 x) {
    const __m512i signbit = _mm512_set1_epi32((int)0x80000000u);
    __m512 z = _mm512_min_ps(_mm512_set1_ps(TESSERA_ERF_CLAMP), _mm512_abs_ps(x));
    __m512 scaled = _mm512_min_ps(_mm512_set1_ps(TESSERA_ERF_INTERVALS - 1), _mm512_mul_ps(z, _mm512_set1_ps(2.0f)));
    __m512i index = _mm512_cvttps_epi32(scaled);
    __m512 t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(index), _mm512_set1_ps(-0.5f), z);
    // Rows of eight: permutexvar reads four index bits, and every index is below eight.
#define TESSERA_ERF_ROW(k) _mm512_permutexvar_ps(index, _mm512_castps256_ps512(_mm256_load_ps(tessera_erf_coefficients[k])))
    __m512 p = TESSERA_ERF_ROW(TESSERA_ERF_DEGREE);
    for (int k = TESSERA_ERF_DEGREE - 1; k >= 0; k--) p = _mm512_fmadd_ps(p, t, TESSERA_ERF_ROW(k));
#undef TESSERA_ERF_ROW
    // Bitwise select (imm 0xD8): the sign bit from x, the other bits from p.
    __m512i bits = _mm512_ternarylogic_epi32(_mm512_castps_si512(p), _mm512_castps_si512(x), signbit, 0xD8);
    return _mm512_castsi512_ps(bits);
}

__attribute__((target("avx2,fma"))) static void tessera_erf_f32_avx2(const float *src, float *dst, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, tessera_erf8(_mm256_loadu_ps(src + i)));
    if (i < n) {
        float lanes[8] = {0};
        for (long j = 0; j < n - i; j++) lanes[j] = src[i + j];
        _mm256_storeu_ps(lanes, tessera_erf8(_mm256_loadu_ps(lanes)));
        for (long j = 0; j < n - i; j++) dst[i + j] = lanes[j];
    }
}

__attribute__((target("avx512f,avx2,fma"))) static void tessera_erf_f32_avx512(const float *src, float *dst, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, tessera_erf16(_mm512_loadu_ps(src + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(dst + i, m, tessera_erf16(_mm512_maskz_loadu_ps(m, src + i)));
    }
}

void tessera_erf_f32_vector(const float *src, float *dst, long n) {
    tessera_erf_f32_lanes(src, dst, n, tessera_cpu_has_avx512f() ? 16 : tessera_cpu_has_avx2_fma() ? 8 : 1);
}

int tessera_erf_f32_lanes(const float *src, float *dst, long n, int lanes) {
    if (lanes == 16 && tessera_cpu_has_avx512f()) {
        tessera_erf_f32_avx512(src, dst, n);
        return 16;
    }
    if (lanes >= 8 && tessera_cpu_has_avx2_fma()) {
        tessera_erf_f32_avx2(src, dst, n);
        return 8;
    }
    for (long i = 0; i < n; i++) dst[i] = tessera_erf_f32_scalar(src[i]);
    return 1;
}

// tanh of eight (sixteen) lanes: x + x³·P(x²) (Taylor to x¹³, truncation below 4e-9 relative)
// for |x| < 0.4, else sign(x)·(1 − 2 / (e^{2|x|} + 1)) with |x| clamped to 10 (tanh is 1 in
// float32 beyond 9.01), the sign of x put on either branch (so −0 stays −0); NaN stays NaN.
#define TESSERA_TANH_COEFFICIENTS                                                                      \
    TESSERA_STEP(21844.0f / 6081075.0f, -1382.0f / 155925.0f)                                          \
    TESSERA_STEP_ADD(62.0f / 2835.0f)                                                                  \
    TESSERA_STEP_ADD(-17.0f / 315.0f)                                                                  \
    TESSERA_STEP_ADD(2.0f / 15.0f)                                                                     \
    TESSERA_STEP_ADD(-1.0f / 3.0f)

__attribute__((target("avx2,fma"))) static inline __m256 tessera_tanh8(__m256 x) {
    const __m256 signbit = _mm256_set1_ps(-0.0f);
    __m256 z = _mm256_andnot_ps(signbit, x);
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p;
#define TESSERA_STEP(a, b) p = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(a), x2), _mm256_set1_ps(b));
#define TESSERA_STEP_ADD(c) p = _mm256_add_ps(_mm256_mul_ps(p, x2), _mm256_set1_ps(c));
    TESSERA_TANH_COEFFICIENTS
#undef TESSERA_STEP
#undef TESSERA_STEP_ADD
    __m256 small = _mm256_add_ps(x, _mm256_mul_ps(_mm256_mul_ps(x, x2), p));
    __m256 clamped = _mm256_min_ps(z, _mm256_set1_ps(10.0f));
    __m256 e = tessera_exp8(_mm256_add_ps(clamped, clamped));
    __m256 large = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
    __m256 result = _mm256_blendv_ps(large, small, _mm256_cmp_ps(z, _mm256_set1_ps(0.4f), _CMP_LT_OQ));
    result = _mm256_or_ps(_mm256_andnot_ps(signbit, result), _mm256_and_ps(x, signbit));
    return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

__attribute__((target("avx512f,avx2,fma"))) static inline __m512 tessera_tanh16(__m512 x) {
    __m512 z = _mm512_abs_ps(x);
    __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p;
#define TESSERA_STEP(a, b) p = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(a), x2), _mm512_set1_ps(b));
#define TESSERA_STEP_ADD(c) p = _mm512_add_ps(_mm512_mul_ps(p, x2), _mm512_set1_ps(c));
    TESSERA_TANH_COEFFICIENTS
#undef TESSERA_STEP
#undef TESSERA_STEP_ADD
    __m512 small = _mm512_add_ps(x, _mm512_mul_ps(_mm512_mul_ps(x, x2), p));
    __m512 clamped = _mm512_min_ps(z, _mm512_set1_ps(10.0f));
    __m512 e = tessera_exp16(_mm512_add_ps(clamped, clamped));
    __m512 large = _mm512_sub_ps(_mm512_set1_ps(1.0f), _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f))));
    __m512 result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(z, _mm512_set1_ps(0.4f), _CMP_LT_OQ), large, small);
    const __m512i signbit = _mm512_set1_epi32((int)0x80000000u);
    result = _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(signbit, _mm512_castps_si512(result)),
                                                 _mm512_and_si512(_mm512_castps_si512(x), signbit)));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), result, x);
}
#undef TESSERA_TANH_COEFFICIENTS

// The logistic function 1 / (1 + e^{−x}) with the vector exp.
__attribute__((target("avx2,fma"))) static inline __m256 tessera_sigmoid8(__m256 x) {
    __m256 e = tessera_exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
    return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

__attribute__((target("avx512f,avx2,fma"))) static inline __m512 tessera_sigmoid16(__m512 x) {
    __m512 e = tessera_exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// Each lane-wise function over a block: whole vectors, then the tail through a zero-padded
// vector (AVX2) or a masked load and store (AVX-512).
#define TESSERA_UNARY_MAP8(F)                                                                          \
    do {                                                                                               \
        long i = 0;                                                                                    \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, F(_mm256_loadu_ps(src + i)));             \
        if (i < n) {                                                                                   \
            float lanes[8] = {0};                                                                      \
            for (long j = 0; j < n - i; j++) lanes[j] = src[i + j];                                    \
            _mm256_storeu_ps(lanes, F(_mm256_loadu_ps(lanes)));                                        \
            for (long j = 0; j < n - i; j++) dst[i + j] = lanes[j];                                    \
        }                                                                                              \
    } while (0)
#define TESSERA_UNARY_MAP16(F)                                                                         \
    do {                                                                                               \
        long i = 0;                                                                                    \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, F(_mm512_loadu_ps(src + i)));           \
        if (i < n) {                                                                                   \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                           \
            _mm512_mask_storeu_ps(dst + i, m, F(_mm512_maskz_loadu_ps(m, src + i)));                    \
        }                                                                                              \
    } while (0)

// The one-operation functions as plain loops clang vectorises under each copy's target
// attribute (no FMA contraction, so each result is the IEEE operation the Swift body does).
#define TESSERA_UNARY_LOOP(EXPR)                                                                       \
    do {                                                                                               \
        for (long i = 0; i < n; i++) { float x = src[i]; dst[i] = (EXPR); }                           \
    } while (0)
#define TESSERA_UNARY_SIMPLE_BODY                                                                      \
    switch (op) {                                                                                      \
    case TESSERA_UNARY_ABS: TESSERA_UNARY_LOOP(__builtin_fabsf(x)); break;                             \
    case TESSERA_UNARY_NEG: TESSERA_UNARY_LOOP(-x); break;                                             \
    case TESSERA_UNARY_SIGN:                                                                           \
        TESSERA_UNARY_LOOP(x > 0 ? 1.0f : (x < 0 ? -1.0f : (x != x ? x : 0.0f)));                      \
        break;                                                                                         \
    case TESSERA_UNARY_SQUARE: TESSERA_UNARY_LOOP(x * x); break;                                       \
    case TESSERA_UNARY_RECIPROCAL: TESSERA_UNARY_LOOP(1.0f / x); break;                                \
    case TESSERA_UNARY_RSQRT: TESSERA_UNARY_LOOP(1.0f / __builtin_sqrtf(x)); break;                    \
    case TESSERA_UNARY_FLOOR: TESSERA_UNARY_LOOP(__builtin_floorf(x)); break;                          \
    case TESSERA_UNARY_CEIL: TESSERA_UNARY_LOOP(__builtin_ceilf(x)); break;                            \
    case TESSERA_UNARY_ROUND: TESSERA_UNARY_LOOP(__builtin_roundevenf(x)); break;                      \
    default: break;                                                                                    \
    }

__attribute__((target("avx2,fma"))) static void tessera_unary_f32_avx2(int op, const float *src, float *dst, long n) {
#pragma clang fp contract(off)
    if (op == TESSERA_UNARY_TANH) {
        TESSERA_UNARY_MAP8(tessera_tanh8);
    } else if (op == TESSERA_UNARY_SIGMOID) {
        TESSERA_UNARY_MAP8(tessera_sigmoid8);
    } else {
        TESSERA_UNARY_SIMPLE_BODY
    }
}

__attribute__((target("avx512f,avx2,fma"), min_vector_width(512))) static void tessera_unary_f32_avx512(
    int op, const float *src, float *dst, long n) {
#pragma clang fp contract(off)
    if (op == TESSERA_UNARY_TANH) {
        TESSERA_UNARY_MAP16(tessera_tanh16);
    } else if (op == TESSERA_UNARY_SIGMOID) {
        TESSERA_UNARY_MAP16(tessera_sigmoid16);
    } else {
        TESSERA_UNARY_SIMPLE_BODY
    }
}
#undef TESSERA_UNARY_SIMPLE_BODY
#undef TESSERA_UNARY_LOOP
#undef TESSERA_UNARY_MAP8
#undef TESSERA_UNARY_MAP16

void tessera_unary_f32_vector(int op, const float *src, float *dst, long n) {
    if (tessera_cpu_has_avx512f()) {
        tessera_unary_f32_avx512(op, src, dst, n);
    } else {
        tessera_unary_f32_avx2(op, src, dst, n);
    }
}

// wins = !(v <= best) && best is not NaN (max), !(v >= best) && best is not NaN (min): a
// strict win, or a NaN over a number.
#define TESSERA_ARG_FOLD_LOOP(PREDICATE)                                                              \
    for (; j + 8 <= n; j += 8) {                                                                      \
        __m256 v = _mm256_loadu_ps(p + j);                                                            \
        __m256 b = _mm256_loadu_ps(best + j);                                                         \
        __m256 w = _mm256_and_ps(_mm256_cmp_ps(v, b, PREDICATE), _mm256_cmp_ps(b, b, _CMP_ORD_Q));    \
        _mm256_storeu_ps(best + j, _mm256_blendv_ps(b, v, w));                                        \
        __m256 i = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(index + j)));             \
        _mm256_storeu_si256((__m256i *)(index + j), _mm256_castps_si256(_mm256_blendv_ps(i, rs, w))); \
    }

__attribute__((target("avx2,fma"))) void tessera_arg_fold_f32_avx2(int is_max, const float *p, float *best,
                                                                  int *index, int r, long n) {
    const __m256 rs = _mm256_castsi256_ps(_mm256_set1_epi32(r));
    long j = 0;
    if (is_max) {
        TESSERA_ARG_FOLD_LOOP(_CMP_NLE_UQ)
    } else {
        TESSERA_ARG_FOLD_LOOP(_CMP_NGE_UQ)
    }
    for (; j < n; j++) {
        float v = p[j], b = best[j];
        int wins = (is_max ? v > b : v < b) || (v != v && b == b);
        if (wins) {
            best[j] = v;
            index[j] = r;
        }
    }
}

__attribute__((target("avx2,fma"))) long tessera_find_beyond_f32_avx2(int above, const float *p, long start,
                                                                     long n, float threshold) {
    const __m256 t = _mm256_set1_ps(threshold);
    long i = start;
    // !(p <= t) is p > t or p unordered (NaN); p < t is ordered.
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(p + i);
        __m256 b = _mm256_loadu_ps(p + i + 8);
        __m256 ma = above ? _mm256_cmp_ps(a, t, _CMP_NLE_UQ) : _mm256_cmp_ps(a, t, _CMP_LT_OQ);
        __m256 mb = above ? _mm256_cmp_ps(b, t, _CMP_NLE_UQ) : _mm256_cmp_ps(b, t, _CMP_LT_OQ);
        int bits = _mm256_movemask_ps(ma) | (_mm256_movemask_ps(mb) << 8);
        if (bits) return i + __builtin_ctz(bits);
    }
    for (; i < n; i++) {
        float v = p[i];
        if (above ? !(v <= threshold) : v < threshold) return i;
    }
    return n;
}

#define TESSERA_EXTREMUM_ROW_LOOP(PREDICATE)                                                       \
    for (; i + 16 <= n; i += 16) {                                                                 \
        __m256 a0 = _mm256_loadu_ps(acc + i), a1 = _mm256_loadu_ps(acc + i + 8);                   \
        __m256 x0 = _mm256_loadu_ps(p + i), x1 = _mm256_loadu_ps(p + i + 8);                       \
        __m256 w0 = _mm256_or_ps(_mm256_cmp_ps(x0, a0, PREDICATE), _mm256_cmp_ps(x0, x0, _CMP_UNORD_Q)); \
        __m256 w1 = _mm256_or_ps(_mm256_cmp_ps(x1, a1, PREDICATE), _mm256_cmp_ps(x1, x1, _CMP_UNORD_Q)); \
        _mm256_storeu_ps(acc + i, _mm256_blendv_ps(a0, x0, w0));                                   \
        _mm256_storeu_ps(acc + i + 8, _mm256_blendv_ps(a1, x1, w1));                               \
    }

__attribute__((target("avx2,fma"))) void tessera_extremum_row_f32_avx2(int is_max, float *acc, const float *p,
                                                                      long n) {
    long i = 0;
    if (is_max) {
        TESSERA_EXTREMUM_ROW_LOOP(_CMP_GT_OQ)
    } else {
        TESSERA_EXTREMUM_ROW_LOOP(_CMP_LT_OQ)
    }
    for (; i < n; i++) {
        float x = p[i];
        if ((is_max ? x > acc[i] : x < acc[i]) || x != x) acc[i] = x;
    }
}
// Depthwise convolution, one output plane at a time, one output row at a time: each block of
// VL output columns keeps its sum in a register across every kernel tap — bias first, then
// acc = acc + w·x per tap in (i, j) order, skipping taps whose input falls outside the image
// (no FMA contraction, so both widths, and the scalar code, give the same bits) — then goes
// through the clamp and is stored once. Stride 1 loads VL consecutive inputs per tap; stride 2
// loads 2·VL and keeps the even lanes; other strides go element by element in the same order.
// Blocks where every tap is inside the image for every lane take unmasked loads and adds;
// blocks at the borders (and short rows) load with masks and add only the lanes whose tap is
// valid, so padding is never read.

// The clamp: max(lo, x) then min(hi, ·) with the instructions' operand order, which is
// NaN-propagating max(x, lo) / min(·, hi) for constants that are not NaN (the caller deals with
// NaN bounds); ±infinity bounds leave x unchanged, bit for bit.
#define TESSERA_DW_CLAMP_SCALAR(v, lo, hi) \
    do {                                   \
        v = (lo) > v ? (lo) : v;           \
        v = (hi) < v ? (hi) : v;           \
    } while (0)

#define TESSERA_DW_SCALAR_ELEMENT(x)                                                              \
    do {                                                                                          \
        float acc = bias;                                                                         \
        for (long i = iLo; i < iHi; i++) {                                                        \
            const float *src = in + (y * g->sh - g->pt + i * g->dh) * g->w;                       \
            for (long j = 0; j < kw; j++) {                                                       \
                if ((x) < valid[2 * j] || (x) >= valid[2 * j + 1]) continue;                      \
                acc = acc + k[i * kw + j] * src[(x) * g->sw + j * g->dw - g->pl];                 \
            }                                                                                     \
        }                                                                                         \
        TESSERA_DW_CLAMP_SCALAR(acc, lo, hi);                                                     \
        row[x] = acc;                                                                             \
    } while (0)

// The plane body for one vector width; P is the prefix of the width's helpers (P##_set1,
// P##_loadu, P##_load2, P##_lanes, P##_maskz_load, P##_maskz_load2, P##_mask_add, P##_store_n).
// KH and KW are the kernel size (constants in the 3×3 copies), S the stride (1 or 2).
// Blocks of columns are the outer loop: which lanes each tap column reaches inside the image
// (and, for stride 2, which of the 2·VL loaded inputs exist) depends on the block only, so the
// masks are built once per block; rows are the inner loop, four (else two) at a time where
// every kernel row is inside the image (independent sums in flight hide the latency of each
// sum's chain of additions), with unmasked loads and adds when every tap of every lane is
// inside the image and masked ones otherwise; border rows one at a time.
#define TESSERA_DW_ROW_FULL(P, S, acc, top)                                                       \
    for (long i = 0; i < kh; i++) {                                                               \
        const float *src = in + ((top) + i * g->dh) * g->w + x0 * (S) - g->pl;                    \
        for (long j = 0; j < kw; j++) {                                                           \
            P##_t v = (S) == 1 ? P##_loadu(src + j * g->dw) : P##_load2(src + j * g->dw);         \
            acc = P##_add(acc, P##_mul(P##_set1(k[i * kw + j]), v));                              \
        }                                                                                         \
    }

#define TESSERA_DW_ROW_MASKED(P, S, acc, top, iLo, iHi)                                           \
    for (long i = (iLo); i < (iHi); i++) {                                                        \
        const float *src = in + ((top) + i * g->dh) * g->w + x0 * (S) - g->pl;                    \
        for (long j = 0; j < kw; j++) {                                                           \
            if (!used[j]) continue;                                                               \
            P##_t v = (S) == 1 ? P##_maskz_load(src + j * g->dw, lanes[j])                        \
                               : P##_maskz_load2(src + j * g->dw, loads[2 * j], loads[2 * j + 1]); \
            acc = P##_mask_add(acc, lanes[j], P##_mul(P##_set1(k[i * kw + j]), v));              \
        }                                                                                         \
    }

#define TESSERA_DW_PLANE_BODY(P, VL, KH, KW, S)                                                   \
    const long kh = (KH), kw = (KW);                                                              \
    const P##_t vlo = P##_set1(lo), vhi = P##_set1(hi), vbias = P##_set1(bias);                   \
    P##_mask_t lanes[KW], loads[2 * (KW)];                                                        \
    int used[KW];                                                                                 \
    for (long x0 = 0; x0 < g->ow; x0 += (VL)) {                                                   \
        long n = g->ow - x0 < (VL) ? g->ow - x0 : (VL);                                           \
        int full = n == (VL);                                                                     \
        for (long j = 0; j < kw; j++) {                                                           \
            long a = valid[2 * j] - x0, b = valid[2 * j + 1] - x0;                                \
            if (a < 0) a = 0;                                                                     \
            if (b > n) b = n;                                                                     \
            used[j] = a < b;                                                                      \
            full = full && a == 0 && b == (VL);                                                   \
            lanes[j] = P##_lanes(a, b);                                                           \
            /* Stride 2: inputs [first, first + 2·VL) of the row, those inside it. */             \
            long first = x0 * (S) + j * g->dw - g->pl;                                            \
            long ea = -first > 0 ? -first : 0, eb = g->w - first;                                 \
            if ((S) == 2 && eb < 2 * (VL) - 1) full = 0;                                          \
            loads[2 * j] = P##_lanes(ea, eb);                                                     \
            loads[2 * j + 1] = P##_lanes(ea - (VL), eb - (VL));                                   \
        }                                                                                         \
        long y = 0;                                                                               \
        while (y < g->oh) {                                                                       \
            long top = y * g->sh - g->pt;                                                         \
            long nextTop = top + g->sh;                                                           \
            if (y + 3 < g->oh && top >= 0 && top + 3 * g->sh + (kh - 1) * g->dh < g->h) {         \
                P##_t acc0 = vbias, acc1 = vbias, acc2 = vbias, acc3 = vbias;                     \
                if (full) {                                                                       \
                    TESSERA_DW_ROW_FULL(P, S, acc0, top)                                          \
                    TESSERA_DW_ROW_FULL(P, S, acc1, nextTop)                                      \
                    TESSERA_DW_ROW_FULL(P, S, acc2, nextTop + g->sh)                              \
                    TESSERA_DW_ROW_FULL(P, S, acc3, nextTop + 2 * g->sh)                          \
                    P##_storeu(out + y * g->ow + x0, P##_min(vhi, P##_max(vlo, acc0)));           \
                    P##_storeu(out + (y + 1) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc1)));     \
                    P##_storeu(out + (y + 2) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc2)));     \
                    P##_storeu(out + (y + 3) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc3)));     \
                } else {                                                                          \
                    TESSERA_DW_ROW_MASKED(P, S, acc0, top, 0, kh)                                 \
                    TESSERA_DW_ROW_MASKED(P, S, acc1, nextTop, 0, kh)                             \
                    TESSERA_DW_ROW_MASKED(P, S, acc2, nextTop + g->sh, 0, kh)                     \
                    TESSERA_DW_ROW_MASKED(P, S, acc3, nextTop + 2 * g->sh, 0, kh)                 \
                    P##_store_n(out + y * g->ow + x0, P##_min(vhi, P##_max(vlo, acc0)), n);       \
                    P##_store_n(out + (y + 1) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc1)), n); \
                    P##_store_n(out + (y + 2) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc2)), n); \
                    P##_store_n(out + (y + 3) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc3)), n); \
                }                                                                                 \
                y += 4;                                                                           \
                continue;                                                                         \
            }                                                                                     \
            if (y + 1 < g->oh && top >= 0 && nextTop + (kh - 1) * g->dh < g->h) {                \
                P##_t acc0 = vbias, acc1 = vbias;                                                 \
                if (full) {                                                                       \
                    TESSERA_DW_ROW_FULL(P, S, acc0, top)                                          \
                    TESSERA_DW_ROW_FULL(P, S, acc1, nextTop)                                      \
                    P##_storeu(out + y * g->ow + x0, P##_min(vhi, P##_max(vlo, acc0)));           \
                    P##_storeu(out + (y + 1) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc1)));     \
                } else {                                                                          \
                    TESSERA_DW_ROW_MASKED(P, S, acc0, top, 0, kh)                                 \
                    TESSERA_DW_ROW_MASKED(P, S, acc1, nextTop, 0, kh)                             \
                    P##_store_n(out + y * g->ow + x0, P##_min(vhi, P##_max(vlo, acc0)), n);       \
                    P##_store_n(out + (y + 1) * g->ow + x0, P##_min(vhi, P##_max(vlo, acc1)), n); \
                }                                                                                 \
                y += 2;                                                                           \
                continue;                                                                         \
            }                                                                                     \
            long iLo = 0, iHi = kh;                                                               \
            while (iLo < kh && top + iLo * g->dh < 0) iLo++;                                      \
            while (iHi > iLo && top + (iHi - 1) * g->dh >= g->h) iHi--;                           \
            P##_t acc = vbias;                                                                    \
            TESSERA_DW_ROW_MASKED(P, S, acc, top, iLo, iHi)                                       \
            P##_store_n(out + y * g->ow + x0, P##_min(vhi, P##_max(vlo, acc)), n);                \
            y += 1;                                                                               \
        }                                                                                         \
    }

// AVX-512 helpers: 16 lanes, masks as bits.
typedef __m512 tessera_v16_t;
typedef __mmask16 tessera_v16_mask_t;
#define TESSERA_V16_ATTR __attribute__((target("avx512f,avx2,fma"), min_vector_width(512), always_inline)) static inline
// Lanes [a, b) (clamped to 0...16).
TESSERA_V16_ATTR __mmask16 tessera_v16_lanes(long a, long b) {
    unsigned hiBits = b >= 16 ? 0xFFFFu : (b <= 0 ? 0u : ((1u << b) - 1u));
    unsigned loBits = a >= 16 ? 0xFFFFu : (a <= 0 ? 0u : ((1u << a) - 1u));
    return (__mmask16)(hiBits & ~loBits);
}
TESSERA_V16_ATTR __m512 tessera_v16_set1(float x) { return _mm512_set1_ps(x); }
TESSERA_V16_ATTR __m512 tessera_v16_add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
TESSERA_V16_ATTR __m512 tessera_v16_mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
TESSERA_V16_ATTR __m512 tessera_v16_max(__m512 a, __m512 b) { return _mm512_max_ps(a, b); }
TESSERA_V16_ATTR __m512 tessera_v16_min(__m512 a, __m512 b) { return _mm512_min_ps(a, b); }
TESSERA_V16_ATTR __m512 tessera_v16_loadu(const float *p) { return _mm512_loadu_ps(p); }
TESSERA_V16_ATTR void tessera_v16_storeu(float *p, __m512 v) { _mm512_storeu_ps(p, v); }
TESSERA_V16_ATTR __m512 tessera_v16_evens(__m512 a, __m512 b) {
    const __m512i index = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    return _mm512_permutex2var_ps(a, index, b);
}
// p[0], p[2], ..., p[30] (p[31] is not read).
TESSERA_V16_ATTR __m512 tessera_v16_load2(const float *p) {
    return tessera_v16_evens(_mm512_loadu_ps(p), _mm512_maskz_loadu_ps(0x7FFF, p + 16));
}
TESSERA_V16_ATTR __m512 tessera_v16_maskz_load(const float *p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
// The even ones of p[0..<32], with only the elements in the masks read (masked lanes never fault).
TESSERA_V16_ATTR __m512 tessera_v16_maskz_load2(const float *p, __mmask16 lower, __mmask16 upper) {
    return tessera_v16_evens(_mm512_maskz_loadu_ps(lower, p), _mm512_maskz_loadu_ps(upper, p + 16));
}
// The three stride-2 taps of a 3-wide window from p[0 ..< 32] in a and b and p[32] in lane 0 of
// last: p[0, 2, …, 30], p[1, 3, …, 31] and p[2, 4, …, 32] (the evens shifted by one lane).
TESSERA_V16_ATTR void tessera_v16_taps3(__m512 a, __m512 b, __m512 last, __m512 *v0, __m512 *v1, __m512 *v2) {
    const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    *v0 = tessera_v16_evens(a, b);
    *v1 = _mm512_permutex2var_ps(a, odds, b);
    *v2 = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(last), _mm512_castps_si512(*v0), 1));
}
// The three stride-2 inputs of a 3-wide kernel row from one pair of loads: p[0, 2, …, 30],
// p[1, 3, …, 31] and p[2, 4, …, 32] (the evens shifted by one lane, p[32] loaded alone) — the
// values tessera_v16_load2 at p, p + 1 and p + 2 give, with two full loads instead of six.
// Call only where p[0 ..< 33] are inside the row.
TESSERA_V16_ATTR void tessera_v16_load2x3(const float *p, __m512 *v0, __m512 *v1, __m512 *v2) {
    tessera_v16_taps3(_mm512_loadu_ps(p), _mm512_loadu_ps(p + 16), _mm512_set1_ps(p[32]), v0, v1, v2);
}
// tessera_v16_load2x3 at a border: loads[0], loads[1] (kernel column 0's masks) say which of
// p[0 ..< 32] are inside the row — every input columns 1 and 2 read among them but p[32], which
// is inside when lane 14 of loads[5] (kernel column 2's upper mask, from p + 18) is set. Outside
// elements read as 0, as tessera_v16_maskz_load2 gives them.
TESSERA_V16_ATTR void tessera_v16_maskz_load2x3(const float *p, const __mmask16 *loads, __m512 *v0, __m512 *v1,
                                                __m512 *v2) {
    const __m512 a = _mm512_maskz_loadu_ps(loads[0], p), b = _mm512_maskz_loadu_ps(loads[1], p + 16);
    const __m512 last = _mm512_maskz_loadu_ps((__mmask16)((loads[5] >> 14) & 1), p + 32);
    tessera_v16_taps3(a, b, last, v0, v1, v2);
}
TESSERA_V16_ATTR __m512 tessera_v16_mask_add(__m512 acc, __mmask16 m, __m512 v) {
    return _mm512_mask_add_ps(acc, m, acc, v);
}
TESSERA_V16_ATTR void tessera_v16_store_n(float *p, __m512 v, long n) {
    if (n == 16) {
        _mm512_storeu_ps(p, v);
    } else {
        _mm512_mask_storeu_ps(p, tessera_v16_lanes(0, n), v);
    }
}

// AVX2 helpers: 8 lanes, masks as lane-index comparisons.
typedef __m256 tessera_v8_t;
typedef __m256i tessera_v8_mask_t;
#define TESSERA_V8_ATTR __attribute__((target("avx2,fma"), always_inline)) static inline
// Lanes [a, b) (clamped to 0...8).
TESSERA_V8_ATTR __m256i tessera_v8_lanes(long a, long b) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int lo = a < 0 ? 0 : (a > 8 ? 8 : (int)a), hi = b < 0 ? 0 : (b > 8 ? 8 : (int)b);
    __m256i atLeastA = _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(lo - 1));
    __m256i belowB = _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), lanes);
    return _mm256_and_si256(atLeastA, belowB);
}
TESSERA_V8_ATTR __m256 tessera_v8_set1(float x) { return _mm256_set1_ps(x); }
TESSERA_V8_ATTR __m256 tessera_v8_add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
TESSERA_V8_ATTR __m256 tessera_v8_mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
TESSERA_V8_ATTR __m256 tessera_v8_max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
TESSERA_V8_ATTR __m256 tessera_v8_min(__m256 a, __m256 b) { return _mm256_min_ps(a, b); }
TESSERA_V8_ATTR __m256 tessera_v8_loadu(const float *p) { return _mm256_loadu_ps(p); }
TESSERA_V8_ATTR void tessera_v8_storeu(float *p, __m256 v) { _mm256_storeu_ps(p, v); }
TESSERA_V8_ATTR __m256 tessera_v8_evens(__m256 a, __m256 b) {
    __m256 mixed = _mm256_shuffle_ps(a, b, 0x88);  // a0 a2 b0 b2 | a4 a6 b4 b6
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), 0xD8));
}
// p[0], p[2], ..., p[14] (p[15] is not read).
TESSERA_V8_ATTR __m256 tessera_v8_load2(const float *p) {
    return tessera_v8_evens(_mm256_loadu_ps(p), _mm256_maskload_ps(p + 8, tessera_v8_lanes(0, 7)));
}
TESSERA_V8_ATTR __m256 tessera_v8_maskz_load(const float *p, __m256i m) { return _mm256_maskload_ps(p, m); }
TESSERA_V8_ATTR __m256 tessera_v8_maskz_load2(const float *p, __m256i lower, __m256i upper) {
    return tessera_v8_evens(_mm256_maskload_ps(p, lower), _mm256_maskload_ps(p + 8, upper));
}
// The three stride-2 inputs of a 3-wide kernel row: tessera_v8_load2 at p, p + 1 and p + 2.
TESSERA_V8_ATTR void tessera_v8_load2x3(const float *p, __m256 *v0, __m256 *v1, __m256 *v2) {
    *v0 = tessera_v8_load2(p), *v1 = tessera_v8_load2(p + 1), *v2 = tessera_v8_load2(p + 2);
}
// tessera_v8_maskz_load2 at p, p + 1 and p + 2 with each kernel column's pair of masks.
TESSERA_V8_ATTR void tessera_v8_maskz_load2x3(const float *p, const __m256i *loads, __m256 *v0, __m256 *v1,
                                              __m256 *v2) {
    *v0 = tessera_v8_maskz_load2(p, loads[0], loads[1]);
    *v1 = tessera_v8_maskz_load2(p + 1, loads[2], loads[3]);
    *v2 = tessera_v8_maskz_load2(p + 2, loads[4], loads[5]);
}
TESSERA_V8_ATTR __m256 tessera_v8_mask_add(__m256 acc, __m256i m, __m256 v) {
    return _mm256_blendv_ps(acc, _mm256_add_ps(acc, v), _mm256_castsi256_ps(m));
}
TESSERA_V8_ATTR void tessera_v8_store_n(float *p, __m256 v, long n) {
    if (n == 8) {
        _mm256_storeu_ps(p, v);
    } else {
        _mm256_maskstore_ps(p, tessera_v8_lanes(0, n), v);
    }
}

// 3×3, dilation 1, stride 1 or 2 (the same in both directions): input rows outer. Each input row
// of a block of columns is loaded once — three vectors, one per kernel column — and added to every
// output row it reaches, which keeps its sum in one of a ring of accumulators (three for stride 1,
// two for stride 2) from its first kernel row to its last, then is clamped and stored. An output
// row meets its kernel rows in order as the input rows go by, so each sum is still bias, then
// acc + w·x per tap inside the image in (i, j) order: the bits of the body above, with a third
// (stride 1) or half (stride 2) of its loads and the nine weights in registers. NP planes (one or
// two, same geometry) run side by side: one plane's sums are chains of dependent adds, three
// cycles each, that leave the vector units mostly idle (worst on narrow planes, where a row is one
// block); a second plane's independent chains fill them. Each plane's sums are unchanged.
#define TESSERA_DW3_TAPS(P, MASKED, acc, w)                                                       \
    if (MASKED) {                                                                                 \
        acc = P##_mask_add(acc, lanes[0], P##_mul((w)[0], v0));                                   \
        acc = P##_mask_add(acc, lanes[1], P##_mul((w)[1], v1));                                   \
        acc = P##_mask_add(acc, lanes[2], P##_mul((w)[2], v2));                                   \
    } else {                                                                                      \
        acc = P##_add(acc, P##_mul((w)[0], v0));                                                  \
        acc = P##_add(acc, P##_mul((w)[1], v1));                                                  \
        acc = P##_add(acc, P##_mul((w)[2], v2));                                                  \
    }

// Loads input row r's three vectors (one per kernel column) of plane q for the block at x0.
#define TESSERA_DW3_LOAD(P, S, MASKED, r, q)                                                      \
    const float *src = in[q] + (r) * g->w + x0 * (S) - g->pl;                                     \
    P##_t v0, v1, v2;                                                                             \
    if ((S) == 1 && !(MASKED)) {                                                                  \
        v0 = P##_loadu(src), v1 = P##_loadu(src + 1), v2 = P##_loadu(src + 2);                  \
    } else if ((S) == 1) {                                                                        \
        v0 = P##_maskz_load(src, lanes[0]), v1 = P##_maskz_load(src + 1, lanes[1]);               \
        v2 = P##_maskz_load(src + 2, lanes[2]);                                                   \
    } else if (!(MASKED)) {                                                                       \
        P##_load2x3(src, &v0, &v1, &v2);                                                          \
    } else {                                                                                      \
        P##_maskz_load2x3(src, loads, &v0, &v1, &v2);                                             \
    }

#define TESSERA_DW3_STORE(P, acc, y, q) \
    P##_store_n(out[q] + (y) * g->ow + x0, P##_min(vhi, P##_max(vlo, (acc)[q])), n);

// Stride 1, input row r: it is kernel row 0 of output row r + pt (whose sum starts here), row 1
// of r + pt - 1 and row 2 of r + pt - 2 (whose sum ends here).
#define TESSERA_DW3S1_STEP(P, MASKED, aNew, aMid, aOld)                                           \
    {                                                                                             \
        long yNew = r + g->pt;                                                                    \
        for (int q = 0; q < NP; q++) aNew[q] = vbias[q];                                          \
        if (r >= 0 && r < g->h) {                                                                 \
            for (int q = 0; q < NP; q++) {                                                        \
                TESSERA_DW3_LOAD(P, 1, MASKED, r, q)                                              \
                if (yNew - 2 >= 0 && yNew - 2 < g->oh) { TESSERA_DW3_TAPS(P, MASKED, aOld[q], w[q] + 6) } \
                if (yNew - 1 >= 0 && yNew - 1 < g->oh) { TESSERA_DW3_TAPS(P, MASKED, aMid[q], w[q] + 3) } \
                if (yNew >= 0 && yNew < g->oh) { TESSERA_DW3_TAPS(P, MASKED, aNew[q], w[q]) }     \
            }                                                                                     \
        }                                                                                         \
        if (yNew - 2 >= 0 && yNew - 2 < g->oh) {                                                  \
            for (int q = 0; q < NP; q++) { TESSERA_DW3_STORE(P, aOld, yNew - 2, q) }              \
        }                                                                                         \
        r++;                                                                                      \
    }

#define TESSERA_DW3S1_ROWS(P, MASKED)                                                             \
    {                                                                                             \
        P##_t a[NP], b[NP], c[NP];                                                                \
        for (int q = 0; q < NP; q++) a[q] = b[q] = c[q] = vbias[q];                               \
        long r = -g->pt, rEnd = g->oh - g->pt + 2;                                                \
        while (r < rEnd) {                                                                        \
            TESSERA_DW3S1_STEP(P, MASKED, a, c, b)                                                \
            if (r >= rEnd) break;                                                                 \
            TESSERA_DW3S1_STEP(P, MASKED, b, a, c)                                                \
            if (r >= rEnd) break;                                                                 \
            TESSERA_DW3S1_STEP(P, MASKED, c, b, a)                                                \
        }                                                                                         \
    }

// Stride 2: input row r with r + pt even is kernel row 0 of output row (r + pt) / 2 (its sum
// starts) and row 2 of the one before (its sum ends); with r + pt odd, row 1 of (r + pt - 1) / 2.
#define TESSERA_DW3S2_EVEN(P, MASKED, aNew, aOld)                                                 \
    {                                                                                             \
        long yNew = (r + g->pt) / 2;                                                              \
        for (int q = 0; q < NP; q++) aNew[q] = vbias[q];                                          \
        if (r >= 0 && r < g->h) {                                                                 \
            for (int q = 0; q < NP; q++) {                                                        \
                TESSERA_DW3_LOAD(P, 2, MASKED, r, q)                                              \
                if (yNew - 1 >= 0 && yNew - 1 < g->oh) { TESSERA_DW3_TAPS(P, MASKED, aOld[q], w[q] + 6) } \
                if (yNew < g->oh) { TESSERA_DW3_TAPS(P, MASKED, aNew[q], w[q]) }                  \
            }                                                                                     \
        }                                                                                         \
        if (yNew - 1 >= 0 && yNew - 1 < g->oh) {                                                  \
            for (int q = 0; q < NP; q++) { TESSERA_DW3_STORE(P, aOld, yNew - 1, q) }              \
        }                                                                                         \
        r++;                                                                                      \
    }
#define TESSERA_DW3S2_ODD(P, MASKED, aCur)                                                        \
    {                                                                                             \
        long yCur = (r + g->pt - 1) / 2;                                                          \
        if (r >= 0 && r < g->h && yCur < g->oh) {                                                 \
            for (int q = 0; q < NP; q++) {                                                        \
                TESSERA_DW3_LOAD(P, 2, MASKED, r, q)                                              \
                TESSERA_DW3_TAPS(P, MASKED, aCur[q], w[q] + 3)                                    \
            }                                                                                     \
        }                                                                                         \
        r++;                                                                                      \
    }

#define TESSERA_DW3S2_ROWS(P, MASKED)                                                             \
    {                                                                                             \
        P##_t a[NP], b[NP];                                                                       \
        for (int q = 0; q < NP; q++) a[q] = b[q] = vbias[q];                                      \
        long r = -g->pt, rEnd = 2 * g->oh - g->pt + 1;                                            \
        while (r < rEnd) {                                                                        \
            TESSERA_DW3S2_EVEN(P, MASKED, a, b)                                                   \
            TESSERA_DW3S2_ODD(P, MASKED, a)                                                       \
            if (r >= rEnd) break;                                                                 \
            TESSERA_DW3S2_EVEN(P, MASKED, b, a)                                                   \
            TESSERA_DW3S2_ODD(P, MASKED, b)                                                       \
        }                                                                                         \
    }

#define TESSERA_DW3_ROWS_BODY(P, VL, S)                                                           \
    const long kw = 3;                                                                            \
    const P##_t vlo = P##_set1(lo), vhi = P##_set1(hi);                                           \
    P##_t vbias[NP], w[NP][9];                                                                    \
    for (int q = 0; q < NP; q++) {                                                                \
        vbias[q] = P##_set1(bias[q]);                                                             \
        for (int t = 0; t < 9; t++) w[q][t] = P##_set1(k[q][t]);                                  \
    }                                                                                             \
    P##_mask_t lanes[3], loads[6];                                                                \
    for (long x0 = 0; x0 < g->ow; x0 += (VL)) {                                                   \
        long n = g->ow - x0 < (VL) ? g->ow - x0 : (VL);                                           \
        int full = n == (VL);                                                                     \
        for (long j = 0; j < kw; j++) {                                                           \
            long a = valid[2 * j] - x0, b = valid[2 * j + 1] - x0;                                \
            if (a < 0) a = 0;                                                                     \
            if (b > n) b = n;                                                                     \
            full = full && a == 0 && b == (VL);                                                   \
            lanes[j] = P##_lanes(a, b);                                                           \
            long first = x0 * (S) + j - g->pl;                                                    \
            long ea = -first > 0 ? -first : 0, eb = g->w - first;                                 \
            if ((S) == 2 && eb < 2 * (VL) - 1) full = 0;                                          \
            loads[2 * j] = P##_lanes(ea, eb);                                                     \
            loads[2 * j + 1] = P##_lanes(ea - (VL), eb - (VL));                                   \
        }                                                                                         \
        if ((S) == 1 && full) TESSERA_DW3S1_ROWS(P, 0)                                            \
        else if ((S) == 1) TESSERA_DW3S1_ROWS(P, 1)                                               \
        else if (full) TESSERA_DW3S2_ROWS(P, 0)                                                   \
        else TESSERA_DW3S2_ROWS(P, 1)                                                             \
    }

#define TESSERA_DW_PLANE_ARGS                                                                              \
    const float *restrict in, const float *restrict k, float bias, float *restrict out,                   \
        const tessera_depthwise_geometry *restrict g,                                                     \
        const long *valid, float lo, float hi

#define TESSERA_DW_DEFINE(NAME, ATTR, P, VL, KH, KW, S) \
    ATTR static void NAME(TESSERA_DW_PLANE_ARGS) {      \
        _Pragma("clang fp contract(off)")               \
        TESSERA_DW_PLANE_BODY(P, VL, KH, KW, S)         \
    }

// NP planes at once: in[q], k[q], bias[q] and out[q] for q < NP.
#define TESSERA_DW3_DEFINE(NAME, ATTR, P, VL, S, PLANES)                                            \
    ATTR static void NAME(const float *const *restrict in, const float *const *restrict k,         \
                          const float *restrict bias, float *const *restrict out,                 \
                          const tessera_depthwise_geometry *restrict g, const long *valid, float lo, \
                          float hi) {                                                             \
        _Pragma("clang fp contract(off)")                                                         \
        enum { NP = PLANES };                                                                     \
        TESSERA_DW3_ROWS_BODY(P, VL, S)                                                           \
    }

#define TESSERA_DW_512 __attribute__((target("avx512f,avx2,fma"), min_vector_width(512)))
#define TESSERA_DW_256 __attribute__((target("avx2,fma")))
TESSERA_DW3_DEFINE(tessera_dw3rows_s1_avx512, TESSERA_DW_512, tessera_v16, 16, 1, 1)
TESSERA_DW3_DEFINE(tessera_dw3rows_s2_avx512, TESSERA_DW_512, tessera_v16, 16, 2, 1)
TESSERA_DW3_DEFINE(tessera_dw3rows_s1_avx2, TESSERA_DW_256, tessera_v8, 8, 1, 1)
TESSERA_DW3_DEFINE(tessera_dw3rows_s2_avx2, TESSERA_DW_256, tessera_v8, 8, 2, 1)
TESSERA_DW3_DEFINE(tessera_dw3rows2_s1_avx512, TESSERA_DW_512, tessera_v16, 16, 1, 2)
TESSERA_DW3_DEFINE(tessera_dw3rows2_s2_avx512, TESSERA_DW_512, tessera_v16, 16, 2, 2)
TESSERA_DW3_DEFINE(tessera_dw3rows2_s1_avx2, TESSERA_DW_256, tessera_v8, 8, 1, 2)
TESSERA_DW3_DEFINE(tessera_dw3rows2_s2_avx2, TESSERA_DW_256, tessera_v8, 8, 2, 2)
TESSERA_DW_DEFINE(tessera_dw3x3s1_avx512, TESSERA_DW_512, tessera_v16, 16, 3, 3, 1)
TESSERA_DW_DEFINE(tessera_dw3x3s2_avx512, TESSERA_DW_512, tessera_v16, 16, 3, 3, 2)
TESSERA_DW_DEFINE(tessera_dws1_avx512, TESSERA_DW_512, tessera_v16, 16, g->kh, g->kw, 1)
TESSERA_DW_DEFINE(tessera_dws2_avx512, TESSERA_DW_512, tessera_v16, 16, g->kh, g->kw, 2)
TESSERA_DW_DEFINE(tessera_dw3x3s1_avx2, TESSERA_DW_256, tessera_v8, 8, 3, 3, 1)
TESSERA_DW_DEFINE(tessera_dw3x3s2_avx2, TESSERA_DW_256, tessera_v8, 8, 3, 3, 2)
TESSERA_DW_DEFINE(tessera_dws1_avx2, TESSERA_DW_256, tessera_v8, 8, g->kh, g->kw, 1)
TESSERA_DW_DEFINE(tessera_dws2_avx2, TESSERA_DW_256, tessera_v8, 8, g->kh, g->kw, 2)

// Any other stride: element by element, the same arithmetic in the same order.
static void tessera_dw_general(TESSERA_DW_PLANE_ARGS) {
#pragma clang fp contract(off)
    const long kh = g->kh, kw = g->kw;
    for (long y = 0; y < g->oh; y++) {
        float *row = out + y * g->ow;
        long top = y * g->sh - g->pt;
        long iLo = 0, iHi = kh;
        while (iLo < kh && top + iLo * g->dh < 0) iLo++;
        while (iHi > iLo && top + (iHi - 1) * g->dh >= g->h) iHi--;
        for (long x = 0; x < g->ow; x++) TESSERA_DW_SCALAR_ELEMENT(x);
    }
}

// Small planes, the same size in and out, stride 1: the plane flattened into at most four 16-lane
// vectors of positions. Tap (i, j) of output position q reads input q + (i·dh − pt)·w + (j·dw − pl)
// when it lies inside the image; which lanes of which vector it reaches depends on the geometry
// alone, so the masks are built once for all the planes. Each sum is bias, then acc + w·x per tap
// inside the image in (i, j) order, then the clamp: the bits of the row kernels.
TESSERA_DW_512 static void tessera_dw_flat_avx512(const float *restrict in, const float *restrict k,
                                                   const float *restrict bias, float *restrict out,
                                                   long first, long count, long o, long c, long multiplier,
                                                   const tessera_depthwise_geometry *restrict g, float lo, float hi) {
#pragma clang fp contract(off)
    const long positions = g->oh * g->ow, taps = g->kh * g->kw;
    __mmask16 masks[TESSERA_DW_FLAT_TAPS][4];
    long offsets[TESSERA_DW_FLAT_TAPS];
    for (long t = 0; t < taps; t++) {
        const long di = (t / g->kw) * g->dh - g->pt, dj = (t % g->kw) * g->dw - g->pl;
        offsets[t] = di * g->w + dj;
        for (long v = 0; v < 4; v++) {
            unsigned m = 0;
            for (long l = 0; l < 16; l++) {
                const long q = 16 * v + l;
                if (q >= positions) break;
                const long y = q / g->ow + di, x = q % g->ow + dj;
                if (y >= 0 && y < g->h && x >= 0 && x < g->w) m |= 1u << l;
            }
            masks[t][v] = (__mmask16)m;
        }
    }
    const __mmask16 stores[4] = {
        tessera_v16_lanes(0, positions), tessera_v16_lanes(0, positions - 16), tessera_v16_lanes(0, positions - 32),
        tessera_v16_lanes(0, positions - 48)};
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (long p = first; p < first + count; p++) {
        const long image = p / o, channel = p % o;
        const float *src = in + (image * c + channel / multiplier) * positions;
        const float *kk = k + channel * taps;
        const __m512 vb = _mm512_set1_ps(bias ? bias[channel] : 0.0f);
        __m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
        for (long t = 0; t < taps; t++) {
            const __m512 w = _mm512_set1_ps(kk[t]);
            const float *s = src + offsets[t];
            const __mmask16 m0 = masks[t][0], m1 = masks[t][1], m2 = masks[t][2], m3 = masks[t][3];
            a0 = _mm512_mask_add_ps(a0, m0, a0, _mm512_mul_ps(w, _mm512_maskz_loadu_ps(m0, s)));
            a1 = _mm512_mask_add_ps(a1, m1, a1, _mm512_mul_ps(w, _mm512_maskz_loadu_ps(m1, s + 16)));
            a2 = _mm512_mask_add_ps(a2, m2, a2, _mm512_mul_ps(w, _mm512_maskz_loadu_ps(m2, s + 32)));
            a3 = _mm512_mask_add_ps(a3, m3, a3, _mm512_mul_ps(w, _mm512_maskz_loadu_ps(m3, s + 48)));
        }
        float *dst = out + p * positions;
        _mm512_mask_storeu_ps(dst, stores[0], _mm512_min_ps(vhi, _mm512_max_ps(vlo, a0)));
        _mm512_mask_storeu_ps(dst + 16, stores[1], _mm512_min_ps(vhi, _mm512_max_ps(vlo, a1)));
        _mm512_mask_storeu_ps(dst + 32, stores[2], _mm512_min_ps(vhi, _mm512_max_ps(vlo, a2)));
        _mm512_mask_storeu_ps(dst + 48, stores[3], _mm512_min_ps(vhi, _mm512_max_ps(vlo, a3)));
    }
}

int tessera_depthwise_flat_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                      long count, long o, long c, long multiplier,
                                      const tessera_depthwise_geometry *g, float lo, float hi) {
    if (!tessera_cpu_has_avx512f() || g->sh != 1 || g->sw != 1 || g->oh != g->h || g->ow != g->w ||
        g->oh * g->ow > 64 || g->kh * g->kw > TESSERA_DW_FLAT_TAPS) {
        return 0;
    }
    tessera_dw_flat_avx512(in, k, bias, out, first, count, o, c, multiplier, g, lo, hi);
    return 1;
}

void tessera_depthwise_plane_f32(const float *in, const float *k, float bias, float *out,
                                 const tessera_depthwise_geometry *g, const long *valid, float lo, float hi) {
    int is3x3 = g->kh == 3 && g->kw == 3;
    int rows3x3 = is3x3 && g->dh == 1 && g->dw == 1 && g->sh == g->sw && g->sw <= 2;
    if (rows3x3) {
        int avx512 = tessera_cpu_has_avx512f();
        const float *ins[1] = {in}, *ks[1] = {k};
        float *outs[1] = {out};
        if (g->sw == 1) {
            (avx512 ? tessera_dw3rows_s1_avx512 : tessera_dw3rows_s1_avx2)(ins, ks, &bias, outs, g, valid, lo, hi);
        } else {
            (avx512 ? tessera_dw3rows_s2_avx512 : tessera_dw3rows_s2_avx2)(ins, ks, &bias, outs, g, valid, lo, hi);
        }
    } else if (g->sw > 2) {
        tessera_dw_general(in, k, bias, out, g, valid, lo, hi);
    } else if (tessera_cpu_has_avx512f()) {
        if (g->sw == 1) {
            (is3x3 ? tessera_dw3x3s1_avx512 : tessera_dws1_avx512)(in, k, bias, out, g, valid, lo, hi);
        } else {
            (is3x3 ? tessera_dw3x3s2_avx512 : tessera_dws2_avx512)(in, k, bias, out, g, valid, lo, hi);
        }
    } else if (g->sw == 1) {
        (is3x3 ? tessera_dw3x3s1_avx2 : tessera_dws1_avx2)(in, k, bias, out, g, valid, lo, hi);
    } else {
        (is3x3 ? tessera_dw3x3s2_avx2 : tessera_dws2_avx2)(in, k, bias, out, g, valid, lo, hi);
    }
}

// Output planes [first, first + count): plane p is image p / o, output channel p % o, reading
// input channel (p % o) / multiplier of c at in + (image · c + channel) · in_plane and writing
// out + p · out_plane (the two public entry points below give the plane strides).
static int tessera_dw_planes(const float *in, const float *k, const float *bias, float *out, long first, long count,
                             long o, long c, long multiplier, long in_plane, long out_plane,
                             const tessera_depthwise_geometry *g, const long *valid, float lo, float hi) {
    if (!tessera_cpu_has_avx2_fma()) return 0;
    const long taps = g->kh * g->kw;
    int rows3x3 = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1 && g->sh == g->sw && g->sw <= 2;
    long p = first, end = first + count;
    if (rows3x3) {
        int avx512 = tessera_cpu_has_avx512f();
        // Plane i of the first half with plane i of the second: each half is read (and written)
        // front to back, two sequential streams the hardware prefetcher follows from pair to
        // pair, where adjacent planes in pairs start a new pair of streams every two planes
        // (with the input in memory, that made 28 × 28 planes half again as slow as one at a time).
        const long half = count / 2;
        for (long i = 0; i < half; i++) {
            const float *ins[2], *ks[2];
            float *outs[2], biases[2];
            for (int q = 0; q < 2; q++) {
                const long plane_q = first + i + q * half;
                const long image = plane_q / o, channel = plane_q % o;
                ins[q] = in + (image * c + channel / multiplier) * in_plane;
                ks[q] = k + channel * taps;
                outs[q] = out + plane_q * out_plane;
                biases[q] = bias ? bias[channel] : 0.0f;
            }
            if (g->sw == 1) {
                (avx512 ? tessera_dw3rows2_s1_avx512 : tessera_dw3rows2_s1_avx2)(ins, ks, biases, outs, g, valid, lo, hi);
            } else {
                (avx512 ? tessera_dw3rows2_s2_avx512 : tessera_dw3rows2_s2_avx2)(ins, ks, biases, outs, g, valid, lo, hi);
            }
        }
        p = first + 2 * half;
    }
    for (; p < end; p++) {
        const long image = p / o, channel = p % o;
        tessera_depthwise_plane_f32(in + (image * c + channel / multiplier) * in_plane, k + channel * taps,
                                    bias ? bias[channel] : 0.0f, out + p * out_plane, g, valid, lo, hi);
    }
    return 1;
}

int tessera_depthwise_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                 long count, long o, long c, long multiplier, const tessera_depthwise_geometry *g,
                                 const long *valid, float lo, float hi) {
    return tessera_dw_planes(in, k, bias, out, first, count, o, c, multiplier, g->h * g->w, g->oh * g->ow, g, valid,
                             lo, hi);
}

int tessera_depthwise_strided_planes_f32(const float *in, long in_stride, const float *k, const float *bias,
                                         float *out, long out_stride, long count,
                                         const tessera_depthwise_geometry *g, const long *valid, float lo,
                                         float hi) {
    // One image of `count` channels, one kernel each.
    return tessera_dw_planes(in, k, bias, out, 0, count, count, count, 1, in_stride, out_stride, g, valid, lo, hi);
}

// Whether any of the n floats at p is NaN.
TESSERA_DW_512 static int tessera_has_nan_avx512(const float *p, long n) {
    __mmask16 found = 0;
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(p + i);
        found |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    }
    if (i < n) {
        __mmask16 tail = tessera_v16_lanes(0, n - i);
        __m512 v = _mm512_maskz_loadu_ps(tail, p + i);
        found |= _mm512_mask_cmp_ps_mask(tail, v, v, _CMP_UNORD_Q);
    }
    return found != 0;
}

// Max pooling, one plane: 16 output columns per vector, every window tap inside the image in
// (i, j) order replacing the lanes it beats (greater, or NaN) — the scalar rule, lane by lane.
// Without a NaN in the plane that rule is one masked max per tap (max(v, best) keeps best unless
// v is greater: ties, ±0 included, keep the earlier tap as the rule does); with one, the lanes
// are compared and NaN kept explicitly.
TESSERA_DW_512 static void tessera_maxpool_plane_avx512(const float *restrict in, float *restrict out,
                                                        const tessera_depthwise_geometry *restrict g,
                                                        const long *valid) {
    const int nan_free = !tessera_has_nan_avx512(in, g->h * g->w);
    __mmask16 lanes[16], lower[16], upper[16];
    const long kw = g->kw;
    for (long x0 = 0; x0 < g->ow; x0 += 16) {
        long n = g->ow - x0 < 16 ? g->ow - x0 : 16;
        for (long j = 0; j < kw; j++) {
            long a = valid[2 * j] - x0, b = valid[2 * j + 1] - x0;
            lanes[j] = tessera_v16_lanes(a < 0 ? 0 : a, b > n ? n : b);
            long first = x0 * g->sw + j * g->dw - g->pl;
            long ea = -first > 0 ? -first : 0, eb = g->w - first;
            lower[j] = tessera_v16_lanes(ea, eb);
            upper[j] = tessera_v16_lanes(ea - 16, eb - 16);
        }
        for (long y = 0; y < g->oh; y++) {
            long top = y * g->sh - g->pt;
            __m512 best = _mm512_set1_ps(-__builtin_inff());
            for (long i = 0; i < g->kh; i++) {
                long row = top + i * g->dh;
                if (row < 0 || row >= g->h) continue;
                const float *src = in + row * g->w + x0 * g->sw - g->pl;
                for (long j = 0; j < kw; j++) {
                    if (!lanes[j]) continue;
                    __m512 v = g->sw == 1 ? _mm512_maskz_loadu_ps(lanes[j], src + j * g->dw)
                                          : tessera_v16_maskz_load2(src + j * g->dw, lower[j], upper[j]);
                    if (nan_free) {
                        best = _mm512_mask_max_ps(best, lanes[j], v, best);
                    } else {
                        __mmask16 wins =
                            _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                        best = _mm512_mask_mov_ps(best, wins & lanes[j], v);
                    }
                }
            }
            tessera_v16_store_n(out + y * g->ow + x0, best, n);
        }
    }
}

// The NaN-free max pool of a 3-wide window at column stride 2 and column dilation 1 (ResNet's
// 3 × 3 stride-2 pool), AVX-512, separably: each input row's three-column maxima first (one pair
// of loads gives the window's evens, odds and shifted evens, tessera_v16_taps3; columns
// outside the image load as -infinity), into `rows` (h rows of `stride` floats), then each output
// row folds its window's rows. Every fold is max(v, best) in (i, j) order, which keeps the
// earlier of equal values (±0 included), so the window's first maximal element in (i, j) order
// wins both ways: the bits of the tap-by-tap fold. A window wholly in the padding gives -infinity.
// The row pass also looks for NaN in every element it loads (each one any window reads among
// them); with one it returns 0 before writing out, and the caller runs the tap-by-tap fold that
// keeps NaN. Returns 1 when it wrote out.
TESSERA_DW_512 static int tessera_maxpool_plane_k3s2_avx512(const float *restrict in, float *restrict out,
                                                            const tessera_depthwise_geometry *restrict g,
                                                            float *restrict rows, long stride) {
    const __m512 lowest = _mm512_set1_ps(-__builtin_inff());
    __mmask16 unordered = 0;
    for (long x0 = 0; x0 < g->ow; x0 += 16) {
        // Element e of the loads is input column base + e.
        const long base = 2 * x0 - g->pl;
        const __mmask16 ma = tessera_v16_lanes(-base, g->w - base), mb = tessera_v16_lanes(-base - 16, g->w - base - 16);
        const __mmask16 mc = (__mmask16)(base + 32 >= 0 && base + 32 < g->w ? 1 : 0);
        for (long r = 0; r < g->h; r++) {
            const float *p = in + r * g->w + base;
            const __m512 a = _mm512_mask_loadu_ps(lowest, ma, p), b = _mm512_mask_loadu_ps(lowest, mb, p + 16);
            const __m512 last = _mm512_mask_loadu_ps(lowest, mc, p + 32);
            unordered |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(last, last, _CMP_UNORD_Q);
            __m512 v0, v1, v2;
            tessera_v16_taps3(a, b, last, &v0, &v1, &v2);
            _mm512_storeu_ps(rows + r * stride + x0, _mm512_max_ps(v2, _mm512_max_ps(v1, v0)));
        }
    }
    if (unordered) return 0;
    for (long y = 0; y < g->oh; y++) {
        const long top = y * g->sh - g->pt;
        for (long x0 = 0; x0 < g->ow; x0 += 16) {
            __m512 best = lowest;
            for (long i = 0; i < g->kh; i++) {
                const long row = top + i * g->dh;
                if (row < 0 || row >= g->h) continue;
                best = _mm512_max_ps(_mm512_loadu_ps(rows + row * stride + x0), best);
            }
            const long n = g->ow - x0 < 16 ? g->ow - x0 : 16;
            tessera_v16_store_n(out + y * g->ow + x0, best, n);
        }
    }
    return 1;
}

int tessera_maxpool_plane_f32(const float *in, float *out, const tessera_depthwise_geometry *g, const long *valid) {
    if (!tessera_cpu_has_avx512f() || g->kw > 16 || g->sw > 2 || g->dw != 1) return 0;
    const long stride = (g->ow + 15) / 16 * 16;
    // The separable form's row maxima (at most 64 KiB, on the stack) when the plane holds no NaN.
    if (g->kw == 3 && g->sw == 2 && g->h * stride <= 16384) {
        float rows[16384] __attribute__((aligned(64)));
        if (tessera_maxpool_plane_k3s2_avx512(in, out, g, rows, stride)) return 1;
    }
    tessera_maxpool_plane_avx512(in, out, g, valid);
    return 1;
}

// Every other float, dst[i] = src[2i] for i < n, reading nothing past src[2n - 2]. AVX-512: 16 at
// a time from two loads, the upper one masked to the 15 lanes it needs, then one block with its
// loads and store masked to what is left. AVX2: 8 at a time while the second load's last
// element, src[2i + 15], is before src[2n - 1]; then one by one.
TESSERA_DW_512 static void tessera_copy_stride2_f32_avx512(float *restrict dst, const float *restrict src, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(dst + i, tessera_v16_evens(_mm512_loadu_ps(src + 2 * i), _mm512_maskz_loadu_ps(0x7FFF, src + 2 * i + 16)));
    }
    if (i < n) {
        // 2·left − 1 elements remain: the first `lower` of the low load, the rest of the high one.
        const long left = n - i, needed = 2 * left - 1;
        const __mmask16 lower = tessera_v16_lanes(0, needed), upper = tessera_v16_lanes(0, needed - 16);
        const __m512 v = tessera_v16_evens(_mm512_maskz_loadu_ps(lower, src + 2 * i), _mm512_maskz_loadu_ps(upper, src + 2 * i + 16));
        _mm512_mask_storeu_ps(dst + i, tessera_v16_lanes(0, left), v);
    }
}

TESSERA_DW_256 static void tessera_copy_stride2_f32_avx2(float *restrict dst, const float *restrict src, long n) {
    long i = 0;
    for (; i + 8 < n; i += 8) _mm256_storeu_ps(dst + i, tessera_v8_evens(_mm256_loadu_ps(src + 2 * i), _mm256_loadu_ps(src + 2 * i + 8)));
    for (; i < n; i++) dst[i] = src[2 * i];
}

void tessera_copy_stride2_f32(float *dst, const float *src, long n) {
    if (tessera_cpu_has_avx512f()) {
        tessera_copy_stride2_f32_avx512(dst, src, n);
    } else {
        tessera_copy_stride2_f32_avx2(dst, src, n);
    }
}

// p[i] = clamp((p[i] + bias) + residual[i]), without the bias when add_bias is 0 and without the
// residual when it is NULL, the clamp as in the depthwise kernel.
#define TESSERA_EPILOGUE_LOOP(BIAS, RESIDUAL)                   \
    for (long i = 0; i < n; i++) {                              \
        float v = p[i];                                         \
        if (BIAS) v = v + bias;                                 \
        if (RESIDUAL) v = v + residual[i];                      \
        TESSERA_DW_CLAMP_SCALAR(v, lo, hi);                     \
        p[i] = v;                                               \
    }
#define TESSERA_EPILOGUE_BODY                                   \
    if (add_bias && residual) {                                 \
        TESSERA_EPILOGUE_LOOP(1, 1)                             \
    } else if (add_bias) {                                      \
        TESSERA_EPILOGUE_LOOP(1, 0)                             \
    } else if (residual) {                                      \
        TESSERA_EPILOGUE_LOOP(0, 1)                             \
    } else {                                                    \
        TESSERA_EPILOGUE_LOOP(0, 0)                             \
    }

TESSERA_DW_256 static void tessera_conv_epilogue_f32_avx2(float *restrict p, const float *restrict residual, long n,
                                                           int add_bias, float bias, float lo, float hi) {
#pragma clang fp contract(off)
    TESSERA_EPILOGUE_BODY
}

TESSERA_DW_512 static void tessera_conv_epilogue_f32_avx512(float *restrict p, const float *restrict residual,
                                                             long n, int add_bias, float bias, float lo, float hi) {
#pragma clang fp contract(off)
    TESSERA_EPILOGUE_BODY
}

void tessera_conv_epilogue_f32(float *p, const float *residual, long n, int add_bias, float bias, float lo,
                               float hi) {
    if (tessera_cpu_has_avx512f() && n >= 64) {
        tessera_conv_epilogue_f32_avx512(p, residual, n, add_bias, bias, lo, hi);
    } else {
        tessera_conv_epilogue_f32_avx2(p, residual, n, add_bias, bias, lo, hi);
    }
}
#else
int tessera_cpu_has_avx2_fma(void) { return 0; }
void tessera_extremum_row_f32_avx2(int is_max, float *acc, const float *p, long n) {
    (void)is_max; (void)acc; (void)p; (void)n;
}
long tessera_find_beyond_f32_avx2(int above, const float *p, long start, long n, float threshold) {
    (void)above; (void)p; (void)threshold; (void)start;
    return n;
}
void tessera_arg_fold_f32_avx2(int is_max, const float *p, float *best, int *index, int r, long n) {
    (void)is_max; (void)p; (void)best; (void)index; (void)r; (void)n;
}
void tessera_binary_f32_vector(int op, const float *a, float as, const float *b, float bs, float *dst, long n) {
    (void)op; (void)a; (void)as; (void)b; (void)bs; (void)dst; (void)n;
}
void tessera_sqrt_f32_vector(const float *src, float *dst, long n) { (void)src; (void)dst; (void)n; }
void tessera_binary_pair_f32_vector(int op1, int left1, float s1, int op2, int left2, float s2, const float *p,
                                    float *dst, long n) {
    (void)op1; (void)left1; (void)s1; (void)op2; (void)left2; (void)s2; (void)p; (void)dst; (void)n;
}
float tessera_sum_f32_vector(const float *p, long n) { (void)p; (void)n; return 0; }
float tessera_centered_square_sum_f32_vector(const float *p, long n, float center) {
    (void)p; (void)n; (void)center;
    return 0;
}
void tessera_depthwise_plane_f32(const float *in, const float *k, float bias, float *out,
                                 const tessera_depthwise_geometry *g, const long *valid, float lo, float hi) {
    (void)in; (void)k; (void)bias; (void)out; (void)g; (void)valid; (void)lo; (void)hi;
}
int tessera_depthwise_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                 long count, long o, long c, long multiplier, const tessera_depthwise_geometry *g,
                                 const long *valid, float lo, float hi) {
    (void)in; (void)k; (void)bias; (void)out; (void)first; (void)count; (void)o; (void)c; (void)multiplier;
    (void)g; (void)valid; (void)lo; (void)hi;
    return 0;
}
int tessera_depthwise_strided_planes_f32(const float *in, long in_stride, const float *k, const float *bias,
                                         float *out, long out_stride, long count,
                                         const tessera_depthwise_geometry *g, const long *valid, float lo,
                                         float hi) {
    (void)in; (void)in_stride; (void)k; (void)bias; (void)out; (void)out_stride; (void)count; (void)g; (void)valid;
    (void)lo; (void)hi;
    return 0;
}
void tessera_conv_epilogue_f32(float *p, const float *residual, long n, int add_bias, float bias, float lo,
                               float hi) {
    (void)p; (void)residual; (void)n; (void)add_bias; (void)bias; (void)lo; (void)hi;
}
void tessera_copy_stride2_f32(float *dst, const float *src, long n) {
    for (long i = 0; i < n; i++) dst[i] = src[2 * i];
}
int tessera_maxpool_plane_f32(const float *in, float *out, const tessera_depthwise_geometry *g, const long *valid) {
    (void)in; (void)out; (void)g; (void)valid;
    return 0;
}
int tessera_depthwise_flat_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                      long count, long o, long c, long multiplier,
                                      const tessera_depthwise_geometry *g, float lo, float hi) {
    (void)in; (void)k; (void)bias; (void)out; (void)first; (void)count; (void)o; (void)c; (void)multiplier;
    (void)g; (void)lo; (void)hi;
    return 0;
}
float tessera_exp_shifted_f32_vector(const float *src, float *dst, long n, float shift) {
    (void)src; (void)dst; (void)n; (void)shift;
    return 0;
}
float tessera_exp_shifted_f32_avx2(const float *src, float *dst, long n, float shift) {
    (void)src; (void)dst; (void)n; (void)shift;
    return 0;
}
void tessera_erf_f32_vector(const float *src, float *dst, long n) { tessera_erf_f32_lanes(src, dst, n, 1); }
int tessera_erf_f32_lanes(const float *src, float *dst, long n, int lanes) {
    (void)lanes;
    for (long i = 0; i < n; i++) dst[i] = tessera_erf_f32_scalar(src[i]);
    return 1;
}
void tessera_unary_f32_vector(int op, const float *src, float *dst, long n) {
    (void)op; (void)src; (void)dst; (void)n;
}
#endif

// One row of an im2col matrix, every architecture: the output rows the positions cross, each a
// zero prefix (columns whose input column is left of the image), the copy (strided for stride 2
// with tessera_copy_stride2_f32 where AVX2 runs) and a zero suffix; rows in the padding are zeros.
void tessera_im2col_row_f32(float *out, const float *plane, const tessera_im2col_row *r, long start, long end) {
    long y = start / r->ow, x0 = start % r->ow;
#if defined(__x86_64__)
    const int vectorStride2 = r->sw == 2 && tessera_cpu_has_avx2_fma();
#endif
    for (long p = start; p < end; y++, x0 = 0) {
        long x1 = r->ow - x0 < end - p ? r->ow : x0 + (end - p);
        long length = x1 - x0;
        long row = y * r->sh + r->rowOffset;
        if (row < 0 || row >= r->h) {
            __builtin_memset(out, 0, (size_t)length * sizeof(float));
        } else {
            long lo = r->validLower > x0 ? r->validLower : x0;
            if (lo > x1) lo = x1;
            long hi = r->validUpper < x1 ? r->validUpper : x1;
            if (hi < lo) hi = lo;
            if (lo > x0) __builtin_memset(out, 0, (size_t)(lo - x0) * sizeof(float));
            long count = hi - lo;
            if (count > 0) {
                float *copied = out + (lo - x0);
                const float *source = plane + row * r->w + lo * r->sw + r->columnOffset;
                if (r->sw == 1) {
                    __builtin_memcpy(copied, source, (size_t)count * sizeof(float));
#if defined(__x86_64__)
                } else if (vectorStride2) {
                    tessera_copy_stride2_f32(copied, source, count);
#endif
                } else {
                    for (long i = 0; i < count; i++) copied[i] = source[i * r->sw];
                }
            }
            if (hi < x1) __builtin_memset(out + (hi - x0), 0, (size_t)(x1 - hi) * sizeof(float));
        }
        out += length;
        p += length;
    }
}

#if defined(__x86_64__)
// The im2col rows of a 3-wide kernel at column stride 2 and column dilation 1 (ResNet's and
// MobileNet's stride-2 3 × 3 layers), AVX-512, for the whole tile [start, end): for each channel,
// kernel row and output row, 16 output columns at a time, one pair of masked loads of the input
// row (and p[32] alone) gives all three taps — the evens, the odds and the evens shifted by one
// lane (tessera_v16_taps3) — stored with one masked store each. Input columns outside
// the image are masked off the loads (the padding's zeros); the masks depend only on the output
// column, so they are made once per tile. The values tessera_im2col_row_f32 writes: a copy, and +0
// in the padding. Row-wise per segment, the same tile cost ~10 ns per (tap, output row) in
// bookkeeping, ~20 % of ResNet-50's stride-2 3 × 3 convolutions.
TESSERA_DW_512 static void tessera_im2col_k3s2_avx512(float *out, const float *input, const tessera_im2col_geometry *g,
                                                     long start, long end) {
    const long width = end - start, ow = g->ow, w = g->w, h = g->h;
    const long yFirst = start / ow, yLast = (end - 1) / ow;
    const long chunks = (ow + 15) / 16;
    __mmask16 stackMasks[3 * 64];
    __mmask16 *masks = chunks <= 64 ? stackMasks : malloc(sizeof(__mmask16) * 3 * (size_t)chunks);
    for (long q = 0; q < chunks; q++) {
        // Element e of the chunk's loads is input column base + e.
        const long base = 32 * q - g->padLeft;
        masks[3 * q] = tessera_v16_lanes(-base, w - base);
        masks[3 * q + 1] = tessera_v16_lanes(-base - 16, w - base - 16);
        masks[3 * q + 2] = (__mmask16)(base + 32 >= 0 && base + 32 < w ? 1 : 0);
    }
    const __m512 zero = _mm512_setzero_ps();
    for (long channel = 0; channel < g->c; channel++) {
        const float *plane = input + channel * h * w;
        for (long i = 0; i < g->kh; i++) {
            float *row0 = out + ((channel * g->kh + i) * 3) * width;
            float *row1 = row0 + width, *row2 = row1 + width;
            for (long y = yFirst; y <= yLast; y++) {
                const long xa = y == yFirst ? start - y * ow : 0, xb = y == yLast ? end - y * ow : ow;
                // Output column x of row y is column y · ow − start + x of the tile.
                const long offset = y * ow - start;
                const long inputRow = y * g->sh + i * g->dh - g->padTop;
                const int inside = inputRow >= 0 && inputRow < h;
                const float *source = plane + (inside ? inputRow * w : 0) - g->padLeft;
                for (long q = xa / 16; 16 * q < xb; q++) {
                    const long xs = 16 * q;
                    const __mmask16 stored = tessera_v16_lanes(xa - xs, xb - xs);
                    __m512 v0 = zero, v1 = zero, v2 = zero;
                    if (inside) {
                        const float *p = source + 2 * xs;
                        const __m512 a = _mm512_maskz_loadu_ps(masks[3 * q], p);
                        const __m512 b = _mm512_maskz_loadu_ps(masks[3 * q + 1], p + 16);
                        const __m512 last = _mm512_maskz_loadu_ps(masks[3 * q + 2], p + 32);
                        tessera_v16_taps3(a, b, last, &v0, &v1, &v2);
                    }
                    _mm512_mask_storeu_ps(row0 + offset + xs, stored, v0);
                    _mm512_mask_storeu_ps(row1 + offset + xs, stored, v1);
                    _mm512_mask_storeu_ps(row2 + offset + xs, stored, v2);
                }
            }
        }
    }
    if (masks != stackMasks) free(masks);
}
#endif

// ⌊a / b⌋ for b > 0.
static inline long tessera_floor_divide(long a, long b) {
    if (b == 1) return a;
    if (b == 2) return a >> 1;  // an arithmetic shift: the floor for negative a too
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void tessera_im2col_rows_f32(float *out, const float *input, const tessera_im2col_geometry *g, long start, long end,
                             long firstRow, long endRow) {
    if (firstRow >= endRow || end <= start) return;
    const long width = end - start;
#if defined(__x86_64__)
    if (g->kw == 3 && g->sw == 2 && g->dw == 1 && firstRow == 0 && endRow == g->c * g->kh * 3 &&
        tessera_cpu_has_avx512f()) {
        tessera_im2col_k3s2_avx512(out, input, g, start, end);
        return;
    }
#endif
    // The row's tap, counted up without a division per row (a tile has thousands of rows).
    long channel = firstRow / (g->kh * g->kw), i = (firstRow / g->kw) % g->kh, j = firstRow % g->kw;
    for (long patchRow = firstRow; patchRow < endRow; patchRow++) {
        tessera_im2col_row r;
        r.h = g->h;
        r.w = g->w;
        r.ow = g->ow;
        r.sh = g->sh;
        r.sw = g->sw;
        r.rowOffset = i * g->dh - g->padTop;
        r.columnOffset = j * g->dw - g->padLeft;
        // The output columns x with 0 ≤ x·sw + columnOffset ≤ w − 1, within [0, ow).
        long lo = -tessera_floor_divide(r.columnOffset, g->sw);
        long hi = tessera_floor_divide(g->w - 1 - r.columnOffset, g->sw) + 1;
        if (lo < 0) lo = 0;
        if (lo > g->ow) lo = g->ow;
        if (hi > g->ow) hi = g->ow;
        if (hi < lo) hi = lo;
        r.validLower = lo;
        r.validUpper = hi;
        float *target = out + patchRow * width;
        const float *plane = input + channel * g->h * g->w;
        tessera_im2col_row_f32(target, plane, &r, start, end);
        if (++j == g->kw) {
            j = 0;
            if (++i == g->kh) {
                i = 0;
                channel++;
            }
        }
    }
}

// One input row split into its column phases, every architecture: phase ph's element i is
// row[phases · (i − lead) + ph] (0 outside the row), for i < width; phase ph is written at
// out + ph · phase_stride. A zero prefix, the copy (strided for 2 phases with
// tessera_copy_stride2_f32 where AVX2 runs) and a zero suffix.
void tessera_row_phases_f32(const float *row, long w, long phases, long lead, long width, float *out,
                            long phase_stride) {
    for (long ph = 0; ph < phases; ph++) {
        float *target = out + ph * phase_stride;
        long lo = lead < width ? lead : width;
        long hi = ph < w ? lead + (w - 1 - ph) / phases + 1 : lo;
        if (hi > width) hi = width;
        if (hi < lo) hi = lo;
        if (lo > 0) __builtin_memset(target, 0, (size_t)lo * sizeof(float));
        const float *source = row + phases * (lo - lead) + ph;
        long count = hi - lo;
        if (phases == 1) {
            __builtin_memcpy(target + lo, source, (size_t)count * sizeof(float));
#if defined(__x86_64__)
        } else if (phases == 2 && tessera_cpu_has_avx2_fma()) {
            tessera_copy_stride2_f32(target + lo, source, count);
#endif
        } else {
            for (long i = 0; i < count; i++) target[lo + i] = source[i * phases];
        }
        if (hi < width) __builtin_memset(target + hi, 0, (size_t)(width - hi) * sizeof(float));
    }
}
