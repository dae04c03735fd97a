import Foundation
import TesseraKernels
import TesseraMultiArray
import TesseraTensor

/// T10 of workloads.md — the MLMultiArray ⇄ MLShapedArray ⇄ MLTensor bridge on [1, 80, 3000]
/// float32, contiguous and transposed, in both directions — and element access on
/// [1, 3, 256, 256]: `NSNumber` subscripts next to the typed buffer-pointer route.
///
/// A transposed multi-array is a [1, 80, 3000] view of time-major [1, 3000, 80] memory
/// (strides [240000, 1, 80]), the layout a model output often has.
func runMultiArrayBenchmarks() {
    print("\n## MLMultiArray bridge (T10, [1, 80, 3000]; GB/s = output bytes / median time)")
    let shape = [1, 80, 3000]
    let count = 80 * 3000
    let values = benchmarkData(count, seed: 10)

    func gbps(_ bytes: Int, _ timing: Timing) -> String {
        String(format: "%7.2f GB/s", Double(bytes) / timing.median / 1e9)
    }

    /// A multi-array over fresh memory holding `values` in storage order.
    func wrap(_ dataType: MLMultiArrayDataType, strides: [Int]) -> MLMultiArray {
        let size = dataType == .float16 ? 2 : 4
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * size, alignment: 64)
        if dataType == .float16 {
            for i in 0..<count { raw.storeBytes(of: Float16(values[i]), toByteOffset: i * 2, as: Float16.self) }
        } else {
            raw.copyMemory(from: values, byteCount: count * 4)
        }
        return try! MLMultiArray(
            dataPointer: raw, shape: shape.map { NSNumber(value: $0) }, dataType: dataType,
            strides: strides.map { NSNumber(value: $0) }, deallocator: { $0.deallocate() })
    }
    let contiguous = wrap(.float32, strides: [240_000, 3000, 1])
    let transposed = wrap(.float32, strides: [240_000, 1, 80])
    let transposedHalves = wrap(.float16, strides: [240_000, 1, 80])

    // Forward: multi-array → shaped array → tensor, ending with the tensor materialized.
    report(
        "T10 fwd contiguous: share (no copy)",
        measure(iterations: 200) { blackHole(MLTensor(MLShapedArray<Float>(contiguous)).materialized()) }, "")
    report(
        "T10 fwd transposed: share (strided view)",
        measure(iterations: 200) { blackHole(MLTensor(MLShapedArray<Float>(transposed)).materialized()) }, "")
    let forward = measure(iterations: 300) {
        blackHole(MLTensor(MLShapedArray<Float>(converting: transposed)).materialized())
    }
    report("T10 fwd transposed → contiguous f32", forward, gbps(count * 4, forward))
    let forwardHalves = measure(iterations: 100) {
        blackHole(MLTensor(MLShapedArray<Float>(converting: transposedHalves)).materialized())
    }
    report("T10 fwd transposed f16 → contiguous f32", forwardHalves, gbps(count * 4, forwardHalves))

    // Back: tensor → shaped array → multi-array.
    let tensor = MLTensor(MLShapedArray<Float>(converting: contiguous)).materialized()
    report(
        "T10 back contiguous: share (no copy)",
        measure(iterations: 200) { blackHole(MLMultiArray(tensor.shapedArray(of: Float.self))) }, "")
    let view = tensor.transposed(permutation: [0, 2, 1])
    report(
        "T10 back transposed: share (strided view)",
        measure(iterations: 200) { blackHole(view.multiArray()) }, "")
    let destination = try! MLMultiArray(shape: [1, 3000, 80], dataType: .float32)
    let back = measure(iterations: 100) { view.multiArray().transfer(to: destination) }
    report("T10 back transposed → contiguous f32", back, gbps(count * 4, back))
    let halves = measure(iterations: 100) { blackHole(tensor.multiArray(dataType: .float16)) }
    report("T10 back f32 → f16 (multiArray(dataType:))", halves, gbps(count * 2, halves))
    let plain = UnsafeMutableRawPointer.allocate(byteCount: count * 4, alignment: 64)
    let source = UnsafeMutableRawPointer.allocate(byteCount: count * 4, alignment: 64)
    memset(source, 1, count * 4)
    let copy = measure(iterations: 100) { memcpy(plain, source, count * 4) }
    report("  memcpy, same bytes", copy, gbps(count * 4, copy))
    // The converters alone, on the same values (memset bytes would be subnormal halves).
    let halfValues = values.map { Float16($0) }
    let widen = measure(iterations: 100) {
        ScalarConversion.convert(halfValues, from: .float16, into: plain, to: .float32, count: count)
    }
    report("  f16 → f32 via kernels ScalarConversion", widen, gbps(count * 4, widen))
    let narrow = measure(iterations: 100) {
        ScalarConversion.convert(values, from: .float32, into: plain, to: .float16, count: count)
    }
    report("  f32 → f16 via kernels ScalarConversion", narrow, gbps(count * 2, narrow))
    let gather = measure(iterations: 100) {
        CopyKernels.copy(
            from: source, layout: StridedLayout(shape: shape, strides: [240_000, 1, 80]), elementSize: 2, to: plain)
    }
    report("  f16 transposed gather (CopyKernels)", gather, gbps(count * 2, gather))
    plain.deallocate()
    source.deallocate()

    // Element access: fill and sum [1, 3, 256, 256] float32 element by element.
    print("\n## MLMultiArray element access ([1, 3, 256, 256] float32: fill, then sum)")
    let image = try! MLMultiArray(shape: [1, 3, 256, 256], dataType: .float32)
    let n = 3 * 256 * 256
    let keyed = measure(warmups: 1, iterations: 10) {
        var sum: Float = 0
        for c in 0..<3 {
            for y in 0..<256 {
                for x in 0..<256 {
                    let key = [0, c, y, x] as [NSNumber]
                    image[key] = NSNumber(value: Float(x))
                    sum += image[key].floatValue
                }
            }
        }
        blackHole(sum)
    }
    report(
        "subscript [NSNumber] (get + set)", keyed, String(format: "%6.1f ns/element", keyed.median / Double(n) * 1e9))
    let linear = measure(warmups: 1, iterations: 10) {
        var sum: Float = 0
        for i in 0..<n {
            image[i] = NSNumber(value: Float(i & 255))
            sum += image[i].floatValue
        }
        blackHole(sum)
    }
    report("subscript Int (get + set)", linear, String(format: "%6.1f ns/element", linear.median / Double(n) * 1e9))
    let typed = measure(iterations: 100) {
        var sum: Float = 0
        image.withUnsafeMutableBufferPointer(ofType: Float.self) { buffer, strides in
            for c in 0..<3 {
                for y in 0..<256 {
                    let row = c * strides[1] + y * strides[2]
                    for x in 0..<256 {
                        buffer[row + x * strides[3]] = Float(x)
                        sum += buffer[row + x * strides[3]]
                    }
                }
            }
        }
        blackHole(sum)
    }
    report(
        "withUnsafeMutableBufferPointer (same loop)", typed,
        String(format: "%6.2f ns/element", typed.median / Double(n) * 1e9))
}
