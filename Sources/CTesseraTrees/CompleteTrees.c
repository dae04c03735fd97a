// Complete-binary-tree ensemble walk, eight rows per AVX-512 vector (see CTesseraTrees.h).
// Compiled with per-function target attributes and called only when the CPU has AVX-512.
#include "CTesseraTrees.h"

#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>

int tessera_cpu_has_avx512_trees(void) {
    static int cached = -1;
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx2") && !getenv("TESSERA_NO_AVX512");
    }
    return cached;
}

#define TESSERA_TREES_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"), min_vector_width(512)))

// One level for group g: the node's packed feature and threshold are in `packed` and `limit`;
// gather the rows' values, compare, and step to child 2p + 1 (true) or 2p + 2 (false).
#define TESSERA_TREES_STEP(PREDICATE)                                                                        \
    {                                                                                                        \
        __m256i feature = _mm256_srli_epi32(packed, 1);                                                      \
        __mmask8 missing = _mm256_test_epi32_mask(packed, one);                                              \
        __m512d value = _mm512_i32gather_pd(_mm256_add_epi32(row_offset[g], feature), x, 8);                 \
        __mmask8 compared = _mm512_cmp_pd_mask(value, limit, PREDICATE);                                     \
        __mmask8 is_nan = _mm512_cmp_pd_mask(value, value, _CMP_UNORD_Q);                                    \
        __mmask8 goes_true = compared | (is_nan & missing);                                                  \
        __m256i next = _mm256_add_epi32(_mm256_add_epi32(p, p), two);                                        \
        position[g] = _mm256_mask_sub_epi32(next, goes_true, next, one);                                     \
    }

#define TESSERA_TREES_KERNEL(NAME, PREDICATE)                                                                \
    TESSERA_TREES_TARGET static void NAME(const double *x, long rows, long width, const int32_t *nodes,       \
                                          const double *thresholds, const double *leaves,                    \
                                          const int32_t *node_start, const int32_t *leaf_start,              \
                                          const int32_t *depths, long trees, double *out) {                  \
        long groups = rows / 8;                                                                              \
        __m512d acc[16];                                                                                     \
        __m256i position[16];                                                                                \
        __m256i row_offset[16];                                                                              \
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                                     \
        const __m256i one = _mm256_set1_epi32(1);                                                            \
        const __m256i two = _mm256_set1_epi32(2);                                                            \
        for (long g = 0; g < groups; g++) {                                                                  \
            acc[g] = _mm512_loadu_pd(out + 8 * g);                                                           \
            row_offset[g] = _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)(8 * g)), lanes),     \
                                               _mm256_set1_epi32((int)width));                               \
        }                                                                                                    \
        for (long t = 0; t < trees; t++) {                                                                   \
            int depth = depths[t];                                                                           \
            const int32_t *tree_nodes = nodes + node_start[t];                                               \
            const double *tree_thresholds = thresholds + node_start[t];                                      \
            const double *tree_leaves = leaves + leaf_start[t];                                              \
            /* Levels 0-3 (nodes 0-14) look their nodes up in registers, 16 at a time. */                    \
            __m256i nodes_low = _mm256_loadu_si256((const __m256i *)tree_nodes);                             \
            __m256i nodes_high = _mm256_loadu_si256((const __m256i *)(tree_nodes + 8));                      \
            __m512d limits_low = _mm512_loadu_pd(tree_thresholds);                                           \
            __m512d limits_high = _mm512_loadu_pd(tree_thresholds + 8);                                      \
            for (long g = 0; g < groups; g++) position[g] = _mm256_setzero_si256();                          \
            for (int level = 0; level < depth; level++) {                                                    \
                if (level < 4) {                                                                             \
                    for (long g = 0; g < groups; g++) {                                                      \
                        __m256i p = position[g];                                                             \
                        __m256i packed = _mm256_permutex2var_epi32(nodes_low, p, nodes_high);                \
                        __m512d limit =                                                                      \
                            _mm512_permutex2var_pd(limits_low, _mm512_cvtepi32_epi64(p), limits_high);       \
                        TESSERA_TREES_STEP(PREDICATE)                                                        \
                    }                                                                                        \
                } else {                                                                                     \
                    for (long g = 0; g < groups; g++) {                                                      \
                        __m256i p = position[g];                                                             \
                        __m256i packed = _mm256_i32gather_epi32((const int *)tree_nodes, p, 4);              \
                        __m512d limit = _mm512_i32gather_pd(p, tree_thresholds, 8);                          \
                        TESSERA_TREES_STEP(PREDICATE)                                                        \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            __m256i bottom = _mm256_set1_epi32((1 << depth) - 1);                                            \
            if (depth <= 4) {                                                                                \
                __m512d leaves_low = _mm512_loadu_pd(tree_leaves);                                           \
                __m512d leaves_high = _mm512_loadu_pd(tree_leaves + 8);                                      \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m512i leaf = _mm512_cvtepi32_epi64(_mm256_sub_epi32(position[g], bottom));             \
                    acc[g] = _mm512_add_pd(acc[g], _mm512_permutex2var_pd(leaves_low, leaf, leaves_high));   \
                }                                                                                            \
            } else {                                                                                         \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m256i leaf = _mm256_sub_epi32(position[g], bottom);                                    \
                    acc[g] = _mm512_add_pd(acc[g], _mm512_i32gather_pd(leaf, tree_leaves, 8));               \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (long g = 0; g < groups; g++) _mm512_storeu_pd(out + 8 * g, acc[g]);                             \
    }

TESSERA_TREES_KERNEL(tessera_complete_trees_le, _CMP_LE_OQ)
TESSERA_TREES_KERNEL(tessera_complete_trees_lt, _CMP_LT_OQ)
TESSERA_TREES_KERNEL(tessera_complete_trees_ge, _CMP_GE_OQ)
TESSERA_TREES_KERNEL(tessera_complete_trees_gt, _CMP_GT_OQ)

void tessera_complete_trees_f64_avx512(const double *x, long rows, long width, const int32_t *nodes,
                                       const double *thresholds, const double *leaves, const int32_t *nodeStart,
                                       const int32_t *leafStart, const int32_t *depths, long trees, int behavior,
                                       double *out) {
    switch (behavior) {
    case 0:
        tessera_complete_trees_le(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out);
        break;
    case 1:
        tessera_complete_trees_lt(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out);
        break;
    case 2:
        tessera_complete_trees_ge(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out);
        break;
    default:
        tessera_complete_trees_gt(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out);
        break;
    }
}

#else

int tessera_cpu_has_avx512_trees(void) { return 0; }

void tessera_complete_trees_f64_avx512(const double *x, long rows, long width, const int32_t *nodes,
                                       const double *thresholds, const double *leaves, const int32_t *nodeStart,
                                       const int32_t *leafStart, const int32_t *depths, long trees, int behavior,
                                       double *out) {
    (void)x, (void)rows, (void)width, (void)nodes, (void)thresholds, (void)leaves, (void)nodeStart;
    (void)leafStart, (void)depths, (void)trees, (void)behavior, (void)out;
    abort();
}

#endif
