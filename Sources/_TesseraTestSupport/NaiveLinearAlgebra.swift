import TesseraKernels

/// Deliberately naive references for the GEMM, convolution and pooling kernels: straight
/// from the definitions, in `Double`, over row-major arrays, with no tiling, no BLAS and
/// none of the kernels' index helpers.
package enum NaiveLinearAlgebra {
    /// `torch.matmul` for rank ≥ 2 operands given as row-major arrays: batch dimensions
    /// broadcast, `[..., M, K] × [..., K, N] → [batch..., M, N]`. Returns the shape and values.
    package static func matmul(_ a: [Double], _ aShape: [Int], _ b: [Double], _ bShape: [Int]) -> ([Int], [Double]) {
        let m = aShape[aShape.count - 2]
        let k = aShape[aShape.count - 1]
        let n = bShape[bShape.count - 1]
        precondition(bShape[bShape.count - 2] == k, "naive matmul: inner dimensions differ")
        let aBatch = Array(aShape.dropLast(2))
        let bBatch = Array(bShape.dropLast(2))
        let batch = StridedLayout.broadcastShape(aBatch, bBatch)!
        var result: [Double] = []
        for index in NaiveLayout.indices(of: batch) {
            let aIndex = broadcastIndex(index, into: aBatch)
            let bIndex = broadcastIndex(index, into: bBatch)
            let aBase = NaiveLayout.linear(aIndex, in: aBatch) * m * k
            let bBase = NaiveLayout.linear(bIndex, in: bBatch) * k * n
            for i in 0..<m {
                for j in 0..<n {
                    var sum = 0.0
                    for p in 0..<k { sum += a[aBase + i * k + p] * b[bBase + p * n + j] }
                    result.append(sum)
                }
            }
        }
        return (batch + [m, n], result)
    }

    /// The index into a (possibly lower-rank, possibly size-1) operand batch shape that a
    /// broadcast batch index reads.
    static func broadcastIndex(_ index: [Int], into shape: [Int]) -> [Int] {
        let lead = index.count - shape.count
        return (0..<shape.count).map { shape[$0] == 1 ? 0 : index[lead + $0] }
    }

    /// Integer matmul with wrapping arithmetic, same rules as ``matmul(_:_:_:_:)``.
    package static func matmulWrapping<T: FixedWidthInteger>(_ a: [T], _ aShape: [Int], _ b: [T], _ bShape: [Int])
        -> [T]
    {
        let m = aShape[aShape.count - 2]
        let k = aShape[aShape.count - 1]
        let n = bShape[bShape.count - 1]
        let aBatch = Array(aShape.dropLast(2))
        let bBatch = Array(bShape.dropLast(2))
        let batch = StridedLayout.broadcastShape(aBatch, bBatch)!
        var result: [T] = []
        for index in NaiveLayout.indices(of: batch) {
            let aBase = NaiveLayout.linear(broadcastIndex(index, into: aBatch), in: aBatch) * m * k
            let bBase = NaiveLayout.linear(broadcastIndex(index, into: bBatch), in: bBatch) * k * n
            for i in 0..<m {
                for j in 0..<n {
                    var sum: T = 0
                    for p in 0..<k { sum = sum &+ a[aBase + i * k + p] &* b[bBase + p * n + j] }
                    result.append(sum)
                }
            }
        }
        return result
    }

    /// PyTorch `conv2d` by its definition: every output element sums its taps one by one.
    package static func conv2d(
        _ x: [Double], _ xShape: [Int], _ w: [Double], _ wShape: [Int], bias: [Double]?, _ p: Conv2DParameters
    ) -> ([Int], [Double]) {
        let (n, c, h, wd) = (xShape[0], xShape[1], xShape[2], xShape[3])
        let (o, cg, kh, kw) = (wShape[0], wShape[1], wShape[2], wShape[3])
        let oh = (h + p.padTop + p.padBottom - p.dilationHeight * (kh - 1) - 1) / p.strideHeight + 1
        let ow = (wd + p.padLeft + p.padRight - p.dilationWidth * (kw - 1) - 1) / p.strideWidth + 1
        let og = o / p.groups
        var out: [Double] = []
        for image in 0..<n {
            for oc in 0..<o {
                let group = oc / og
                for y in 0..<oh {
                    for xx in 0..<ow {
                        var sum = bias?[oc] ?? 0
                        for ci in 0..<cg {
                            for i in 0..<kh {
                                for j in 0..<kw {
                                    let iy = y * p.strideHeight - p.padTop + i * p.dilationHeight
                                    let ix = xx * p.strideWidth - p.padLeft + j * p.dilationWidth
                                    if iy < 0 || iy >= h || ix < 0 || ix >= wd { continue }
                                    let channel = group * cg + ci
                                    sum +=
                                        w[((oc * cg + ci) * kh + i) * kw + j]
                                        * x[((image * c + channel) * h + iy) * wd + ix]
                                }
                            }
                        }
                        out.append(sum)
                    }
                }
            }
        }
        return ([n, o, oh, ow], out)
    }

    /// Max or average pooling by its definition; `outputShape` comes from the caller (the
    /// tests check output sizes separately, against NumPy fixtures).
    package static func pool2d(
        _ x: [Double], _ xShape: [Int], outputShape: [Int], _ p: Pool2DParameters, max: Bool, countIncludePad: Bool
    ) -> [Double] {
        let (n, c, h, w) = (xShape[0], xShape[1], xShape[2], xShape[3])
        let (oh, ow) = (outputShape[2], outputShape[3])
        var out: [Double] = []
        for plane in 0..<(n * c) {
            for y in 0..<oh {
                for xx in 0..<ow {
                    var values: [Double] = []
                    let top = y * p.strideHeight - p.padTop
                    let left = xx * p.strideWidth - p.padLeft
                    for i in 0..<p.kernelHeight {
                        for j in 0..<p.kernelWidth {
                            let iy = top + i * p.dilationHeight
                            let ix = left + j * p.dilationWidth
                            if iy >= 0 && iy < h && ix >= 0 && ix < w { values.append(x[(plane * h + iy) * w + ix]) }
                        }
                    }
                    if max {
                        out.append(values.max() ?? -.infinity)
                    } else if countIncludePad {
                        let bottom = Swift.min(top + p.kernelHeight, h + p.padBottom)
                        let right = Swift.min(left + p.kernelWidth, w + p.padRight)
                        out.append(values.reduce(0, +) / Double((bottom - top) * (right - left)))
                    } else {
                        out.append(values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count))
                    }
                }
            }
        }
        return out
    }
}
