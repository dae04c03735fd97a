// How much a channels-in-the-lanes (NHWC) depthwise kernel would give MobileNetV2 over the
// library's NCHW kernels: the measurement behind Architecture.md's "Channels in NCHW, not in
// blocks of 16 (NCHWc)" (figures in Docs/Performance.md, "Depthwise with channels in the
// lanes"). Not part of any build; on an AVX-512 machine, from the repository's root:
//
//   clang -O3 -march=x86-64-v3 -I Sources/CTesseraSIMD/include tools/depthwise_layout.c \
//       Sources/CTesseraSIMD/CTesseraSIMD.c Sources/CTesseraSIMD/CTesseraThreadScratch.c -lm \
//       -o /tmp/depthwise_layout && /tmp/depthwise_layout
//
// For each of MobileNetV2's depthwise shapes after its first (3 × 3, padding 1, ReLU6), one
// thread, whole planes: the library's kernel as the depthwise blocks call it
// (tessera_depthwise_flat_planes_f32 for 7 × 7 planes, else
// tessera_depthwise_strided_planes_f32) against the NHWC kernel below, the fastest of five
// rounds each, and whether the two gave the same bits (they should: the same sums in the same
// order). The last line weighs each shape by how many of MobileNetV2's stages have it.
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CTesseraSIMD.h"

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// A 3 × 3, padding 1 depthwise convolution in NHWC: in [h, w, c], weights [9, c] (tap-major, so a
// vector of 16 channels' weights for one tap is contiguous), out [oh, ow, c]; c a multiple of 16.
// Each output is the bias, then acc + w·x for each tap inside the image in row-major tap order
// (a multiply, then an add: no FMA), then min(max(acc, lo), hi) — the NCHW kernel's sums.
// Four output columns per iteration where their taps are all inside the image, one elsewhere.
__attribute__((target("avx512f"))) static void depthwise_nhwc(const float *in, long h, long w, long c,
                                                              const float *weights, const float *bias, float *out,
                                                              long oh, long ow, long stride, float lo, float hi) {
    const __m512 low = _mm512_set1_ps(lo), high = _mm512_set1_ps(hi);
    for (long y = 0; y < oh; y++) {
        const long top = y * stride - 1;
        for (long channel = 0; channel < c; channel += 16) {
            __m512 k[9];
            for (int t = 0; t < 9; t++) k[t] = _mm512_loadu_ps(weights + t * c + channel);
            const __m512 b = _mm512_loadu_ps(bias + channel);
            for (long x = 0; x < ow;) {
                const long left = x * stride - 1;
                if (left >= 0 && (x + 3) * stride + 1 < w) {
                    __m512 a0 = b, a1 = b, a2 = b, a3 = b;
                    for (int i = 0; i < 3; i++) {
                        const long row = top + i;
                        if (row < 0 || row >= h) continue;
                        const float *p = in + (row * w + left) * c + channel;
                        for (int j = 0; j < 3; j++) {
                            const __m512 kk = k[i * 3 + j];
                            a0 = _mm512_add_ps(a0, _mm512_mul_ps(kk, _mm512_loadu_ps(p + j * c)));
                            a1 = _mm512_add_ps(a1, _mm512_mul_ps(kk, _mm512_loadu_ps(p + (j + stride) * c)));
                            a2 = _mm512_add_ps(a2, _mm512_mul_ps(kk, _mm512_loadu_ps(p + (j + 2 * stride) * c)));
                            a3 = _mm512_add_ps(a3, _mm512_mul_ps(kk, _mm512_loadu_ps(p + (j + 3 * stride) * c)));
                        }
                    }
                    float *o = out + (y * ow + x) * c + channel;
                    _mm512_storeu_ps(o, _mm512_min_ps(_mm512_max_ps(a0, low), high));
                    _mm512_storeu_ps(o + c, _mm512_min_ps(_mm512_max_ps(a1, low), high));
                    _mm512_storeu_ps(o + 2 * c, _mm512_min_ps(_mm512_max_ps(a2, low), high));
                    _mm512_storeu_ps(o + 3 * c, _mm512_min_ps(_mm512_max_ps(a3, low), high));
                    x += 4;
                    continue;
                }
                __m512 acc = b;
                for (int i = 0; i < 3; i++) {
                    const long row = top + i;
                    if (row < 0 || row >= h) continue;
                    for (int j = 0; j < 3; j++) {
                        const long column = left + j;
                        if (column < 0 || column >= w) continue;
                        acc = _mm512_add_ps(
                            acc, _mm512_mul_ps(k[i * 3 + j], _mm512_loadu_ps(in + (row * w + column) * c + channel)));
                    }
                }
                _mm512_storeu_ps(out + (y * ow + x) * c + channel, _mm512_min_ps(_mm512_max_ps(acc, low), high));
                x++;
            }
        }
    }
}

