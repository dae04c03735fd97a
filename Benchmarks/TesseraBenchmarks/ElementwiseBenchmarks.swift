import Foundation
import TesseraKernels

/// A plain single-threaded loop, the baseline the element-wise kernel is measured against.
@inline(never)
func plainAdd(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ c: UnsafeMutablePointer<Float>, _ n: Int) {
    for i in 0..<n { c[i] = a[i] + b[i] }
}

/// Element-wise kernel throughput and the fused-interpreter workloads of workloads.md
/// (T1 normalize, T6 chain100_small, T7 hypot_16M) run on raw buffers.
func runElementwiseBenchmarks() {
    print("\n## Element-wise and fused programs (float32)")
    let n = 16_777_216
    let a = UnsafeMutablePointer<Float>.allocate(capacity: n)
    let b = UnsafeMutablePointer<Float>.allocate(capacity: n)
    let c = UnsafeMutablePointer<Float>.allocate(capacity: n)
    defer {
        a.deallocate()
        b.deallocate()
        c.deallocate()
    }
    var state: UInt32 = 12345
    for i in 0..<n {
        state = state &* 1_664_525 &+ 1_013_904_223
        a[i] = Float(state >> 8) / Float(1 << 23) - 1
        state = state &* 1_664_525 &+ 1_013_904_223
        b[i] = Float(state >> 8) / Float(1 << 23) - 1
    }
    let bytes = Double(3 * n * 4)
    let layout = StridedLayout(contiguous: [n])

    let plain = measure(iterations: 15) { plainAdd(a, b, c, n) }
    report("add 16M, plain single-threaded loop", plain, String(format: "%6.2f GB/s", bytes / plain.median / 1e9))
    let kernel = measure(iterations: 15) {
        ElementwiseKernels.binary(.add, lhs: a, lhsLayout: layout, rhs: b, rhsLayout: layout, type: .float32, output: c)
    }
    report(
        "add 16M, ElementwiseKernels.binary", kernel,
        String(format: "%6.2f GB/s  (%.2fx the plain loop)", bytes / kernel.median / 1e9, plain.median / kernel.median))

    // T7 hypot_16M: sqrt(a*a + b*b) as one fused pass.
    let hypot = FusedProgram(
        computeType: .float32,
        instructions: [
            .input(0), .input(1), .binary(.mul, 0, 0), .binary(.mul, 1, 1), .binary(.add, 2, 3), .unary(.sqrt, 4),
        ],
        outputs: [5])
    let hypotInputs = [
        FusedInput(pointer: a, layout: layout, type: .float32), FusedInput(pointer: b, layout: layout, type: .float32),
    ]
    let hypotTiming = measure(iterations: 15) {
        hypot.run(shape: [n], inputs: hypotInputs, outputs: [FusedOutput(pointer: c, type: .float32)])
    }
    report(
        "T7 hypot_16M, fused program", hypotTiming,
        String(format: "%6.2f GB/s", bytes / hypotTiming.median / 1e9))

    // T1 normalize: (x - mean) / std with per-channel [1,3,1,1] operands.
    let shape = [8, 3, 224, 224]
    let count = shape.reduce(1, *)
    let mean: [Float] = [0.485, 0.456, 0.406]
    let std: [Float] = [0.229, 0.224, 0.225]
    let normalize = FusedProgram(
        computeType: .float32,
        instructions: [.input(0), .input(1), .input(2), .binary(.sub, 0, 1), .binary(.div, 3, 2)], outputs: [4])
    let channel = StridedLayout(contiguous: [1, 3, 1, 1]).broadcast(to: shape)
    let t1 = mean.withUnsafeBufferPointer { m in
        std.withUnsafeBufferPointer { s in
            measure(iterations: 30) {
                normalize.run(
                    shape: shape,
                    inputs: [
                        FusedInput(pointer: a, layout: StridedLayout(contiguous: shape), type: .float32),
                        FusedInput(pointer: m.baseAddress!, layout: channel, type: .float32),
                        FusedInput(pointer: s.baseAddress!, layout: channel, type: .float32),
                    ], outputs: [FusedOutput(pointer: c, type: .float32)])
            }
        }
    }
    report(
        "T1 normalize [8,3,224,224], fused program", t1,
        String(format: "%6.2f GB/s", Double(count * 8) / t1.median / 1e9))

    // T6 chain100_small: 100 times x = x * 1.0001 + 0.0001 on 16 elements, one program.
    var chain: [FusedProgram.Instruction] = [.input(0), .constant(1.0001), .constant(0.0001)]
    var last = 0
    for _ in 0..<100 {
        chain.append(.binary(.mul, last, 1))
        chain.append(.binary(.add, chain.count - 1, 2))
        last = chain.count - 1
    }
    let chainProgram = FusedProgram(computeType: .float32, instructions: chain, outputs: [last])
    let t6 = measure(iterations: 200) {
        chainProgram.run(
            shape: [16], inputs: [FusedInput(pointer: a, layout: StridedLayout(contiguous: [16]), type: .float32)],
            outputs: [FusedOutput(pointer: c, type: .float32)])
    }
    report("T6 chain100_small, fused program", t6, "kernel only; the tensor benchmarks measure the MLTensor path")

    // exp over 16M: the vectorised transcendental path.
    let expTiming = measure(iterations: 10) {
        ElementwiseKernels.unary(.exp, input: a, layout: layout, type: .float32, output: c)
    }
    report("exp 16M", expTiming, String(format: "%6.2f Gelem/s", Double(n) / expTiming.median / 1e9))
    blackHole(c[0])
}
