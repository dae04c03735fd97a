import CTesseraSIMD

/// The direct path on Tessera's packed micro-kernel (``ConvolutionRoute/packedRows``): an image
/// model's first convolution, whose few input channels make im2col a copy as large as the
/// product's right operand, multiplies the input rows in place instead.
///
/// For an output row, patch element `(c, i, j)` reads input row `y · sh + i − padTop` of channel
/// `c` at columns `x · sw + j − padLeft`: with a stride of 1 a run of the row; with a stride of 2
/// a run of the row's even or odd columns. So each input row is first split into its `sw` column
/// phases, each with zeros where the padding falls (`sw` planes per channel, about the input's
/// size), and the micro-kernel (``tessera_sgemm_packed_rows``) gets one pointer per patch element
/// into them — or into a row of zeros above and below the image. The sums are the im2col path's
/// FMA chains on the same values, so the results are its bits.
extension ConvolutionKernels {
    /// Whether the direct path takes a convolution of geometry `g` on the packed micro-kernel:
    /// one group, at most four input channels (an image), no dilation, a horizontal stride of 1
    /// or 2 and at least 16 output columns (one vector per tile).
    static func takesPackedRows(_ g: ConvGeometry) -> Bool {
        let p = g.parameters
        return p.groups == 1 && g.c <= 4 && p.dilationHeight == 1 && p.dilationWidth == 1
            && (p.strideWidth == 1 || p.strideWidth == 2) && g.ow >= 16
            && !p.isPointwise(kernelHeight: g.kh, kernelWidth: g.kw)
    }

    /// How the input rows are split for the direct path: `phases` planes per input row of `width`
    /// floats, element `i` of phase `ph` holding input column `phases · (i − lead) + ph` (0 outside
    /// the row), and patch column `j` reading phase `phase[j]` from element `x + shift[j]` for output
    /// column `x`.
    struct RowPhases {
        let phases: Int
        let lead: Int
        let width: Int
        let phase: [Int]
        let shift: [Int]

        init(_ g: ConvGeometry) {
            let s = g.parameters.strideWidth
            var phase: [Int] = []
            var offset: [Int] = []
            for j in 0..<g.kw {
                let d = j - g.parameters.padLeft
                let q = ConvGeometry.floorDivide(d, s)
                phase.append(d - q * s)
                offset.append(q)
            }
            let lead = Swift.max(0, -(offset.min() ?? 0))
            phases = s
            self.lead = lead
            width = g.ow + (offset.max() ?? 0) + lead
            self.phase = phase
            shift = offset.map { $0 + lead }
        }

        /// Floats of one channel's phase planes: `phases` planes of `g.h` rows of ``width``.
        func planeFloats(_ g: ConvGeometry) -> Int { phases * g.h * width }

        /// Splits every row of `channels` consecutive input planes (`g.h × g.w` each, from
        /// `input`) into their phases at `planes` (``planeFloats(_:)`` per plane), in parallel.
        func split(_ g: ConvGeometry, channels: Int, input: UnsafePointer<Float>, planes: UnsafeMutablePointer<Float>) {
            let planeFloats = planeFloats(g)
            parallelFor(count: channels * g.h, cost: .perItem(nanoseconds: Double(width * phases) * 0.5 + 20)) {
                rows in
                for row in rows {
                    let (channel, y) = (row / g.h, row % g.h)
                    tessera_row_phases_f32(
                        input + row * g.w, g.w, phases, lead, width, planes + channel * planeFloats + y * width,
                        g.h * width)
                }
            }
        }