static float uniform(void) { return (float)rand() / (float)RAND_MAX - 0.5f; }

// Floats on a 64-byte boundary, as Tessera's tensor storage is: a 16-lane vector of channels
// then never straddles two cache lines.
static float *floats(long count) { return aligned_alloc(64, (sizeof(float) * count + 63) / 64 * 64); }

int main(void) {
    // Plane size, channels, stride, and how many of MobileNetV2's depthwise stages have the shape.
    const long shapes[][4] = {{112, 96, 2, 1}, {56, 144, 1, 1}, {56, 144, 2, 1}, {28, 192, 1, 2}, {28, 192, 2, 1},
                              {14, 384, 1, 4}, {14, 576, 1, 2}, {14, 576, 2, 1}, {7, 960, 1, 3}};
    double total_nchw = 0, total_nhwc = 0;
    printf("%-26s %6s %18s %18s %8s %s\n", "shape", "stages", "NCHW ms (GFLOP/s)", "NHWC ms (GFLOP/s)", "speedup",
           "bits");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const long size = shapes[s][0], c = shapes[s][1], stride = shapes[s][2], stages = shapes[s][3];
        const long o = (size - 1) / stride + 1;
        float *in = floats(size * size * c), *in_nhwc = floats(size * size * c);
        float *out = floats(o * o * c), *out_nhwc = floats(o * o * c);
        float *weights = floats(9 * c), *weights_nhwc = floats(9 * c), *bias = floats(c);
        for (long i = 0; i < size * size * c; i++) in[i] = uniform();
        for (long i = 0; i < 9 * c; i++) weights[i] = uniform();
        for (long i = 0; i < c; i++) bias[i] = uniform();
        for (long ch = 0; ch < c; ch++) {
            for (long p = 0; p < size * size; p++) in_nhwc[p * c + ch] = in[ch * size * size + p];
            for (int t = 0; t < 9; t++) weights_nhwc[t * c + ch] = weights[ch * 9 + t];
        }
        const tessera_depthwise_geometry g = {size, size, 3, 3, o, o, stride, stride, 1, 1, 1, 1};
        long valid[6];  // per kernel column, the output columns whose input column is inside the plane
        for (int j = 0; j < 3; j++) {
            long first = 0;
            while (first < o && first * stride - 1 + j < 0) first++;
            long end = first;
            while (end < o && end * stride - 1 + j < size) end++;
            valid[2 * j] = first;
            valid[2 * j + 1] = end;
        }
        const int reps = 2e8 / (o * o * c * 9.0) < 20 ? 20 : (int)(2e8 / (o * o * c * 9.0));
        double best_nchw = 1e30, best_nhwc = 1e30;
        for (int round = 0; round < 5; round++) {
            double start = seconds();
            for (int r = 0; r < reps; r++) {
                const int flat = o == size && stride == 1 && o * o <= 64 &&
                                 tessera_depthwise_flat_planes_f32(in, weights, bias, out, 0, c, c, c, 1, &g, 0, 6);
                if (!flat)
                    tessera_depthwise_strided_planes_f32(in, size * size, weights, bias, out, o * o, c, &g, valid, 0,
                                                         6);
            }
            const double middle = seconds();
            for (int r = 0; r < reps; r++)
                depthwise_nhwc(in_nhwc, size, size, c, weights_nhwc, bias, out_nhwc, o, o, stride, 0, 6);
            const double end = seconds();
            if (middle - start < best_nchw) best_nchw = middle - start;
            if (end - middle < best_nhwc) best_nhwc = end - middle;
        }
        long differing = 0;
        for (long ch = 0; ch < c; ch++)
            for (long p = 0; p < o * o; p++) differing += memcmp(&out[ch * o * o + p], &out_nhwc[p * c + ch], 4) != 0;
        const double flops = 2.0 * o * o * c * 9 * reps, nchw = best_nchw / reps * 1e3, nhwc = best_nhwc / reps * 1e3;
        char label[64];
        snprintf(label, sizeof label, "%ld² → %ld², %ld ch, stride %ld", size, o, c, stride);
        printf("%-28s %6ld %8.3f (%5.1f)     %8.3f (%5.1f)     %6.2fx %s\n", label, stages, nchw,
               flops / best_nchw / 1e9, nhwc, flops / best_nhwc / 1e9, nchw / nhwc,
               differing ? "DIFFER" : "same");
        total_nchw += stages * nchw;
        total_nhwc += stages * nhwc;
        free(in), free(in_nhwc), free(out), free(out_nhwc), free(weights), free(weights_nhwc), free(bias);
    }
    printf("all stages: NCHW %.3f ms, NHWC %.3f ms (%.2fx)\n", total_nchw, total_nhwc, total_nchw / total_nhwc);
    return 0;
}
