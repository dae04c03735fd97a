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
    /// Blocks of rows are built in parallel (inside a parallel task, as the packed im2col path
    /// calls it, the whole tile on the calling thread), each block one call of the C
    /// `tessera_im2col_rows_f32`: along a row, each output row's segment is a zero prefix, a copy
    /// (a `memcpy` at column stride 1, a vector copy of every other float at 2) and a zero suffix;
    /// a 3-wide kernel at column stride 2 with AVX-512 fills the whole tile instead, per channel,
    /// kernel row and output row: 16 positions of all three kernel columns from one masked pair of
    /// loads, the padding's lanes masked off.
    static func fill(
        _ columns: UnsafeMutablePointer<Float>, from input: UnsafePointer<Float>, geometry g: ConvGeometry,
        positions: Range<Int>
    ) {
        let p = g.parameters
        var geometry = tessera_im2col_geometry(
            c: g.cg, h: g.h, w: g.w, kh: g.kh, kw: g.kw, sh: p.strideHeight,
            sw: p.strideWidth, dh: p.dilationHeight, dw: p.dilationWidth, padTop: p.padTop, padLeft: p.padLeft,
            ow: g.ow)
        let width = positions.count
        withUnsafePointer(to: &geometry) { geometry in
            parallelFor(count: g.patchSize, cost: .perItem(nanoseconds: Double(width) * 0.25 + 20)) { rows in
                tessera_im2col_rows_f32(
                    columns, input, geometry, positions.lowerBound, positions.upperBound, rows.lowerBound,
                    rows.upperBound)
            }
        }
    }
}
