import CTesseraSIMD
import Foundation

/// The transformed filter of a 3×3 convolution weight for Winograd F(m×m, 3×3): `(m + 2)²`
/// frequencies, each an `O × C` matrix `U_ξ = (G g Gᵀ)_ξ` in the packed micro-kernel's panels
/// (``PackedGEMM``), made once per constant weight (``PreparedWeights/winograd(_:offset:outputChannels:inputChannels:tile:)``)
/// and read by every prediction.
///
/// It takes `(m + 2)² / 9` times the weight's memory: 4× for F(4×4, 3×3), 1.8× for F(2×2, 3×3).
package final class WinogradFilter: @unchecked Sendable {
    // `@unchecked`: the panels are written once, in the initializer, and only read afterwards.
    /// `m`, the output tile's side: 2 or 4.
    package let tile: Int
    /// `O`.
    package let outputChannels: Int
    /// `C`.
    package let inputChannels: Int
    /// The first frequency's first float: in `owner`'s allocation, or in memory it keeps alive.
    private let start: UnsafePointer<Float>
    /// What keeps the filter's memory alive: its ``AlignedBuffer``, or the owner of borrowed
    /// memory (a compiled model's mapped file).
    private let owner: AnyObject

    /// Transforms the contiguous `[O, C, 3, 3]` weight at `weights` for output tiles of
    /// `tile × tile`.
    ///
    /// - Precondition: `tile` is 2 or 4; the channel counts are not negative.
    package init(transforming weights: UnsafePointer<Float>, outputChannels: Int, inputChannels: Int, tile: Int) {
        kernelPrecondition(
            (tile == 2 || tile == 4) && outputChannels >= 0 && inputChannels >= 0,
            "[conv2d] no Winograd F(\(tile), 3) filter for \(outputChannels)×\(inputChannels)×3×3")
        self.tile = tile
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        let buffer = AlignedBuffer(
            unpooledByteCount: Self.byteCount(outputChannels: outputChannels, inputChannels: inputChannels, tile: tile))
        tessera_winograd_transform_filter(
            Int32(tile), weights, outputChannels, inputChannels, buffer.typedPointer(Float.self))
        start = UnsafePointer(buffer.typedPointer(Float.self))
        owner = buffer
    }

    /// A filter already transformed, read in place from memory `keepAlive` keeps alive (a
    /// compiled model's stored form, ``PreparedWeights/register(_:base:keepAlive:)``).
    ///
    /// - Precondition: `tile` is 2 or 4; `filter` holds
    ///   ``byteCount(outputChannels:inputChannels:tile:)`` bytes, 64-byte aligned, that nobody
    ///   writes while `keepAlive` lives.
    package init(
        borrowing filter: UnsafePointer<Float>, outputChannels: Int, inputChannels: Int, tile: Int,
        keepAlive: AnyObject
    ) {
        kernelPrecondition(
            (tile == 2 || tile == 4) && outputChannels >= 0 && inputChannels >= 0,
            "[conv2d] no Winograd F(\(tile), 3) filter for \(outputChannels)×\(inputChannels)×3×3")
        self.tile = tile
        self.outputChannels = outputChannels
        self.inputChannels = inputChannels
        start = filter
        owner = keepAlive
    }

    /// The bytes the transformed filter of an `[O, C, 3, 3]` weight for `tile × tile` output
    /// tiles takes.
    package static func byteCount(outputChannels: Int, inputChannels: Int, tile: Int) -> Int {
        Swift.max(1, tessera_winograd_filter_count(Int32(tile), outputChannels, inputChannels))
            * MemoryLayout<Float>.stride
    }

    /// Floats between consecutive frequencies' panels.
    var frequencyStride: Int { tessera_sgemm_packed_count(outputChannels, inputChannels) }

    /// Frequency `xi`'s packed `O × C` panels.
    func panels(frequency xi: Int) -> UnsafePointer<Float> {
        start + xi * frequencyStride
    }

    /// The first frequency's panels (all of them follow, `frequencyStride` floats apart).
    package var storage: UnsafePointer<Float> { start }

    /// The bytes the transformed filter takes.
    package var byteCount: Int {
        Self.byteCount(outputChannels: outputChannels, inputChannels: inputChannels, tile: tile)
    }
}

