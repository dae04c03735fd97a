import TesseraCoreVideo
import TesseraImaging
import Testing

@Suite("Pixel buffer conversions")
struct PixelBufferConversionTests {
    static let image = PixelImage(
        width: 3, height: 2, channels: .rgba,
        pixels: [
            10, 20, 30, 255, 40, 50, 60, 255, 70, 80, 90, 255, 100, 110, 120, 255, 130, 140, 150, 255, 160, 170, 180,
            255,
        ])

    @Test(
        "the packed color formats round-trip and place channels as CoreVideo names them",
        arguments: [
            kCVPixelFormatType_32BGRA, kCVPixelFormatType_32ARGB, kCVPixelFormatType_32RGBA, kCVPixelFormatType_24RGB,
        ]
    )
    func packedRoundTrip(_ format: OSType) throws {
        let buffer = try Self.image.pixelBuffer(format: format)
        let first = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
        let expectedFirst: [UInt8] =
            switch format {
            case kCVPixelFormatType_32BGRA: [30, 20, 10, 255]
            case kCVPixelFormatType_32ARGB: [255, 10, 20, 30]
            case kCVPixelFormatType_32RGBA: [10, 20, 30, 255]
            default: [10, 20, 30]
            }
        #expect((0..<expectedFirst.count).map { first[$0] } == expectedFirst)
        #expect(try PixelImage(pixelBuffer: buffer) == Self.image)
    }

    @Test("planar values follow the layout's channel order, scale and bias")
    func planar() throws {
        let buffer = try Self.image.pixelBuffer(format: kCVPixelFormatType_32BGRA)
        let rgb = try PlanarImage.values(of: buffer, layout: .rgb)
        #expect(rgb == [10, 40, 70, 100, 130, 160, 20, 50, 80, 110, 140, 170, 30, 60, 90, 120, 150, 180])
        let bgr = try PlanarImage.values(of: buffer, layout: .bgr, scale: 0.5, bias: [1, 2, 3])
        #expect(Array(bgr.prefix(2)) == [16, 31])
        // The last channel of BGR is red: the last pixel's 160 · 0.5 + 3.
        #expect(Array(bgr.suffix(1)) == [83])
        let gray = try PlanarImage.values(of: buffer, layout: .grayscale)
        // BT.601 luma of (10, 20, 30): 0.299·10 + 0.587·20 + 0.114·30 = 18.19.
        #expect(gray.first == 18)
    }

    @Test("planar values back to a buffer clamp and round like Core ML's 8-bit conversion")
    func clampAndRound() throws {
        let values: [Float] = [-3, 254.6, 300, 0.5, 1.49, 128]
        let buffer = try values.withUnsafeBufferPointer {
            try PlanarImage.pixelBuffer(from: $0, width: 3, height: 2, layout: .grayscale)
        }
        let base = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self)
        let row = CVPixelBufferGetBytesPerRow(buffer)
        #expect([base[0], base[1], base[2], base[row], base[row + 1], base[row + 2]] == [0, 255, 255, 1, 1, 128])
    }

    @Test("4:2:0 Y'CbCr buffers convert through BT.601 within 2 of the RGB they were made from")
    func ycbcr() throws {
        var pixels = [UInt8](repeating: 255, count: 4 * 4 * 4)
        for index in 0..<16 {
            // Flat 2×2 blocks so chroma subsampling loses nothing.
            let block = (index % 4) / 2 + 2 * ((index / 4) / 2)
            pixels[4 * index] = UInt8(40 + 50 * block)
            pixels[4 * index + 1] = UInt8(200 - 30 * block)
            pixels[4 * index + 2] = UInt8(90 + 20 * block)
        }
        let image = PixelImage(width: 4, height: 4, channels: .rgba, pixels: pixels)
        for format in [kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange]
        {
            let back = try PixelImage(pixelBuffer: image.pixelBuffer(format: format))
            let worst = zip(back.pixels, pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 2, "format \(format): \(worst)")
        }
    }
}
