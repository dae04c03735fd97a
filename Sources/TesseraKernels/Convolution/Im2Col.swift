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
    /// Rows are independent, so they are built in parallel; each is one call of the C
    /// `tessera_im2col_row_f32`: along a row, each output row's segment is a zero prefix, a copy
    /// (a `memcpy` when the stride is 1, two vector loads per vector of every other float when
    /// it is 2) and a zero suffix, with the columns inside the image worked out once per kernel
    /// column rather than per segment.
    static func fill(
        _ columns: UnsafeMutablePointer<Float>, from input: UnsafePointer<Float>, geometry g: ConvGeometry,
        positions: Range<Int>
    ) {
        let width = positions.count
        let taps = g.kh * g.kw
        let p = g.parameters
        // The output columns each kernel column reaches inside the image: the same on every row.
        var valid = [Range<Int>]()
        valid.reserveCapacity(g.kw)
        for j in 0..<g.kw {
            valid.append(
                ConvGeometry.validRange(
                    lower: 0, upper: g.ow, offset: j * p.dilationWidth - p.padLeft, stride: p.strideWidth,
                    extent: g.w))
        }
        valid.withUnsafeBufferPointer { valid in
            parallelFor(count: g.patchSize, cost: .perItem(nanoseconds: Double(width) * 0.25 + 20)) { rows in
                for row in rows {
                    let channel = row / taps
                    let i = (row / g.kw) % g.kh
                    let j = row % g.kw
                    var tap = tessera_im2col_row(
                        h: g.h, w: g.w, ow: g.ow, sh: p.strideHeight, sw: p.strideWidth,
                        rowOffset: i * p.dilationHeight - p.padTop, columnOffset: j * p.dilationWidth - p.padLeft,
                        validLower: valid[j].lowerBound, validUpper: valid[j].upperBound)
                    tessera_im2col_row_f32(
                        columns + row * width, input + channel * g.h * g.w, &tap, positions.lowerBound,
                        positions.upperBound)
                }
            }
        }
    }
}
