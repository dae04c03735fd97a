// Vector operations Swift's SIMD types lower to one scalar libm call per lane (square root
// goes through `sqrtf` with its errno check). Clang's element-wise builtins lower to single
// instructions (`sqrtps`) on every x86-64 and arm64 target, so Swift calls these instead.
#ifndef CTESSERA_SIMD_H
#define CTESSERA_SIMD_H

typedef float tessera_float16v __attribute__((ext_vector_type(16)));
typedef double tessera_double16v __attribute__((ext_vector_type(16)));

/// Correctly rounded square root of each lane.
static inline __attribute__((always_inline)) tessera_float16v tessera_sqrt_f32x16(tessera_float16v x) {
    return __builtin_elementwise_sqrt(x);
}

/// Correctly rounded square root of each lane.
static inline __attribute__((always_inline)) tessera_double16v tessera_sqrt_f64x16(tessera_double16v x) {
    return __builtin_elementwise_sqrt(x);
}

/// Tells the CPU this thread is spinning on a flag (x86 `pause`; nothing elsewhere).
static inline __attribute__((always_inline)) void tessera_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

#endif

#ifndef CTESSERA_SIMD_KERNELS_H
#define CTESSERA_SIMD_KERNELS_H
/// Whether this CPU runs the AVX2 + FMA kernels below (checked once with cpuid).
int tessera_cpu_has_avx2_fma(void);

/// dst[i] = exp(src[i] - shift) for i < n (dst may be NULL to only sum); returns the sum of
/// the exponentials. AVX2 + FMA; call only when tessera_cpu_has_avx2_fma() is true. Same
/// algorithm and edge behaviour as SIMDMath.exp: exp(-inf) = 0, exp(+inf) = +inf, NaN stays
/// NaN, results below ~1e-38 flush to 0.
float tessera_exp_shifted_f32_avx2(const float *src, float *dst, long n, float shift);

/// tessera_exp_shifted_f32_avx2 with sixteen lanes per instruction on AVX-512 CPUs (the
/// AVX2 version elsewhere): bit-identical elements and sum. Call only when
/// tessera_cpu_has_avx2_fma() is true.
float tessera_exp_shifted_f32_vector(const float *src, float *dst, long n, float shift);

/// dst[i] = erf(src[i]) for i < n (dst may equal src): Tessera's float32 error function, its
/// one home. An eight-interval degree-7 polynomial of |x| clamped to 4, sixteen lanes per
/// instruction on AVX-512 CPUs, eight on AVX2 + FMA ones, one at a time elsewhere, every width
/// giving the same bits. Within 8.9e-8 of the exact erf for every float (checked exhaustively;
/// the tests hold 1e-7 on 2,000,001 points of [-10, 10]), odd, at most 1 in magnitude, ±1 at
/// ±inf; NaN stays NaN. Any CPU.
void tessera_erf_f32_vector(const float *src, float *dst, long n);

/// tessera_erf_f32_vector at a chosen width (for tests): 16 lanes (AVX-512), 8 (AVX2 + FMA) or
/// 1, the widest at most `lanes` this CPU runs. Returns the lanes used.
int tessera_erf_f32_lanes(const float *src, float *dst, long n, int lanes);

/// The element-wise float32 functions tessera_unary_f32_vector computes.
enum {
    TESSERA_UNARY_ABS = 0,
    TESSERA_UNARY_NEG = 1,
    TESSERA_UNARY_SIGN = 2,
    TESSERA_UNARY_SQUARE = 3,
    TESSERA_UNARY_RECIPROCAL = 4,
    TESSERA_UNARY_RSQRT = 5,
    TESSERA_UNARY_FLOOR = 6,
    TESSERA_UNARY_CEIL = 7,
    TESSERA_UNARY_ROUND = 8,
    TESSERA_UNARY_SIGMOID = 9,
    TESSERA_UNARY_TANH = 10,
};