/// 3×3, stride-1 convolutions by Winograd's minimal filtering F(m×m, 3×3) (Lavin & Gray 2016):
/// each `m × m` block of output (a *tile*) from the `(m + 2) × (m + 2)` input patch under it as
/// `Y = Aᵀ [Σ_c (G g Gᵀ) ⊙ (Bᵀ d B)] A`, which makes the sum over input channels `(m + 2)²`
/// independent matrix products (one per frequency `ξ`), `M_ξ[O, tiles] = U_ξ[O, C] · V_ξ[C, tiles]`,
/// with `(m + 2)² / m²` multiplies per output and input channel instead of 9: 2.25 for m = 4,
/// 4 for m = 2.
///
/// Per image, the tiles are processed in chunks (so the transformed input `V` and products `M`
/// stay within ``chunkBytes``), each chunk in three parallel steps over the kernel threads: the
/// input transform split by input channels, the products split by frequency (Tessera's packed
/// micro-kernel on the prepared ``WinogradFilter``), the output transform with the epilogue
/// (bias, residual, clamp) split by output channels. The transforms are C (AVX-512, AVX2 + FMA
/// or portable, chosen at run time); the products need AVX2 + FMA (``PackedGEMM/isAvailable``).
enum WinogradConvolution {
    /// The environment variable `TESSERA_WINOGRAD`, for A/B runs (see `Docs/Performance.md`):
    /// `0` turns Winograd off (those convolutions take the im2col path), `2` or `4` makes every
    /// convolution Winograd takes use that tile side.
    static let setting = ProcessInfo.processInfo.environment["TESSERA_WINOGRAD"]

    /// Whether Winograd may run (``setting`` is not `0`).
    static let enabled = setting != "0"

    /// The byte budget of one chunk's transformed input and products together.
    static let chunkBytes = 4 << 20

    /// The output tile side `m` Winograd uses for this convolution, or `nil` when it takes
    /// another path: Winograd needs a 3×3 kernel, stride 1, dilation 1, one group, the packed
    /// micro-kernel, and enough channels to pay for the transforms (see
    /// `Docs/Architecture.md`); F(4×4, 3×3) where that makes at least ``minimumTilesForF4``
    /// tiles per image, F(2×2, 3×3) on smaller planes (ResNet's 7 × 7: 4 tiles of F(4×4, 3×3)
    /// would read the 4× larger filter for a product only 4 columns wide).
    static func tile(_ g: ConvGeometry) -> Int? {
        let p = g.parameters
        guard enabled, PackedGEMM.isAvailable, g.kh == 3, g.kw == 3, p.groups == 1,
            p.strideHeight == 1, p.strideWidth == 1, p.dilationHeight == 1, p.dilationWidth == 1,
            g.c >= minimumChannels, g.o >= minimumChannels, g.oh >= 4, g.ow >= 4
        else { return nil }
        if setting == "2" || setting == "4" { return setting == "2" ? 2 : 4 }
        return ((g.oh + 3) / 4) * ((g.ow + 3) / 4) >= minimumTilesForF4 ? 4 : 2
    }

    /// The fewest input and output channels Winograd takes.
    static let minimumChannels = 16
    /// The fewest F(4×4, 3×3) tiles per image for which that tile is used.
    static let minimumTilesForF4 = 16

    /// Tiles per chunk: at most ``chunkBytes`` of transformed input and products, the plane's
    /// tiles split evenly into as few chunks as that allows, and never a multiple of 128 when
    /// there are more (a row stride of such a power-of-two multiple makes the products' reads of
    /// consecutive rows compete for the same cache sets).
    static func chunkTiles(planeTiles: Int, bytesPerTile: Int) -> Int {
        let most = Swift.max(1, chunkBytes / Swift.max(1, bytesPerTile))
        let chunks = (planeTiles + most - 1) / most
        var chunk = (planeTiles + chunks - 1) / chunks
        if chunks > 1 && chunk % 128 == 0 { chunk -= 8 }
        return Swift.max(1, chunk)
    }

