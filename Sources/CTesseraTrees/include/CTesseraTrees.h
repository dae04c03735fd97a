// Tree-ensemble evaluation over complete binary trees (TesseraModels' CompleteTrees layout),
// eight rows per AVX-512 vector.
#ifndef CTESSERA_TREES_H
#define CTESSERA_TREES_H

#include <stdint.h>

/// Whether this CPU runs tessera_complete_trees_f64_avx512 (AVX-512 F, VL and DQ; checked
/// once with cpuid), unless the environment variable TESSERA_NO_AVX512 is set.
int tessera_cpu_has_avx512_trees(void);

/// Adds every tree's leaf value for `rows` rows of `x` (row-major, `width` doubles a row;
/// `rows` a multiple of 8, at most 128) to `out[row]`.
///
/// Tree `t` has depth `depths[t]`; its `2^depth - 1` nodes start at `nodes + nodeStart[t]`
/// (each `feature << 1 | missingGoesTrue`) and `thresholds + nodeStart[t]`, its `2^depth`
/// leaves at `leaves + leafStart[t]`. Node `n`'s children are `2n + 1` (the comparison holds,
/// or the value is NaN and missingGoesTrue) and `2n + 2`. `behavior` is the comparison
/// `value OP threshold`: 0 `<=`, 1 `<`, 2 `>=`, 3 `>`. The three arrays must be readable 16
/// elements past their last tree (the first levels are looked up 16 nodes at a time).
/// Results equal the scalar walk's bit for bit (the same comparisons and additions, in the
/// same order per row). The rows are copied feature-major first (on the stack up to 4,096
/// values, else on the heap). Call only when tessera_cpu_has_avx512_trees() is true.
void tessera_complete_trees_f64_avx512(
    const double *x, long rows, long width, const int32_t *nodes, const double *thresholds, const double *leaves,
    const int32_t *nodeStart, const int32_t *leafStart, const int32_t *depths, long trees, int behavior,
    double *out);

#endif