/// dst[i] = f(src[i]) for i < n (dst may equal src), f one of the TESSERA_UNARY_ functions,
/// sixteen lanes per instruction on AVX-512 CPUs and eight on AVX2 ones (identical results):
/// |x| (−0 gives +0), −x, sign (±1, +0 for ±0, NaN kept), x², 1/x, 1/√x, floor, ceiling,
/// round half to even — each the single IEEE operation — the logistic 1 / (1 + e^{−x}) with
/// tessera_exp_shifted_f32_vector's exp, and tanh (a Taylor polynomial below |x| = 0.4, then
/// 1 − 2 / (e^{2|x|} + 1); within 4e-7 of libm's). NaN stays NaN. Call only when
/// tessera_cpu_has_avx2_fma() is true.
void tessera_unary_f32_vector(int op, const float *src, float *dst, long n);

/// Element-wise float32 arithmetic over a block, sixteen lanes per instruction on AVX-512
/// CPUs and eight on AVX2 ones (chosen once with cpuid). `op` is 0 add, 1 sub, 2 mul, 3 div,
/// 4 NaN-propagating min, 5 max, and the comparisons 6 ==, 7 !=, 8 <, 9 <=, 10 >, 11 >=
/// (1 or 0).
/// `a` or `b` may be NULL to use the scalar `as` or `bs` for every element. Call only when
/// tessera_cpu_has_avx2_fma() is true. Results are the IEEE single-precision results, the
/// same as the 4-lane Swift bodies.
void tessera_binary_f32_vector(int op, const float *a, float as, const float *b, float bs, float *dst, long n);

/// Two of + - * / (op codes 0-3) with scalar operands in one pass: t = p[i] op1 s1 (s1 op1 p[i]
/// when left1 is 0), then dst[i] = t op2 s2 (s2 op2 t when left2 is 0), each operation rounded
/// to single precision as when t is stored between them (no fused multiply-add). dst may be p.
/// Call only when tessera_cpu_has_avx2_fma() is true.
void tessera_binary_pair_f32_vector(int op1, int left1, float s1, int op2, int left2, float s2, const float *p,
                                    float *dst, long n);

/// dst[i] = sqrt(src[i]), correctly rounded, sixteen (AVX-512) or eight (AVX2) lanes per
/// instruction. Call only when tessera_cpu_has_avx2_fma() is true.
void tessera_sqrt_f32_vector(const float *src, float *dst, long n);

/// The sum of p[0..<n], bit-identical to Tessera's Swift `FloatReduction.sum` (same
/// accumulators, same order), with AVX-512 or AVX2 instructions. Call only when
/// tessera_cpu_has_avx2_fma() is true.
float tessera_sum_f32_vector(const float *p, long n);

/// The sum of (p[i] - center)² for i < n: each term is d = p[i] - center, then d * d (no fused
/// multiply-add), summed in tessera_sum_f32_vector's order, so the result is bit-identical to
/// that sum over the squares written out. Call only when tessera_cpu_has_avx2_fma() is true.
float tessera_centered_square_sum_f32_vector(const float *p, long n, float center);

/// The sizes of one depthwise convolution plane: input h × w, kernel kh × kw, output oh × ow,
/// strides sh/sw, top/left padding pt/pl, dilations dh/dw.
typedef struct {
    long h, w, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw;
} tessera_depthwise_geometry;

/// One output plane (oh × ow) of a depthwise convolution from one input plane (h × w) and one
/// kh × kw kernel; valid holds, per kernel column j, the output columns [valid[2j], valid[2j+1])
/// whose input column is inside the image. Each output element is bias, then acc = acc + w·x
/// for each tap inside the image in (i, j) order (no FMA), then min(max(acc, lo), hi) with
/// NaN propagating from acc (lo and hi must not be NaN; pass ±infinity for no bound): the
/// same bits with AVX-512, AVX2 or the scalar fallback (strides above 2). 3 × 3 kernels with
/// dilation 1 and stride 1 or 2 (the same both ways) run input rows outer, each row loaded once
/// per block of columns for every output row it reaches; the others output rows outer. Call only
/// when tessera_cpu_has_avx2_fma() is true.
void tessera_depthwise_plane_f32(const float *in, const float *k, float bias, float *out,
                                 const tessera_depthwise_geometry *g, const long *valid, float lo, float hi);