        /// Points the micro-kernel at output rows `outputRows` of one image: `pointers[t · patch +
        /// element]` for the `t`-th row and patch element `(c, i, j)` is the run of phase plane
        /// `planes` it reads, or `zeros` (a row of ``width`` zeros) above and below the image.
        func point(
            _ g: ConvGeometry, outputRows: Range<Int>, planes: UnsafePointer<Float>, zeros: UnsafePointer<Float>,
            pointers: UnsafeMutablePointer<UnsafePointer<Float>?>
        ) {
            let p = g.parameters
            let (patch, planeFloats) = (g.patchSize, planeFloats(g))
            for (t, y) in outputRows.enumerated() {
                for element in 0..<patch {
                    let (channel, i, j) = (element / (g.kh * g.kw), (element / g.kw) % g.kh, element % g.kw)
                    let inputRow = y * p.strideHeight + i - p.padTop
                    let slot = t * patch + element
                    if inputRow < 0 || inputRow >= g.h {
                        pointers[slot] = zeros
                        continue
                    }
                    pointers[slot] = planes + channel * planeFloats + (phase[j] * g.h + inputRow) * width + shift[j]
                }
            }
        }
    }

    /// `c = clamp(W × patches + bias + residual)` for `rows` output rows whose patch rows
    /// ``RowPhases/point(_:outputRows:planes:zeros:pointers:)`` wrote to `pointers`: output
    /// channel `o`'s row `t` at `c + o · ldc + t · OW`, the residual laid out the same way from
    /// its own start (the micro-kernel skips the epilogue when there is none).
    static func packedRowsProduct(
        _ packed: PackedGEMMOperand, _ g: ConvGeometry, pointers: UnsafePointer<UnsafePointer<Float>?>, rows: Int,
        c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>?, residual: UnsafePointer<Float>?,
        clamp: ConvolutionClamp
    ) {
        if bias == nil && residual == nil && clamp.isIdentity {
            tessera_sgemm_packed_rows(packed.panels, g.o, g.ow, g.patchSize, pointers, rows, c, ldc, nil)
            return
        }
        let (lo, hi) = clamp.kernelBounds
        var e = tessera_gemm_epilogue(bias: bias, residual: residual, ldr: ldc, lo: lo, hi: hi)
        tessera_sgemm_packed_rows(packed.panels, g.o, g.ow, g.patchSize, pointers, rows, c, ldc, &e)
    }

    /// `out[n] = epilogue(W × patches(in[n]))` with the patches read from the input rows in place
    /// (see the extension's summary); `packed` is W `[O, C·kH·kW]` in panels. Output rows run in
    /// parallel.
    static func packedRowsConv(
        _ g: ConvGeometry, input: UnsafePointer<Float>, packed: PackedGEMMOperand,
        output: UnsafeMutablePointer<Float>, epilogue: ConvEpilogue
    ) {
        let split = RowPhases(g)
        let planeFloats = split.planeFloats(g)
        // Every channel's phase planes, then one row of zeros for the rows outside the image.
        let buffer = GEMMKernels.temporary(Float.self, count: g.c * planeFloats + split.width)
        let planes = buffer.typedPointer(Float.self)
        let zeros = planes + g.c * planeFloats
        zeros.initialize(repeating: 0, count: split.width)
        let patch = g.patchSize
        let positions = g.outputPositions
        let cost = ParallelCost.perItem(nanoseconds: Double(g.o * patch * g.ow) * 0.025 + 200)
        // Output rows per micro-kernel call: their input rows about 128 KiB (in L2 while every
        // panel of the weight runs along them), at most 8.
        let band = Swift.max(1, Swift.min(8, (128 << 10) / Swift.max(1, patch * g.ow * MemoryLayout<Float>.stride)))
        for image in 0..<g.n {
            split.split(g, channels: g.c, input: input + image * g.c * g.h * g.w, planes: planes)
            let planeOffset = image * g.o * positions
            parallelFor(count: g.oh, cost: cost) { outputRows in
                let pointers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: band * patch)
                defer { pointers.deallocate() }
                for top in stride(from: outputRows.lowerBound, to: outputRows.upperBound, by: band) {
                    let rows = Swift.min(band, outputRows.upperBound - top)
                    split.point(
                        g, outputRows: top..<(top + rows), planes: planes, zeros: zeros, pointers: pointers)
                    let first = planeOffset + top * g.ow
                    packedRowsProduct(
                        packed, g, pointers: pointers, rows: rows, c: output + first, ldc: positions,
                        bias: epilogue.bias, residual: epilogue.residual.map { $0 + first }, clamp: epilogue.clamp)
                }
            }
        }
        withExtendedLifetime(buffer) {}
    }
}
