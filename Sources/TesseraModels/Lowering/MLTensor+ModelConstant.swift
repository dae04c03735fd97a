import Foundation
import TesseraTensor

extension MLTensor {
    /// A model's constant float32 weights as a tensor over memory nobody writes: the values are
    /// copied once into a 64-byte-aligned block the tensor adopts (`bytesNoCopy`), so the kernel
    /// layer may pack them once for the model's lifetime (as it does for a package's mapped
    /// `weight.bin`), where a tensor in Tessera's own reusable buffers is packed per prediction.
    ///
    /// Used for the float32 constants a model makes at load: NeuralNetwork `WeightParams`
    /// (float16 and quantized ones decoded), an ML program's immediate values, its float16
    /// weights widened and its `constexpr_*` weights decompressed.
    ///
    /// - Precondition: `scalars.count` is the product of `shape`.
    static func modelConstant(shape: [Int], scalars: [Float]) -> MLTensor {
        precondition(scalars.count == shape.reduce(1, *), "[modelConstant] \(scalars.count) values for \(shape)")
        let byteCount = Swift.max(scalars.count, 1) * MemoryLayout<Float>.stride
        let memory = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        scalars.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { memory.copyMemory(from: base, byteCount: bytes.count) }
        }
        return MLTensor(
            bytesNoCopy: UnsafeRawBufferPointer(start: memory, count: byteCount), shape: shape,
            scalarType: Float.self, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