/// Output planes [first, first + count) of a depthwise convolution, addressed as in
/// tessera_depthwise_flat_planes_f32 (plane p is image p / o, output channel p % o, reading input
/// channel (p % o) / multiplier of c; bias NULL for none), each with the sums and clamp of
/// tessera_depthwise_plane_f32 — the same bits. 3 × 3 kernels with dilation 1 and stride 1 or 2
/// run two planes side by side, plane first + i beside plane first + count / 2 + i (their
/// independent sums keep the vector units busy where one plane's chains of adds leave them
/// waiting; each half of the range is read front to back), the last plane of an odd count alone;
/// other kernels one plane at a time. Returns 1, or 0
/// without writing anything on CPUs without AVX2 + FMA (call only when
/// tessera_cpu_has_avx2_fma() is true).
int tessera_depthwise_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                 long count, long o, long c, long multiplier, const tessera_depthwise_geometry *g,
                                 const long *valid, float lo, float hi);

/// Depthwise planes 0 ..< count of one image with one kernel per plane (multiplier 1): plane p
/// reads in + p · in_stride, kernel k + p · kh · kw and bias[p] (bias NULL for none), and writes
/// out + p · out_stride — planes that lie apart, such as a band of rows of each plane (the
/// geometry's h and oh are then the band's rows). The sums, clamp and bits of
/// tessera_depthwise_plane_f32; 3 × 3 planes run in pairs as in tessera_depthwise_planes_f32.
/// Returns 1, or 0 without writing anything on CPUs without AVX2 + FMA.
int tessera_depthwise_strided_planes_f32(const float *in, long in_stride, const float *k, const float *bias,
                                         float *out, long out_stride, long count,
                                         const tessera_depthwise_geometry *g, const long *valid, float lo,
                                         float hi);

/// The most kernel taps (kh · kw) tessera_depthwise_flat_planes_f32 takes.
#define TESSERA_DW_FLAT_TAPS 25

/// Output planes [first, first + count) of a depthwise convolution (plane p is image p / o,
/// output channel p % o, reading input channel (p % o) / multiplier of c; bias NULL for none)
/// whose planes are small (oh · ow ≤ 64) and keep their size (oh = h, ow = w) at stride 1, with
/// kh · kw ≤ TESSERA_DW_FLAT_TAPS: each plane flattened into at most four 16-lane vectors, the
/// border masks built once per call. The same sums and bits as tessera_depthwise_plane_f32.
/// Returns 0 without writing when it does not run this geometry (no AVX-512, or the geometry does
/// not qualify), 1 otherwise.
int tessera_depthwise_flat_planes_f32(const float *in, const float *k, const float *bias, float *out, long first,
                                      long count, long o, long c, long multiplier,
                                      const tessera_depthwise_geometry *g, float lo, float hi);

/// One output plane of a max pooling (the geometry's kernel is the window; strides, padding and
/// dilations as for a depthwise plane; valid per window column as there): each output folds
/// the window's values inside the image in (i, j) order from -infinity, a value replacing the
/// running one when greater or NaN (a NaN in the window gives a NaN; of equal values the first
/// stays; a window wholly in the padding gives -infinity). Returns 0 without
/// writing when it does not run this geometry (no AVX-512, a window wider than 16, a column
/// stride above 2 or a column dilation), 1 otherwise.
int tessera_maxpool_plane_f32(const float *in, float *out, const tessera_depthwise_geometry *g, const long *valid);

/// dst[i] = src[2 * i] for i < n: the stride-2 rows of im2col. Reads src[0 ..< 2n - 1] only.
/// AVX-512 or AVX2; call only when tessera_cpu_has_avx2_fma() is true.
void tessera_copy_stride2_f32(float *dst, const float *src, long n);

