import Testing

@testable import TesseraKernels

/// Fuzz finding (`package` target, LeakSanitizer): every fused plan kept in a graph's plan cache
/// was reported as a direct leak of its strided inputs' stride arrays. The plans were alive; the
/// arrays sat in a `FusedInputAccess.strided` payload beside `Int`-only cases, so the enum kept
/// its case in the array pointer's spare bits and LeakSanitizer did not recognise the pointer.
/// The strides now live in ``FusedPlan/inputStrides``, outside the enum.
@Suite("Fused plans stay visible to LeakSanitizer")
struct FusedPlanLeakVisibilityTests {
    @Test("an input's access is plain data; a strided input's strides are kept in the plan")
    func accessHoldsNoReference() {
        #expect(_isPOD(FusedInputAccess.self), "FusedInputAccess must not carry a reference in a payload")
        // a [3, 4] plus a column [3, 1] broadcast along rows: the column is read with strides [1, 0].
        let program = FusedProgram(
            computeType: .float32, instructions: [.input(0), .input(1), .binary(.add, 0, 1)], outputs: [2])
        var a = [Float](repeating: 1, count: 12)
        var b: [Float] = [10, 20, 30]
        var c = [Float](repeating: 0, count: 12)
        a.withUnsafeMutableBufferPointer { a in
            b.withUnsafeMutableBufferPointer { b in
                c.withUnsafeMutableBufferPointer { c in
                    let inputs = [
                        FusedInput(pointer: a.baseAddress!, layout: StridedLayout(contiguous: [3, 4]), type: .float32),
                        FusedInput(
                            pointer: b.baseAddress!, layout: StridedLayout(contiguous: [3, 1]).broadcast(to: [3, 4]),
                            type: .float32),
                    ]
                    let outputs = [FusedOutput(pointer: c.baseAddress!, type: .float32)]
                    let plan = FusedPlan(
                        program: program, computeScalarType: .float32, shape: [3, 4], inputs: inputs,
                        outputs: outputs, overlaps: false)
                    #expect(plan.inputStrides[0].isEmpty)
                    #expect(plan.access[1].isStrided)
                    #expect(plan.inputStrides[1] == [1, 0])
                    program.run(shape: [3, 4], inputs: inputs, outputs: outputs, memo: FusedPlanMemo())
                }
            }
        }
        #expect(c == [11, 11, 11, 11, 21, 21, 21, 21, 31, 31, 31, 31])
    }
}
