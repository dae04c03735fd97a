// Complete-binary-tree ensemble walk, eight rows per AVX-512 vector (see CTesseraTrees.h).
// Compiled with per-function target attributes and called only when the CPU has AVX-512.
#include "CTesseraTrees.h"

#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>

int tessera_cpu_has_avx512_trees(void) {
    // Threads may race to fill the cache, all with the same value: relaxed atomics.
    static int cached = -1;
    int value = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (value < 0) {
        __builtin_cpu_init();
        value = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx2") && !getenv("TESSERA_NO_AVX512");
        __atomic_store_n(&cached, value, __ATOMIC_RELAXED);
    }
    return value;
}

#define TESSERA_TREES_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"), min_vector_width(512)))

// One level for group g: the node's packed feature and threshold are in `packed` and `limit`;
// gather the rows' values from the feature-major block, compare, and step to child 2p + 1
// (true) or 2p + 2 (false).
#define TESSERA_TREES_STEP(PREDICATE)                                                                        \
    {                                                                                                        \
        __m256i feature = _mm256_srli_epi32(packed, 1);                                                      \
        __mmask8 missing = _mm256_test_epi32_mask(packed, one);                                              \
        __m256i index = _mm256_add_epi32(_mm256_mullo_epi32(feature, stride), lane_offset[g]);               \
        __m512d value = _mm512_i32gather_pd(index, xt, 8);                                                   \
        __mmask8 compared = _mm512_cmp_pd_mask(value, limit, PREDICATE);                                     \
        __mmask8 is_nan = _mm512_cmp_pd_mask(value, value, _CMP_UNORD_Q);                                    \
        __mmask8 goes_true = compared | (is_nan & missing);                                                  \
        __m256i next = _mm256_add_epi32(_mm256_add_epi32(p, p), two);                                        \
        position[g] = _mm256_mask_sub_epi32(next, goes_true, next, one);                                     \
    }

