import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing

// Common Core ML multi-array patterns (image pre-processing, strided outputs, `NSNumber`
// subscripts), written the way Core ML code on a Mac writes them; with `import Tessera` instead
// of `import CoreML` they compile and run unchanged.

/// Interleaved RGB bytes into a planar [1, 3, H, W] float tensor in 0...1, through an
/// `MLMultiArray` filled with `NSNumber` subscripts.
private func planarImageTensor(rgb: [UInt8], width: Int, height: Int) throws -> MLTensor {
    let array = try MLMultiArray(shape: [1, 3, NSNumber(value: height), NSNumber(value: width)], dataType: .float32)
    for c in 0..<3 {
        for r in 0..<height {
            for k in 0..<width {
                array[[0, c, r, k] as [NSNumber]] = NSNumber(value: Float(rgb[(r * width + k) * 3 + c]) / 255)
            }
        }
    }
    return MLTensor(array)
}

/// One pixel of a planar image array.
private func pixelValue(_ array: MLMultiArray, channel c: Int, row r: Int, column k: Int) -> Float {
    array[[0, c, r, k] as [NSNumber]].floatValue
}

/// A model output's features as a flat array.
private func features(from output: MLMultiArray) -> [Float] {
    MLShapedArray<Float>(output).scalars
}

/// The classic raw-pointer read: right for contiguous outputs only.
private func floats(from array: MLMultiArray) -> [Float] {
    let pointer = array.dataPointer.bindMemory(to: Float.self, capacity: array.count)
    return Array(UnsafeBufferPointer(start: pointer, count: array.count))
}

@Suite("Seed patterns")
struct SeedPatternTests {
    let width = 5
    let height = 4
    var rgb: [UInt8] { (0..<(5 * 4 * 3)).map { UInt8(($0 * 37) % 256) } }

    @Test("planarImageTensor: NSNumber subscripts fill a planar input the tensor reads")
    func planarImage() async throws {
        let tensor = try planarImageTensor(rgb: rgb, width: width, height: height)
        #expect(tensor.shape == [1, 3, height, width])
        // Independent route: the interleaved bytes as an HWC tensor, permuted to CHW.
        let hwc = MLTensor(shape: [height, width, 3], scalars: rgb.map { Float($0) })
        let expected = await (hwc.transposed(permutation: [2, 0, 1]).expandingShape(at: 0) / 255)
            .shapedArray(of: Float.self)
        let got = await tensor.shapedArray(of: Float.self)
        #expect(got.scalars == expected.scalars)
        let means = await tensor.mean(alongAxes: [2, 3]).shapedArray(of: Float.self).scalars
        for c in 0..<3 {
            var sum: Float = 0
            for p in 0..<(width * height) { sum += Float(rgb[p * 3 + c]) / 255 }
            #expect(abs(means[c] - sum / Float(width * height)) < 1e-6)
        }
    }

    @Test("pixelValue reads the element at [0, c, r, k]")
    func pixel() async throws {
        let tensor = try planarImageTensor(rgb: rgb, width: width, height: height)
        let array = await tensor.multiArray()
        #expect(pixelValue(array, channel: 2, row: 3, column: 1) == Float(rgb[(3 * width + 1) * 3 + 2]) / 255)
        #expect(pixelValue(array, channel: 0, row: 0, column: 0) == Float(rgb[0]) / 255)
    }

    @Test("features(from:) lists a strided output in row-major order (the FluidAudio #730 bug)")
    func featuresOfStridedOutput() throws {
        // A [1, 4, 3] output stored time-major: element [0, f, t] at t * 4 + f.
        let stored: [Float] = (0..<12).map(Float.init)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 48, alignment: 64)
        raw.copyMemory(from: stored, byteCount: 48)
        let output = try MLMultiArray(
            dataPointer: raw, shape: [1, 4, 3], dataType: .float32, strides: [12, 1, 4],
            deallocator: { $0.deallocate() })
        #expect(features(from: output) == [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
        // Reading the memory as if contiguous gives storage order: the classic strided-output bug.
        #expect(floats(from: output) == stored)
    }

    @Test("floats(from:) and features(from:) agree on contiguous outputs")
    func floatsOfContiguousOutput() async throws {
        let output = await (MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float]) * 10).multiArray()
        #expect(floats(from: output) == [10, 20, 30, 40, 50, 60])
        #expect(features(from: output) == floats(from: output))
        #expect(MLShapedArray<Float>(output).scalars == [10, 20, 30, 40, 50, 60])
    }
}
