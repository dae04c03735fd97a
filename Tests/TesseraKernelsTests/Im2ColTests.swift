import CTesseraSIMD
import Testing

@Suite("Im2col rows")
struct Im2ColTests {
    /// Lengths around the vector widths (8, 16) and a stride-2 first layer's rows (112, 111).
    static let lengths = Array(0...50) + [63, 64, 65, 111, 112]

    @Test("the stride-2 copy takes every other element and writes exactly n", arguments: lengths)
    func strideTwoCopy(_ n: Int) {
        // The source holds exactly the 2n − 1 elements the copy may read.
        let sourceCount = Swift.max(0, 2 * n - 1)
        let source = (0..<sourceCount).map { Float($0) * 0.5 - 7 }
        var destination = [Float](repeating: .nan, count: n + 17)
        let sentinel = Float(bitPattern: 0x7FC0_1234)
        for i in n..<destination.count { destination[i] = sentinel }
        source.withUnsafeBufferPointer { s in
            destination.withUnsafeMutableBufferPointer { d in
                tessera_copy_stride2_f32(d.baseAddress, s.baseAddress, n)
            }
        }
        let copied = (0..<n).allSatisfy { destination[$0].bitPattern == source[2 * $0].bitPattern }
        let untouched = (n..<destination.count).allSatisfy { destination[$0].bitPattern == sentinel.bitPattern }
        #expect(copied, "n \(n)")
        #expect(untouched, "n \(n): wrote past the end")
    }

    /// Geometries for whole tiles: `(c, h, w, kh, kw, sh, sw, dh, dw, padTop, padLeft, padBottom,
    /// padRight)`. 3-wide kernels at column stride 2 and dilation 1 take the AVX-512 tile body
    /// (ResNet-50's stride-2 3 × 3 layers among them); the rest go row by row.
    static let tileGeometries: [[Int]] = [
        [3, 56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1],
        [2, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1],
        [2, 14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1],
        [2, 15, 37, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0],
        [2, 9, 70, 5, 3, 1, 2, 2, 1, 2, 2, 1, 2],
        [1, 5, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1],
        [2, 33, 33, 3, 3, 2, 2, 1, 1, 2, 0, 0, 2],
        [2, 12, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1],
        [2, 12, 13, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0],
        [1, 11, 17, 3, 3, 2, 2, 1, 2, 1, 1, 1, 1],
        [1, 11, 17, 2, 5, 3, 3, 1, 1, 1, 2, 0, 1],
    ]

    @Test("a tile's im2col rows hold each tap's input, 0 in the padding", arguments: tileGeometries)
    func tileRows(_ geometry: [Int]) {
        let (c, h, w, kh, kw, sh, sw, dh, dw) = (
            geometry[0], geometry[1], geometry[2], geometry[3], geometry[4], geometry[5], geometry[6], geometry[7],
            geometry[8]
        )
        let (padTop, padLeft, padBottom, padRight) = (geometry[9], geometry[10], geometry[11], geometry[12])
        let spanHigh = (kh - 1) * dh + 1
        let spanWide = (kw - 1) * dw + 1
        let oh = (h + padTop + padBottom - spanHigh) / sh + 1
        let ow = (w + padLeft + padRight - spanWide) / sw + 1
        // Signed zeros and NaN payloads must come through bit for bit.
        var input = [Float](repeating: 0, count: c * h * w)
        for i in input.indices {
            let value = Float(i) * 0.25 - 9
            if i % 13 == 5 {
                input[i] = -0.0
            } else if i % 17 == 3 {
                input[i] = Float(bitPattern: 0x7FC0_0000 | UInt32(i))
            } else {
                input[i] = value
            }
        }
        let positions = oh * ow
        let rows = c * kh * kw
        var g = tessera_im2col_geometry(
            c: c, h: h, w: w, kh: kh, kw: kw, sh: sh, sw: sw, dh: dh, dw: dw, padTop: padTop, padLeft: padLeft, ow: ow)
        // Whole planes, tiles starting and ending mid-row, single positions.
        var tiles: [Range<Int>] = [0..<positions, 1..<Swift.max(1, positions - 1)]
        tiles.append((positions / 3)..<(positions / 3 + 1))
        for first in stride(from: 0, to: positions, by: 48) { tiles.append(first..<Swift.min(positions, first + 48)) }
        let sentinel = Float(bitPattern: 0x7FC0_4321)
        for tile in tiles where !tile.isEmpty {
            let width = tile.count
            var out = [Float](repeating: sentinel, count: rows * width + 16)
            input.withUnsafeBufferPointer { x in
                out.withUnsafeMutableBufferPointer { o in
                    tessera_im2col_rows_f32(o.baseAddress, x.baseAddress, &g, tile.lowerBound, tile.upperBound, 0, rows)
                }
            }
            var mismatches = 0
            for row in 0..<rows {
                let (channel, i, j) = (row / (kh * kw), (row / kw) % kh, row % kw)
                for (column, p) in tile.enumerated() {
                    let (y, x) = (p / ow, p % ow)
                    let (iy, ix) = (y * sh + i * dh - padTop, x * sw + j * dw - padLeft)
                    let inside = iy >= 0 && iy < h && ix >= 0 && ix < w
                    let expected = inside ? input[(channel * h + iy) * w + ix] : 0
                    if out[row * width + column].bitPattern != expected.bitPattern { mismatches += 1 }
                }
            }
            let untouched = out[(rows * width)...].allSatisfy { $0.bitPattern == sentinel.bitPattern }
            #expect(mismatches == 0, "\(geometry) tile \(tile): \(mismatches) wrong elements")
            #expect(untouched, "\(geometry) tile \(tile): wrote past the matrix")
        }
    }
}