    /// The transformed filter for `g`: `prepared` when it fits, else the weight transformed now.
    static func filter(
        _ g: ConvGeometry, tile: Int, weights: UnsafePointer<Float>, prepared: WinogradFilter?
    ) -> WinogradFilter {
        if let prepared, prepared.tile == tile, prepared.outputChannels == g.o, prepared.inputChannels == g.c {
            return prepared
        }
        return WinogradFilter(transforming: weights, outputChannels: g.o, inputChannels: g.c, tile: tile)
    }

    /// Runs the convolution `g` (for which ``tile(_:)`` returned `filter.tile`) with the
    /// transformed filter.
    static func run(
        _ g: ConvGeometry, input: UnsafePointer<Float>, filter: WinogradFilter, output: UnsafeMutablePointer<Float>,
        epilogue: ConvEpilogue
    ) {
        let m = filter.tile
        let alpha = m + 2
        let frequencies = alpha * alpha
        let tilesHigh = (g.oh + m - 1) / m
        let tilesWide = (g.ow + m - 1) / m
        let planeTiles = tilesHigh * tilesWide
        let bytesPerTile = frequencies * (g.c + g.o) * MemoryLayout<Float>.stride
        let chunk = chunkTiles(planeTiles: planeTiles, bytesPerTile: bytesPerTile)
        let transformed = GEMMKernels.temporary(Float.self, count: frequencies * g.c * chunk)
        let products = GEMMKernels.temporary(Float.self, count: frequencies * g.o * chunk)
        let v = transformed.typedPointer(Float.self)
        let mb = products.typedPointer(Float.self)
        let (lo, hi) = epilogue.clamp.kernelBounds
        let padTop = g.parameters.padTop
        let padLeft = g.parameters.padLeft
        let budget = KernelThreads.coreBudget
        for image in 0..<g.n {
            let x = input + image * g.c * g.h * g.w
            let y = output + image * g.o * g.outputPositions
            let residual = epilogue.residual.map { $0 + image * g.o * g.outputPositions }
            var first = 0
            while first < planeTiles {
                let tiles = Swift.min(chunk, planeTiles - first)
                let transformCost = ParallelCost.perItem(nanoseconds: Double(tiles * frequencies) * 0.6)
                let channelBlock = Swift.max(1, (g.c + 4 * budget - 1) / (4 * budget))
                parallelFor(count: (g.c + channelBlock - 1) / channelBlock, cost: transformCost.scaled(channelBlock)) {
                    range in
                    let c0 = range.lowerBound * channelBlock
                    let c1 = Swift.min(g.c, range.upperBound * channelBlock)
                    tessera_winograd_transform_input(
                        Int32(m), x, g.c, g.h, g.w, padTop, padLeft, tilesWide, first, tiles, c0, c1, v)
                }
                let productCost = ParallelCost.perItem(nanoseconds: Double(g.o * g.c * tiles) * 0.03 + 300)
                parallelFor(count: frequencies, cost: productCost) { range in
                    for xi in range {
                        tessera_sgemm_packed(
                            filter.panels(frequency: xi), g.o, tiles, g.c, v + xi * g.c * tiles, tiles,
                            mb + xi * g.o * tiles, tiles, nil)
                    }
                }
                let outputBlock = Swift.max(1, (g.o + 4 * budget - 1) / (4 * budget))
                parallelFor(count: (g.o + outputBlock - 1) / outputBlock, cost: transformCost.scaled(outputBlock)) {
                    range in
                    let o0 = range.lowerBound * outputBlock
                    let o1 = Swift.min(g.o, range.upperBound * outputBlock)
                    tessera_winograd_transform_output(
                        Int32(m), mb, g.o, o0, o1, tilesWide, first, tiles, g.oh, g.ow, y, epilogue.bias, residual,
                        lo, hi)
                }
                first += tiles
            }
        }
        withExtendedLifetime((transformed, products, filter)) {}
    }
}

extension ParallelCost {
    /// This cost times `factor` items per item.
    fileprivate func scaled(_ factor: Int) -> ParallelCost {
        .perItem(nanoseconds: nanosecondsPerItem * Double(factor))
    }
}
