import TesseraKernels
import Testing

/// Programmer errors trap (each case runs in a child process).
@Suite("Reduction preconditions")
struct ReductionPreconditionTests {
    @Test("reduce traps on a bad axis, an empty max, or a wrong output type")
    func reduceTraps() async {
        await #expect(processExitsWith: .failure) {
            let x: [Float] = [1, 2, 3, 4, 5, 6]
            var out: [Float] = [0, 0]
            x.withUnsafeBytes { input in
                out.withUnsafeMutableBytes { output in
                    ReductionKernels.reduce(
                        .sum, input: input.baseAddress!, layout: StridedLayout(contiguous: [2, 3]), type: .float32,
                        axes: [3], output: output.baseAddress!, outputType: .float32)
                }
            }
        }
        await #expect(processExitsWith: .failure) {
            let x: [Float] = [0]
            var out: [Float] = [0, 0]
            x.withUnsafeBytes { input in
                out.withUnsafeMutableBytes { output in
                    ReductionKernels.reduce(
                        .max, input: input.baseAddress!, layout: StridedLayout(contiguous: [2, 0]), type: .float32,
                        axes: [1], output: output.baseAddress!, outputType: .float32)
                }
            }
        }
        await #expect(processExitsWith: .failure) {
            let x: [Int32] = [1, 2]
            var out: [Int32] = [0]
            x.withUnsafeBytes { input in
                out.withUnsafeMutableBytes { output in
                    ReductionKernels.reduce(
                        .mean, input: input.baseAddress!, layout: StridedLayout(contiguous: [2]), type: .int32,
                        axes: [0], output: output.baseAddress!, outputType: .int32)
                }
            }
        }
    }

    @Test("softmax traps on integer input; scans trap on bool")
    func otherTraps() async {
        await #expect(processExitsWith: .failure) {
            let x: [Int32] = [1, 2]
            var out: [Int32] = [0, 0]
            x.withUnsafeBytes { input in
                out.withUnsafeMutableBytes { output in
                    SoftmaxKernels.softmax(
                        input: input.baseAddress!, layout: StridedLayout(contiguous: [2]), type: .int32, axis: 0,
                        output: output.baseAddress!)
                }
            }
        }
        await #expect(processExitsWith: .failure) {
            let x: [Bool] = [true, false]
            var out: [Bool] = [false, false]
            x.withUnsafeBytes { input in
                out.withUnsafeMutableBytes { output in
                    ScanKernels.cumulativeSum(
                        input: input.baseAddress!, layout: StridedLayout(contiguous: [2]), type: .bool, axis: 0,
                        output: output.baseAddress!)
                }
            }
        }
    }
}
