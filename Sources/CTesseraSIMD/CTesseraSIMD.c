// Runtime-dispatched vector kernels: compiled for AVX2 + FMA with per-function target
// attributes (no package-wide compiler flags), called only when the CPU has them.
#include "CTesseraSIMD.h"

#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>

int tessera_cpu_has_avx2_fma(void) {
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    return cached;
}

/// Whether the CPU has AVX-512F as well (the 16-lane versions of the plain loops), unless
/// the environment variable TESSERA_NO_AVX512 is set (for comparing the two widths).
static int tessera_cpu_has_avx512f(void) {
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = tessera_cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f") && !getenv("TESSERA_NO_AVX512");
    }
    return cached;
}

__attribute__((target("avx2,fma"))) static inline __m256 tessera_exp8(__m256 x) {
    const __m256 high = _mm256_set1_ps(88.72283f);
    const __m256 low = _mm256_set1_ps(-87.33654f);
    __m256 v = _mm256_min_ps(_mm256_max_ps(x, low), high);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(v, _mm256_set1_ps(1.442695041f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), v);
    v = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), v);
    __m256 z = _mm256_mul_ps(v, v);
    __m256 y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, v, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, v, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, v, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, v, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, v, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_add_ps(_mm256_fmadd_ps(y, z, v), _mm256_set1_ps(1.0f));
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i half = _mm256_srai_epi32(ni, 1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 scaleA = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    __m256 scaleB = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
    __m256 result = _mm256_mul_ps(_mm256_mul_ps(y, scaleA), scaleB);
    result = _mm256_blendv_ps(result, _mm256_setzero_ps(), _mm256_cmp_ps(x, low, _CMP_LT_OQ));
    result = _mm256_blendv_ps(result, _mm256_set1_ps(__builtin_inff()), _mm256_cmp_ps(x, high, _CMP_GT_OQ));
    result = _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return result;
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
// The same exponential sixteen lanes at a time: every lane goes through the same
// operations as in tessera_exp8, so results are bit-identical.
__attribute__((target("avx512f,avx2,fma"))) static inline __m512 tessera_exp16(__m512 x) {
    const __m512 high = _mm512_set1_ps(88.72283f);
    const __m512 low = _mm512_set1_ps(-87.33654f);
    __m512 v = _mm512_min_ps(_mm512_max_ps(x, low), high);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(v, _mm512_set1_ps(1.442695041f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), v);
    v = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), v);
    __m512 z = _mm512_mul_ps(v, v);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, v, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, v, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, v, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, v, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, v, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_add_ps(_mm512_fmadd_ps(y, z, v), _mm512_set1_ps(1.0f));
    __m512i ni = _mm512_cvtps_epi32(n);
    __m512i half = _mm512_srai_epi32(ni, 1);
    __m512i bias = _mm512_set1_epi32(127);
    __m512 scaleA = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(half, bias), 23));
    __m512 scaleB = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(ni, half), bias), 23));
    __m512 result = _mm512_mul_ps(_mm512_mul_ps(y, scaleA), scaleB);
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, low, _CMP_LT_OQ), result, _mm512_setzero_ps());
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, high, _CMP_GT_OQ), result, _mm512_set1_ps(__builtin_inff()));
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), result, x);
    return result;
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
#define TESSERA_SUM_BODY                                                                        \
    tessera_float16v a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                            \
    long i = 0;                                                                                 \
    for (; i + 64 <= n; i += 64) {                                                              \
        a0 += tessera_load16(p + i);                                                            \
        a1 += tessera_load16(p + i + 16);                                                       \
        a2 += tessera_load16(p + i + 32);                                                       \
        a3 += tessera_load16(p + i + 48);                                                       \
    }                                                                                           \
    for (; i + 16 <= n; i += 16) a0 += tessera_load16(p + i);                                   \
    float tail = 0;                                                                             \
    for (; i < n; i++) tail += p[i];                                                            \
    tessera_float16v v = (a0 + a1) + (a2 + a3);                                                 \
    typedef float f8 __attribute__((ext_vector_type(8)));                                       \
    typedef float f4 __attribute__((ext_vector_type(4)));                                       \
    typedef float f2 __attribute__((ext_vector_type(2)));                                       \
    f8 v8 = v.lo + v.hi;                                                                        \
    f4 v4 = v8.lo + v8.hi;                                                                      \
    f2 v2 = v4.lo + v4.hi;                                                                      \
    return (v2.x + v2.y) + tail;

/// Sixteen floats at any 4-byte-aligned address.
typedef float tessera_float16v_unaligned __attribute__((ext_vector_type(16), aligned(4)));
#define tessera_load16(address) (*(const tessera_float16v_unaligned *)(address))

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

float tessera_exp_shifted_f32_vector(const float *src, float *dst, long n, float shift) {
    return tessera_cpu_has_avx512f() ? tessera_exp_shifted_f32_avx512(src, dst, n, shift)
                                     : tessera_exp_shifted_f32_avx2(src, dst, n, shift);
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
float tessera_sum_f32_vector(const float *p, long n) { (void)p; (void)n; return 0; }
float tessera_exp_shifted_f32_vector(const float *src, float *dst, long n, float shift) {
    (void)src; (void)dst; (void)n; (void)shift;
    return 0;
}
float tessera_exp_shifted_f32_avx2(const float *src, float *dst, long n, float shift) {
    (void)src; (void)dst; (void)n; (void)shift;
    return 0;
}
#endif
