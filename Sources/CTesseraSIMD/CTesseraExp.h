// The float32 exponential of eight and sixteen lanes, shared by the softmax kernels
// (CTesseraSIMD.c) and the fused attention (CTesseraAttention.c): x = n·ln 2 + r with a
// two-part ln 2, e^r as 1 + r + r²·p(r) with p of degree 5, then times 2^n; x below -87.34
// gives 0, above 88.72 infinity, NaN stays NaN. Private to the CTesseraSIMD target (not under
// include/).
#ifndef CTESSERA_EXP_H
#define CTESSERA_EXP_H

#if defined(__x86_64__)
#include <immintrin.h>

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

// The same exponential sixteen lanes at a time: every lane goes through tessera_exp8's
// operations up to the polynomial; 2^n is then one scalef, where tessera_exp8 multiplies by
// 2^(n/2) twice. The first of those products is exact and the second rounds once, as scalef
// does, so the results are bit-identical (checked over all 2^32 inputs).
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
    __m512 result = _mm512_scalef_ps(y, n);
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, low, _CMP_LT_OQ), result, _mm512_setzero_ps());
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, high, _CMP_GT_OQ), result, _mm512_set1_ps(__builtin_inff()));
    result = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), result, x);
    return result;
}

#endif
#endif
