// Tessera's single-precision GEMM micro-kernel over a pre-packed left operand, with the
// convolution epilogue (bias, residual, clamp) applied while each tile is in registers.
#ifndef CTESSERA_GEMM_H
#define CTESSERA_GEMM_H

/// Rows per panel of a packed left operand (the micro-kernel's MR): panel p holds rows
/// [8p, 8p + 8), element (r, k) at panel[k * 8 + r], rows past m as zeros.
#define TESSERA_GEMM_PANEL_ROWS 8

/// What the micro-kernel does to each result before storing it, in this order: add
/// bias[row] (when bias is not NULL), add residual[row * ldr + column] (when residual is not
/// NULL; it must not overlap the result), then min(max(x, lo), hi) with NaN propagating from x
/// (lo and hi must not be NaN; ±infinity for no bound). Pointers are relative to the call's
/// first row and column.
typedef struct {
    const float *bias;
    const float *residual;
    long ldr;
    float lo, hi;
} tessera_gemm_epilogue;

/// The number of floats the packed form of an m × k left operand takes: m rounded up to
/// TESSERA_GEMM_PANEL_ROWS, times k.
long tessera_sgemm_packed_count(long m, long k);

/// Packs the m × k row-major matrix a (row stride lda) into panels (see
/// TESSERA_GEMM_PANEL_ROWS); packed holds tessera_sgemm_packed_count(m, k) floats.
void tessera_sgemm_pack(const float *a, long lda, long m, long k, float *packed);

/// dst[kk * ldd + r] = src[r * lds + kk] for r < 8, kk < k: eight rows of a row-major matrix
/// (row stride lds) laid out column by column, each column's eight values contiguous and the
/// columns ldd apart — a full panel of tessera_sgemm_pack (ldd 8), half a strip of
/// tessera_sgemm_pack_b from a transposed operand (ldd 16). AVX2 (8 × 8 blocks transposed in
/// registers) when the CPU has it, a scalar loop otherwise; only moves, so both give the same bytes.
void tessera_gather_columns8(const float *src, long lds, long k, float *dst, long ldd);

/// tessera_gather_columns8 with the body chosen by the caller (for tests of both): AVX2 when
/// vectorized is non-zero and the CPU has it, else the scalar loop.
void tessera_gather_columns8_variant(int vectorized, const float *src, long lds, long k, float *dst, long ldd);

/// c[i * ldc + j] = epilogue(Σ_k A[i, k] · b[k * ldb + j]) for i < m, j < n, with A the packed
/// operand starting at a panel boundary (packed + (first row) * k for a first row that is a
/// multiple of TESSERA_GEMM_PANEL_ROWS) and each sum accumulated with FMA in k order.
/// AVX-512 (16 columns per vector, 8 rows × 48 columns per tile; a tail of at most 4 columns past
/// the last full tile with the rows in the lanes instead, the same sums) or AVX2 + FMA (8 columns
/// per vector, 4 rows × 24 columns), chosen once with cpuid; columns past n are never read or
/// written. Single-threaded; call only when tessera_cpu_has_avx2_fma() is true. e may be NULL
/// (no epilogue).
void tessera_sgemm_packed(const float *packed, long m, long n, long k, const float *b, long ldb, float *c, long ldc,
                          const tessera_gemm_epilogue *e);

/// Whether tessera_sgemm_packed runs its AVX-512 body (the CPU has AVX-512F and
/// TESSERA_NO_AVX512 is not set).
int tessera_sgemm_has_avx512(void);

/// tessera_sgemm_packed with the body chosen by the caller (for tests of both): AVX-512 when
/// avx512 is non-zero and the CPU has it, else AVX2 + FMA.
void tessera_sgemm_packed_variant(int avx512, const float *packed, long m, long n, long k, const float *b, long ldb,
                                  float *c, long ldc, const tessera_gemm_epilogue *e);

