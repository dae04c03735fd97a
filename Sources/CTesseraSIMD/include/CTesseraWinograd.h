// Winograd F(m×m, 3×3) convolution transforms (m = 2 or 4) for Tessera's 3×3, stride-1
// convolutions: the filter transform (done once per constant weight, into the packed panels of
// the GEMM micro-kernel), the input transform and the output transform with the convolution
// epilogue. The per-frequency products between them are tessera_sgemm_packed calls.
#ifndef CTESSERA_WINOGRAD_H
#define CTESSERA_WINOGRAD_H

/// The number of floats the transformed filter of an o × c × 3 × 3 weight takes for output tiles
/// of m × m: (m + 2)² frequencies, each an o × c matrix in the packed panels of
/// tessera_sgemm_pack (tessera_sgemm_packed_count(o, c) floats each, frequency after frequency).
long tessera_winograd_filter_count(int m, long o, long c);

/// Transforms the OIHW weight w (o × c × 3 × 3, contiguous) into U = G g Gᵀ per (output, input)
/// channel pair, computed in double and rounded once, then packs frequency ξ's o × c matrix at
/// packed + ξ · tessera_sgemm_packed_count(o, c). m is 2 or 4.
void tessera_winograd_transform_filter(int m, const float *w, long o, long c, float *packed);

/// Input transform of one image: for channels [c0, c1) of x (channels × h × w, contiguous) and
/// the output tiles [first_tile, first_tile + tiles) (tile t at output row (t / tiles_w) · m,
/// column (t % tiles_w) · m), v[(ξ · channels + ch) · tiles + t'] = (Bᵀ d B)[ξ] where d is the
/// (m + 2) × (m + 2) input patch at row (t / tiles_w) · m - pad_top, column (t % tiles_w) · m -
/// pad_left, with positions outside the image reading as zero.
void tessera_winograd_transform_input(int m, const float *x, long channels, long h, long w, long pad_top,
                                      long pad_left, long tiles_w, long first_tile, long tiles, long c0, long c1,
                                      float *v);

/// Output transform of one image: for output channels [o0, o1) and the tiles [first_tile,
/// first_tile + tiles), y = Aᵀ M A from the products mb[(ξ · outputs + o) · tiles + t'], and each
/// of its values inside the oh × ow plane stored at out[(o · oh + row) · ow + column] after the
/// epilogue: + bias[o] (bias may be NULL), + residual at the same index (may be NULL), then
/// min(max(x, lo), hi) with NaN propagating from x.
void tessera_winograd_transform_output(int m, const float *mb, long outputs, long o0, long o1, long tiles_w,
                                       long first_tile, long tiles, long oh, long ow, float *out, const float *bias,
                                       const float *residual, float lo, float hi);

/// Which body the transforms run: 2 for AVX-512, 1 for AVX2 + FMA, 0 for the portable C loops
/// (chosen once with cpuid; TESSERA_NO_AVX512 set rules out AVX-512).
int tessera_winograd_variant(void);

/// tessera_winograd_transform_filter, tessera_winograd_transform_input and _output with the body
/// chosen by the caller (for tests
/// of every body): variant as tessera_winograd_variant() returns, lowered to what the CPU has.
void tessera_winograd_transform_filter_variant(int variant, int m, const float *w, long o, long c, float *packed);
void tessera_winograd_transform_input_variant(int variant, int m, const float *x, long channels, long h, long w,
                                              long pad_top, long pad_left, long tiles_w, long first_tile, long tiles,
                                              long c0, long c1, float *v);
void tessera_winograd_transform_output_variant(int variant, int m, const float *mb, long outputs, long o0, long o1,
                                               long tiles_w, long first_tile, long tiles, long oh, long ow, float *out,
                                               const float *bias, const float *residual, float lo, float hi);

#endif
