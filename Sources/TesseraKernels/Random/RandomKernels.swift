import Foundation

/// Random numbers from ``Philox4x32``: uniform and normal floats, uniform integers, and
/// sampling from categorical distributions.
///
/// Every value is a function of the seed and its element index only: element `i` uses the
/// Philox block of counter `i` (uniforms, integers) or `i / 2` (normals, two per block), so
/// results do not depend on threads, and a prefix of a longer tensor with the same seed is
/// the shorter tensor.
package enum RandomKernels {
    /// Fills `output` with `count` uniform doubles in `[0, 1)` built from `bits` random bits
    /// (24 suits float32 and float16, whose conversion then never rounds up to 1; at most 53).
    ///
    /// ```swift
    /// RandomKernels.uniform(seed: 7, count: 4, bits: 24, output: buffer)
    /// ```
    package static func uniform(seed: UInt64, count: Int, bits: Int, output: UnsafeMutablePointer<Double>) {
        kernelPrecondition(bits > 0 && bits <= 53, "[randomUniform] bits must be in 1...53, got \(bits)")
        let philox = Philox4x32(key: seed)
        let scale = 1.0 / Double(UInt64(1) << bits)
        parallelFor(count: count, cost: ParallelCost(nanosecondsPerItem: 8)) { range in
            for i in range {
                let w = philox.block(UInt64(i))
                let word = (UInt64(w[1]) << 32) | UInt64(w[0])
                output[i] = Double(word >> (64 - bits)) * scale
            }
        }
    }

    /// Fills `output` with `count` standard normal doubles (Box–Muller over two uniforms).
    ///
    /// ```swift
    /// RandomKernels.normal(seed: 7, count: 4, output: buffer)
    /// ```
    package static func normal(seed: UInt64, count: Int, output: UnsafeMutablePointer<Double>) {
        let philox = Philox4x32(key: seed)
        let pairs = (count + 1) / 2
        let scale = 1.0 / Double(UInt64(1) << 53)
        parallelFor(count: pairs, cost: ParallelCost(nanosecondsPerItem: 40)) { range in
            for p in range {
                let w = philox.block(UInt64(p))
                // u1 in (0, 1] so the logarithm is finite; u2 in [0, 1).
                let u1 = (Double(((UInt64(w[1]) << 32) | UInt64(w[0])) >> 11) + 1) * scale
                let u2 = Double(((UInt64(w[3]) << 32) | UInt64(w[2])) >> 11) * scale
                let radius = (-2 * Foundation.log(u1)).squareRoot()
                let angle = 2 * Double.pi * u2
                output[2 * p] = radius * Foundation.cos(angle)
                if 2 * p + 1 < count { output[2 * p + 1] = radius * Foundation.sin(angle) }
            }
        }
    }

    /// Fills `output` with `count` integers uniform in `lower...upper` (64 random bits per
    /// value reduced modulo the span: the bias is below 2⁻³²).
    ///
    /// ```swift
    /// RandomKernels.integers(seed: 7, count: 4, lower: 0, upper: 9, output: buffer)
    /// ```
    ///
    /// - Precondition: `lower <= upper`.
    package static func integers(
        seed: UInt64, count: Int, lower: Int64, upper: Int64, output: UnsafeMutablePointer<Int64>
    ) {
        kernelPrecondition(lower <= upper, "[randomUniform] empty range \(lower)...\(upper)")
        let philox = Philox4x32(key: seed)
        let span = UInt64(bitPattern: upper &- lower) &+ 1  // 0 means the full 64-bit range
        parallelFor(count: count, cost: ParallelCost(nanosecondsPerItem: 8)) { range in
            for i in range {
                let w = philox.block(UInt64(i))
                let word = (UInt64(w[1]) << 32) | UInt64(w[0])
                output[i] = lower &+ Int64(bitPattern: span == 0 ? word : word % span)
            }
        }
    }

    /// Draws `samples` category indices per row, with replacement, from non-negative weights.
    ///
    /// `weights` is `rows × categories` contiguous, of a floating-point `type` (probabilities,
    /// or any non-negative weights: each row is normalised by its sum, as `torch.multinomial`);
    /// `output` receives `rows × samples` indices. Sample `s` of row `r` uses the 53-bit
    /// uniform `u` in `[0, 1)` of Philox counter `r * samples + s` and picks the first category
    /// whose running sum (in `Double`) exceeds `u * total`, found by binary search over the
    /// row's running sums: O(categories + samples · log categories) per row, and a zero-weight
    /// category is never drawn. Draws depend on the seed and the element index only, not on
    /// the thread count.
    ///
    /// `lenient` is for weights that come from outside (a model's feature values): a weight
    /// that is negative or not finite (NaN, ±∞) counts as 0, and a row with no positive weight
    /// left (or whose sum overflows `Double`, which only float64 weights can) draws category 0
    /// for every sample. Without it, such weights are a programmer error and trap.
    ///
    /// ```swift
    /// RandomKernels.multinomial(weights: p, type: .float32, rows: 1, categories: 32000,
    ///                           samples: 1, seed: 42, lenient: false, output: out)
    /// ```
    ///
    /// - Precondition: `type` is a floating-point type; unless `lenient`, every weight is
    ///   finite and non-negative and every row has a positive, finite sum.
    package static func multinomial(
        weights: UnsafeRawPointer, type: KernelScalarType, rows: Int, categories: Int, samples: Int, seed: UInt64,
        lenient: Bool, output: UnsafeMutablePointer<Int32>
    ) {
        kernelPrecondition(
            type.isFloatingPoint, "[multinomial] weights must be floating-point, got \(type) [\(rows), \(categories)]")
        let philox = Philox4x32(key: seed)
        let scale = 1.0 / Double(UInt64(1) << 53)
        let cost = ParallelCost(nanosecondsPerItem: Double(categories) * 2 + Double(samples) * 30)
        parallelFor(count: rows, cost: cost) { range in
            let cdf = UnsafeMutablePointer<Double>.allocate(capacity: Swift.max(categories, 1))
            defer { cdf.deallocate() }
            for r in range {
                ScalarConversion.convert(
                    weights + r * categories * type.byteCount, from: type, into: cdf, to: .float64, count: categories)
                var total = 0.0
                for c in 0..<categories {
                    var w = cdf[c]
                    if !(w >= 0 && w.isFinite) {
                        kernelPrecondition(
                            lenient,
                            "[multinomial] weight \(w) at [\(r), \(c)] of [\(rows), \(categories)] is negative or not finite"
                        )
                        w = 0
                    }
                    total += w
                    cdf[c] = total
                }
                let row = output + r * samples
                guard total > 0 && total.isFinite else {
                    kernelPrecondition(
                        lenient,
                        "[multinomial] row \(r) of [\(rows), \(categories)] has no positive weight or its sum "
                            + "overflows (sum \(total))")
                    row.update(repeating: 0, count: samples)
                    continue
                }
                for s in 0..<samples {
                    let w = philox.block(UInt64(r * samples + s))
                    // u < total: the product of a value below 1 and total rounds below total.
                    let u = Double(((UInt64(w[1]) << 32) | UInt64(w[0])) >> 11) * scale * total
                    // First c with cdf[c] > u.
                    var low = 0
                    var high = categories - 1
                    while low < high {
                        let mid = (low + high) / 2
                        if cdf[mid] > u { high = mid } else { low = mid + 1 }
                    }
                    row[s] = Int32(low)
                }
            }
        }
    }
}