/// A band of `band` output rows of a direct convolution, each n columns:
/// c[i * ldc + t * n + j] = epilogue(Σ_p A[i, p] · rows[t * k + p][j]) for i < m, t < band, j < n,
/// p < k — A packed as for tessera_sgemm_packed, and for output row t the right operand's row p
/// starting at rows[t * k + p] (patch element p's input row, read in place: no im2col); the epilogue's
/// residual is indexed like c. Each sum is the same FMA chain in k order from zero as
/// tessera_sgemm_packed's, so the results are its bits for the same operands. AVX-512 (8 rows ×
/// 48 columns per tile) when tessera_sgemm_has_avx512(), a scalar loop otherwise.
/// Single-threaded; e may be NULL.
void tessera_sgemm_packed_rows(const float *packed, long m, long n, long k, const float *const *rows, long band,
                               float *c, long ldc, const tessera_gemm_epilogue *e);

/// Columns per strip of a packed right operand: strip s holds columns [16s, 16s + 16) of the
/// k × n matrix B, element (kk, j) at strip[kk * 16 + j], columns past n as zeros.
#define TESSERA_GEMM_STRIP_COLUMNS 16

/// The number of floats the packed form of a k × n right operand takes: n rounded up to
/// TESSERA_GEMM_STRIP_COLUMNS, times k.
long tessera_sgemm_packed_b_count(long k, long n);

/// Packs the k × n right operand B into strips (see TESSERA_GEMM_STRIP_COLUMNS): B is b
/// row-major (row stride ldb) when transposed is 0, or b is the n × k matrix Bᵀ row-major (a
/// linear layer's [out, in] weight; row stride ldb) when transposed is non-zero. packed holds
/// tessera_sgemm_packed_b_count(k, n) floats.
void tessera_sgemm_pack_b(const float *b, long ldb, int transposed, long k, long n, float *packed);

/// c[i * ldc + j] = epilogue(Σ_k a[i * lda + k] · B[k, j]) for i < m, j < n, with B packed by
/// tessera_sgemm_pack_b and starting at a strip boundary, each sum accumulated with FMA in k order
/// from zero. The epilogue's bias is per column here (bias[j]); its residual and clamp are as for
/// tessera_sgemm_packed. AVX-512 (8 rows × 48 columns per tile) when
/// tessera_sgemm_packed_b_is_vectorized(), a scalar loop with the same sums otherwise.
/// Single-threaded; e may be NULL.
void tessera_sgemm_packed_b(long m, long n, long k, const float *a, long lda, const float *packed, float *c, long ldc,
                            const tessera_gemm_epilogue *e);

/// Whether tessera_sgemm_packed_b runs its AVX-512 body (the CPU has AVX-512F and AVX2 + FMA, and
/// TESSERA_NO_AVX512 is not set).
int tessera_sgemm_packed_b_is_vectorized(void);

/// The activations a linear layer's product can apply after its epilogue (see
/// tessera_sgemm_packed_b_activated).
enum {
    TESSERA_ACTIVATION_NONE = 0,
    /// x · 0.5 · (erf(x · 0.70710677) + 1): MIL's gelu EXACT.
    TESSERA_ACTIVATION_GELU_ERF = 1,
    /// x · 0.5 · (tanh((x + x · x · x · 0.044715) · 0.7978846) + 1): MIL's gelu TANH_APPROXIMATION.
    TESSERA_ACTIVATION_GELU_TANH = 2,
    /// x · sigmoid(x) (SiLU, swish).
    TESSERA_ACTIVATION_SILU = 3,
};

/// p[i] = f(p[i]) for i < n, f one of the TESSERA_ACTIVATION_ functions, each multiply and add
/// rounded separately in the order written above (no contraction). erf is always
/// tessera_erf_f32_vector's; with AVX2 + FMA, tanh and the logistic are
/// tessera_unary_f32_vector's — the bits of Tessera's element-wise programs computing the same
/// expression; elsewhere libm's tanhf and expf.
void tessera_activation_f32(int activation, float *p, long n);

/// tessera_sgemm_packed_b followed by activation (a TESSERA_ACTIVATION_ value) on each result,
/// applied to each block of eight rows as soon as the micro-kernel has written it (while it is
/// still in cache): c = activation(epilogue(a · B)).
void tessera_sgemm_packed_b_activated(long m, long n, long k, const float *a, long lda, const float *packed, float *c,
                                      long ldc, const tessera_gemm_epilogue *e, int activation);

#endif