// The walk of one block. The rows are first copied feature-major (`xt[f * rows + r]`), so
// that level 0, where all rows stand on the root, loads eight rows' values with one load.
// Levels 1-3 (nodes 1-14), 4 (nodes 15-30) and 5 (nodes 31-62) look their nodes and
// thresholds up in registers loaded once per tree; deeper levels gather them. Leaves of
// trees up to depth 6 are looked up in registers too.
#define TESSERA_TREES_KERNEL(NAME, PREDICATE)                                                                \
    TESSERA_TREES_TARGET static void NAME(const double *x, long rows, long width, const int32_t *nodes,       \
                                          const double *thresholds, const double *leaves,                    \
                                          const int32_t *node_start, const int32_t *leaf_start,              \
                                          const int32_t *depths, long trees, double *out, double *xt) {      \
        long groups = rows / 8;                                                                              \
        __m512d acc[16];                                                                                     \
        __m256i position[16];                                                                                \
        __m256i lane_offset[16];                                                                             \
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                                     \
        const __m256i one = _mm256_set1_epi32(1);                                                            \
        const __m256i two = _mm256_set1_epi32(2);                                                            \
        const __m256i stride = _mm256_set1_epi32((int)rows);                                                 \
        for (long r = 0; r < rows; r++)                                                                      \
            for (long f = 0; f < width; f++) xt[f * rows + r] = x[r * width + f];                            \
        for (long g = 0; g < groups; g++) {                                                                  \
            acc[g] = _mm512_loadu_pd(out + 8 * g);                                                           \
            lane_offset[g] = _mm256_add_epi32(_mm256_set1_epi32((int)(8 * g)), lanes);                       \
        }                                                                                                    \
        for (long t = 0; t < trees; t++) {                                                                   \
            int depth = depths[t];                                                                           \
            const int32_t *tree_nodes = nodes + node_start[t];                                               \
            const double *tree_thresholds = thresholds + node_start[t];                                      \
            const double *tree_leaves = leaves + leaf_start[t];                                              \
            if (depth > 0) {                                                                                 \
                /* Level 0: every row on the root; its feature's eight values are contiguous. */             \
                int root = tree_nodes[0];                                                                    \
                const double *column = xt + (long)(root >> 1) * rows;                                        \
                __m512d limit = _mm512_set1_pd(tree_thresholds[0]);                                          \
                __mmask8 missing = (root & 1) ? 0xff : 0;                                                    \
                __m256i true_child = one, false_child = two;                                                 \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m512d value = _mm512_loadu_pd(column + 8 * g);                                         \
                    __mmask8 compared = _mm512_cmp_pd_mask(value, limit, PREDICATE);                         \
                    __mmask8 is_nan = _mm512_cmp_pd_mask(value, value, _CMP_UNORD_Q);                        \
                    position[g] = _mm256_mask_blend_epi32(compared | (is_nan & missing), false_child,        \
                                                          true_child);                                       \
                }                                                                                            \
            } else {                                                                                         \
                for (long g = 0; g < groups; g++) position[g] = _mm256_setzero_si256();                      \
            }                                                                                                \
            if (depth > 1) {                                                                                 \
                /* Levels 1-3: nodes 0-15 in registers. */                                                   \
                __m256i nodes_low = _mm256_loadu_si256((const __m256i *)tree_nodes);                         \
                __m256i nodes_high = _mm256_loadu_si256((const __m256i *)(tree_nodes + 8));                  \
                __m512d limits_low = _mm512_loadu_pd(tree_thresholds);                                       \
                __m512d limits_high = _mm512_loadu_pd(tree_thresholds + 8);                                  \
                int last = depth < 4 ? depth : 4;                                                            \
                for (int level = 1; level < last; level++) {                                                 \
                    for (long g = 0; g < groups; g++) {                                                      \
                        __m256i p = position[g];                                                             \
                        __m256i packed = _mm256_permutex2var_epi32(nodes_low, p, nodes_high);                \
                        __m512d limit =                                                                      \
                            _mm512_permutex2var_pd(limits_low, _mm512_cvtepi32_epi64(p), limits_high);       \
                        TESSERA_TREES_STEP(PREDICATE)                                                        \
                    }                                                                                        \
                }                                                                                            \
            }                                                                                                \
            if (depth > 4) {                                                                                 \
                /* Level 4: nodes 15-30 in registers, indexed from 15. */                                    \
                __m256i nodes_low = _mm256_loadu_si256((const __m256i *)(tree_nodes + 15));                  \
                __m256i nodes_high = _mm256_loadu_si256((const __m256i *)(tree_nodes + 23));                 \
                __m512d limits_low = _mm512_loadu_pd(tree_thresholds + 15);                                  \
                __m512d limits_high = _mm512_loadu_pd(tree_thresholds + 23);                                 \
                const __m256i first = _mm256_set1_epi32(15);                                                 \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m256i p = position[g];                                                                 \
                    __m256i q = _mm256_sub_epi32(p, first);                                                  \
                    __m256i packed = _mm256_permutex2var_epi32(nodes_low, q, nodes_high);                    \
                    __m512d limit = _mm512_permutex2var_pd(limits_low, _mm512_cvtepi32_epi64(q), limits_high); \
                    TESSERA_TREES_STEP(PREDICATE)                                                            \
                }                                                                                            \
            }                                                                                                \
            if (depth > 5) {                                                                                 \
                /* Level 5: nodes 31-62 in registers, indexed from 31 (bit 4 picks the half). */             \
                __m512i nodes_low = _mm512_loadu_si512((const void *)(tree_nodes + 31));                     \
                __m512i nodes_high = _mm512_loadu_si512((const void *)(tree_nodes + 47));                    \
                __m512d limits_0 = _mm512_loadu_pd(tree_thresholds + 31);                                    \
                __m512d limits_1 = _mm512_loadu_pd(tree_thresholds + 39);                                    \
                __m512d limits_2 = _mm512_loadu_pd(tree_thresholds + 47);                                    \
                __m512d limits_3 = _mm512_loadu_pd(tree_thresholds + 55);                                    \
                const __m256i first = _mm256_set1_epi32(31);                                                 \
                const __m256i half = _mm256_set1_epi32(16);                                                  \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m256i p = position[g];                                                                 \
                    __m256i q = _mm256_sub_epi32(p, first);                                                  \
                    __m256i packed = _mm512_castsi512_si256(                                                 \
                        _mm512_permutex2var_epi32(nodes_low, _mm512_zextsi256_si512(q), nodes_high));        \
                    __m512i q64 = _mm512_cvtepi32_epi64(q);                                                  \
                    __m512d limit = _mm512_mask_blend_pd(_mm256_test_epi32_mask(q, half),                    \
                                                         _mm512_permutex2var_pd(limits_0, q64, limits_1),    \
                                                         _mm512_permutex2var_pd(limits_2, q64, limits_3));   \
                    TESSERA_TREES_STEP(PREDICATE)                                                            \
                }                                                                                            \
            }                                                                                                \
            for (int level = 6; level < depth; level++) {                                                    \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m256i p = position[g];                                                                 \
                    __m256i packed = _mm256_i32gather_epi32((const int *)tree_nodes, p, 4);                  \
                    __m512d limit = _mm512_i32gather_pd(p, tree_thresholds, 8);                              \
                    TESSERA_TREES_STEP(PREDICATE)                                                            \
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
            } else if (depth <= 6) {                                                                         \
                /* 32 or 64 leaves: four or eight registers, bits 4 and 5 pick among them. */                \
                __m512d l0 = _mm512_loadu_pd(tree_leaves), l1 = _mm512_loadu_pd(tree_leaves + 8);            \
                __m512d l2 = _mm512_loadu_pd(tree_leaves + 16), l3 = _mm512_loadu_pd(tree_leaves + 24);      \
                __m512d l4 = l0, l5 = l1, l6 = l2, l7 = l3;                                                  \
                if (depth == 6) {                                                                            \
                    l4 = _mm512_loadu_pd(tree_leaves + 32), l5 = _mm512_loadu_pd(tree_leaves + 40);          \
                    l6 = _mm512_loadu_pd(tree_leaves + 48), l7 = _mm512_loadu_pd(tree_leaves + 56);          \
                }                                                                                            \
                const __m256i bit4 = _mm256_set1_epi32(16), bit5 = _mm256_set1_epi32(32);                    \
                for (long g = 0; g < groups; g++) {                                                          \
                    __m256i q = _mm256_sub_epi32(position[g], bottom);                                       \
                    __m512i q64 = _mm512_cvtepi32_epi64(q);                                                  \
                    __mmask8 upper = _mm256_test_epi32_mask(q, bit4);                                        \
                    __m512d low = _mm512_mask_blend_pd(upper, _mm512_permutex2var_pd(l0, q64, l1),           \
                                                       _mm512_permutex2var_pd(l2, q64, l3));                 \
                    __m512d value = low;                                                                     \
                    if (depth == 6) {                                                                        \
                        __m512d high = _mm512_mask_blend_pd(upper, _mm512_permutex2var_pd(l4, q64, l5),      \
                                                            _mm512_permutex2var_pd(l6, q64, l7));            \
                        value = _mm512_mask_blend_pd(_mm256_test_epi32_mask(q, bit5), low, high);            \
                    }                                                                                        \
                    acc[g] = _mm512_add_pd(acc[g], value);                                                   \
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
    // The block's rows, feature-major: on the stack when small (32 features x 128 rows is 32 KiB).
    double local[32 * 128];
    double *xt = rows * width <= 32 * 128 ? local : malloc(sizeof(double) * (size_t)(rows * width));
    if (!xt) abort();
    switch (behavior) {
    case 0:
        tessera_complete_trees_le(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out, xt);
        break;
    case 1:
        tessera_complete_trees_lt(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out, xt);
        break;
    case 2:
        tessera_complete_trees_ge(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out, xt);
        break;
    default:
        tessera_complete_trees_gt(x, rows, width, nodes, thresholds, leaves, nodeStart, leafStart, depths, trees, out, xt);
        break;
    }
    if (xt != local) free(xt);
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
