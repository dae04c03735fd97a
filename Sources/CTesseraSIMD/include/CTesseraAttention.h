// Scaled dot-product attention of one head as one fused step: scores, mask, softmax and the
// value product, over blocks of keys with a running (online) softmax, so the full score matrix
// is never stored.
#ifndef CTESSERA_ATTENTION_H
#define CTESSERA_ATTENTION_H

/// Keys per block: the scores of a block of query rows against this many keys, and the block's
/// keys transposed, are all the kernel stores besides the output.
#define TESSERA_ATTENTION_KEY_BLOCK 128

/// One head: out[i, :] = softmax_j(scale · q[i, :] · k[j, :] + mask[i, j]) · v for i < L, j < S.
/// Rows of q (E floats), k (E floats), v (Ev floats), out (Ev floats) are unit-strided and ld*
/// apart. mask may be NULL; otherwise mask[i * ldm + j * mask_column_stride] (ldm 0 repeats one
/// row for every query, mask_column_stride 0 one value for every key). A row whose every score is
/// -infinity gives NaN (0 / 0), as PyTorch does.
typedef struct {
    long L, S, E, Ev;
    const float *q;
    long ldq;
    const float *k;
    long ldk;
    const float *v;
    long ldv;
    const float *mask;
    long ldm;
    long mask_column_stride;
    float scale;
    float *out;
    long ldo;
} tessera_attention_head;

/// The number of floats of scratch tessera_attention_f32 needs for a head of depth E whose values
/// have Ev elements.
long tessera_attention_scratch_count(long E, long Ev);

/// Computes rows [first_row, first_row + rows) of one head's output. scratch holds
/// tessera_attention_scratch_count(h->E, h->Ev) floats (it need not be aligned or initialized).
/// Single-threaded. AVX-512 when tessera_attention_is_vectorized(), else AVX2 + FMA when the CPU
/// has them, else a scalar loop with the same blocking; both compute each row as sum_j exp(s_j - m) · v_j / sum_j exp(s_j - m) with
/// m the running maximum of the row's scores over the key blocks seen so far.
void tessera_attention_f32(const tessera_attention_head *h, long first_row, long rows, float *scratch);

/// tessera_attention_f32 with the body chosen by the caller (for tests of each): vectorized 0 runs
/// the scalar loop, 2 the AVX2 + FMA body (the scalar loop without AVX2 + FMA), 1 the best body
/// the CPU has (as tessera_attention_f32).
void tessera_attention_f32_variant(int vectorized, const tessera_attention_head *h, long first_row, long rows,
                                   float *scratch);

/// Whether tessera_attention_f32 runs its AVX-512 body (the CPU has AVX-512F and AVX2 + FMA, and
/// TESSERA_NO_AVX512 is not set).
int tessera_attention_is_vectorized(void);

#endif
