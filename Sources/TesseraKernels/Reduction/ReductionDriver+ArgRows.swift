import CTesseraSIMD

extension ReductionDriver {
    /// `argmax`/`argmin` of float32 in the rows order: for each reduced index, one SIMD pass
    /// over a block of columns compares the row with the best values so far and records the
    /// index where it wins (strictly, so ties keep the first index; a NaN wins over numbers
    /// and is never beaten, as NumPy's rule).
    ///
    /// This is the path of an arg-reduction over a non-innermost axis, e.g. the class axis
    /// of a `[1, 84, 8400]` detection output seen through a transpose.
    static func runArgRows<D: ExtremumDirection>(
        _: D.Type, _ src: UnsafePointer<Float>, _ plan: ReductionPlan, _ dst: UnsafeMutablePointer<Int32>
    ) {
        let width = plan.keptShape.last!
        var outer = plan
        outer.keptShape.removeLast()
        outer.keptStrides.removeLast()
        let outerCount = plan.outputCount / width
        let reducedPositions = ReductionPlan.positions(shape: plan.reducedShape, strides: plan.reducedStrides)
        let block = Swift.min(width, columnBlock)
        let blocks = (width + block - 1) / block
        let cost = ParallelCost.perItem(nanoseconds: Double(plan.reducedCount * block) * 0.15)
        reducedPositions.withUnsafeBufferPointer { reducedPositions in
            parallelFor(count: outerCount * blocks, cost: cost) { items in
                let best = UnsafeMutablePointer<Float>.allocate(capacity: block)
                defer { best.deallocate() }
                for item in items {
                    let row = item / blocks
                    let column = (item % blocks) * block
                    let columns = Swift.min(block, width - column)
                    let base = src + outer.keptPosition(row) + column
                    let out = dst + row * width + column
                    best.update(from: base + reducedPositions[0], count: columns)
                    out.update(repeating: 0, count: columns)
                    for r in 1..<reducedPositions.count {
                        foldArgRow(D.self, base + reducedPositions[r], best, out, Int32(r), columns)
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func foldArgRow<D: ExtremumDirection>(
        _: D.Type, _ p: UnsafePointer<Float>, _ best: UnsafeMutablePointer<Float>,
        _ index: UnsafeMutablePointer<Int32>, _ r: Int32, _ count: Int
    ) {
        if SIMDMath.hasAVX2FMA {
            tessera_arg_fold_f32_avx2(D.isMax ? 1 : 0, p, best, index, r, count)
            return
        }
        let rs = SIMD16<Int32>(repeating: r)
        var j = 0
        while j + 16 <= count {
            let v = UnsafeRawPointer(p + j).loadUnaligned(as: SIMD16<Float>.self)
            var b = UnsafeRawPointer(best + j).loadUnaligned(as: SIMD16<Float>.self)
            var i = UnsafeRawPointer(index + j).loadUnaligned(as: SIMD16<Int32>.self)
            let wins = (D.isMax ? v .> b : v .< b) .| ((v .!= v) .& (b .== b))
            b.replace(with: v, where: wins)
            i.replace(with: rs, where: wins)
            UnsafeMutableRawPointer(best + j).storeBytes(of: b, as: SIMD16<Float>.self)
            UnsafeMutableRawPointer(index + j).storeBytes(of: i, as: SIMD16<Int32>.self)
            j += 16
        }
        while j < count {
            let v = p[j]
            let b = best[j]
            if (D.isMax ? v > b : v < b) || (v.isNaN && !b.isNaN) {
                best[j] = v
                index[j] = r
            }
            j += 1
        }
    }
}