/// What one row of an im2col matrix reads: kernel tap (i, j) of one input plane (h × w) over
/// an output of width ow with strides sh × sw; input row y·sh + rowOffset (rowOffset =
/// i·dh − padTop) and column x·sw + columnOffset (columnOffset = j·dw − padLeft); the output
/// columns [validLower, validUpper) are those whose input column lies inside the image.
typedef struct {
    long h, w, ow, sh, sw, rowOffset, columnOffset, validLower, validUpper;
} tessera_im2col_row;

/// out[p − start] for the output positions p in [start, end) (row-major over the output plane):
/// the input value the tap sees at p, or 0 in the padding. Any architecture; the stride-2
/// copies are vectorised where tessera_cpu_has_avx2_fma() is true.
void tessera_im2col_row_f32(float *out, const float *plane, const tessera_im2col_row *r, long start, long end);

/// A convolution's geometry as im2col reads it: c input planes of h × w (one group's, one
/// image's), a kh × kw kernel with strides sh × sw, dilations dh × dw and the top and left
/// padding, over an output of width ow.
typedef struct {
    long c, h, w, kh, kw, sh, sw, dh, dw, padTop, padLeft, ow;
} tessera_im2col_geometry;

/// Rows [firstRow, endRow) of the im2col matrix of the output positions [start, end) (row-major
/// over the output plane): row (channel · kh + i) · kw + j, at out + row · (end − start), is
/// what tessera_im2col_row_f32 writes for tap (i, j) of that channel's plane — the input value
/// the tap sees at each position, 0 in the padding. Each row is tessera_im2col_row_f32's, the
/// taps counted up without a division per row; a 3-wide kernel at column stride 2 and column
/// dilation 1, all rows asked for, takes an AVX-512 body where the CPU has it instead (per
/// channel, kernel row and output row, 16 positions of all three kernel columns from one masked
/// pair of loads, the padding's lanes masked off, three masked stores). Any architecture; the
/// same values either way.
void tessera_im2col_rows_f32(float *out, const float *input, const tessera_im2col_geometry *g, long start, long end,
                             long firstRow, long endRow);

/// One input row of w floats split into `phases` column phases for a direct convolution: phase ph
/// (written at out + ph · phase_stride, width floats) holds row[phases · (i − lead) + ph] at i, 0
/// where that column is outside the row.
void tessera_row_phases_f32(const float *row, long w, long phases, long lead, long width, float *out,
                            long phase_stride);

/// p[i] = min(max((p[i] + bias) + residual[i], lo), hi) for i < n, without the bias when
/// add_bias is 0 and without the residual when it is NULL (it must not overlap p); the clamp as
/// in tessera_depthwise_plane_f32. Call only when tessera_cpu_has_avx2_fma() is true.
void tessera_conv_epilogue_f32(float *p, const float *residual, long n, int add_bias, float bias, float lo,
                               float hi);

/// One row of a column-wise argmax (is_max != 0) or argmin: where p[i] beats best[i] —
/// strictly, or p[i] is NaN and best[i] is not — best[i] = p[i] and index[i] = r. AVX2.
void tessera_arg_fold_f32_avx2(int is_max, const float *p, float *best, int *index, int r, long n);

/// The first i in [start, n) where p[i] > threshold or p[i] is NaN (above != 0), or where
/// p[i] < threshold (above == 0); n when there is none. AVX2. (The top-k scan skips the
/// elements that cannot enter its heap with it.)
long tessera_find_beyond_f32_avx2(int above, const float *p, long start, long n, float threshold);

/// acc[i] = p[i] where p[i] > acc[i] (is_max != 0; < for min) or p[i] is NaN: the
/// NaN-propagating column-wise max (min) of a row into acc. AVX2.
void tessera_extremum_row_f32_avx2(int is_max, float *acc, const float *p, long n);
#endif

#include "CTesseraGEMM.h"
#include "CTesseraAttention.h"
#include "CTesseraWinograd.h"
#include "CTesseraThreadScratch.h"
