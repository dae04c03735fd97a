import Foundation
import TesseraTensor

extension CoreMLPackage {
    /// A Float32 weight as a tensor that shares the mapped weight file's memory, without
    /// copying; `nil` when the blob is not Float32 (convert those with
    /// ``WeightFile/floatValues(of:)``).
    ///
    /// A compiled model stores every Float16 constant widened to Float32, so all its float
    /// weights come back this way; the tensor keeps the mapping alive. This is the load path
    /// the compiled format is laid out for: the lowering can adopt weights instead of
    /// converting them.
    ///
    /// `borrowing`: without it the optimizer passed the package to this function owned, and
    /// each of a model's hundreds of constants copied the package's fields to call it.
    ///
    /// - Throws: ``ModelFormatError`` when the reference or its type is invalid.
    package borrowing func mappedFloat32Tensor(for reference: MILBlobReference, type: MILTensorType) throws -> MLTensor?
    {
        let (file, blob) = try blob(for: reference, type: type)
        guard blob.dataType == .float32, let shape = type.shape else { return nil }
        let address: UnsafeRawPointer? = file.data.withUnsafeBytes { buffer in
            buffer.baseAddress.map { UnsafeRawPointer($0 + blob.dataOffset) }
        }
        guard let address, Int(bitPattern: address) % MemoryLayout<Float>.alignment == 0 else { return nil }
        // `Data` made by mapping a file (a package's weight.bin, or a compiled model's
        // section) never moves its bytes; the deallocator holds the file until the tensor goes.
        let array = MLShapedArray<Float>(
            bytesNoCopy: address, shape: shape, deallocator: .custom { _, _ in withExtendedLifetime(file) {} })
        return MLTensor(array)
    }
}
