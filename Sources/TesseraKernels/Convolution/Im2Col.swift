import CTesseraSIMD

/// Unrolls convolution patches into the column matrix the im2col GEMM multiplies.
///
/// Row `r = (c·kH + i)·kW + j` of the matrix holds, for each output position `p` of the
/// tile, the input value kernel tap `(c, i, j)` sees at `p` (0 in the padding). That is the
/// NCHW-natural layout: `W[O/g, C/g·kH·kW] × cols[C/g·kH·kW, tile]` is the output tile of
/// every channel with no transposes.
enum Im2Col {
    /// Fills `columns` (`patchSize × positions.count`, row-major) for the output positions
    /// `positions` of one image and group whose `C/g` input planes start at `input`.
    ///
    /// Rows are independent, so they are built in parallel; along a row, each output row's
    /// segment is a zero prefix, a copy (a `memcpy` when the stride is 1, two vector loads per
    /// vector of every other float when it is 2) and a zero suffix.
    static func fill(
        _ columns: UnsafeMutablePointer<Float>, from input: UnsafePointer<Float>, geometry g: ConvGeometry,
        positions: Range<Int>
    ) {
        let width = positions.count
        let taps = g.kh * g.kw
        parallelFor(count: g.patchSize, cost: .perItem(nanoseconds: Double(width) * 0.25 + 20)) { rows in
            for row in rows {
                let channel = row / taps
                let i = (row / g.kw) % g.kh
                let j = row % g.kw
                fillRow(
                    columns + row * width, plane: input + channel * g.h * g.w, tapRow: i, tapColumn: j, geometry: g,
                    positions: positions)
            }
        }
    }

    /// One row of the column matrix: kernel tap `(tapRow, tapColumn)` over `positions`.
    @inline(__always)
    static func fillRow(
        _ destination: UnsafeMutablePointer<Float>, plane: UnsafePointer<Float>, tapRow: Int, tapColumn: Int,
        geometry g: ConvGeometry, positions: Range<Int>
    ) {
        let p = g.parameters
        let columnOffset = tapColumn * p.dilationWidth - p.padLeft
        var position = positions.lowerBound
        var out = destination
        while position < positions.upperBound {
            let y = position / g.ow
            let x0 = position % g.ow
            let x1 = Swift.min(g.ow, x0 + (positions.upperBound - position))
            let length = x1 - x0
            let inputRow = y * p.strideHeight - p.padTop + tapRow * p.dilationHeight
            if inputRow < 0 || inputRow >= g.h {
                out.update(repeating: 0, count: length)
            } else {
                let source = plane + inputRow * g.w
                let valid = ConvGeometry.validRange(
                    lower: x0, upper: x1, offset: columnOffset, stride: p.strideWidth, extent: g.w)
                if valid.lowerBound > x0 { out.update(repeating: 0, count: valid.lowerBound - x0) }
                let copied = out + (valid.lowerBound - x0)
                if p.strideWidth == 1 {
                    copied.update(from: source + valid.lowerBound + columnOffset, count: valid.count)
                } else if p.strideWidth == 2 && SIMDMath.hasAVX2FMA {
                    tessera_copy_stride2_f32(copied, source + valid.lowerBound * 2 + columnOffset, valid.count)
                } else {
                    let stride = p.strideWidth
                    var x = valid.lowerBound
                    var input = source + x * stride + columnOffset
                    var target = copied
                    while x < valid.upperBound {
                        target.pointee = input.pointee
                        target += 1
                        input += stride
                        x += 1
                    }
                }
                if valid.upperBound < x1 {
                    (out + (valid.upperBound - x0)).update(repeating: 0, count: x1 - valid.upperBound)
                }
            }
            out += length
            position += length
        }
    }
}
