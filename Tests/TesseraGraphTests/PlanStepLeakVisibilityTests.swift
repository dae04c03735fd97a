import Testing

@testable import TesseraGraph
@testable import TesseraKernels

/// Fuzz finding (`package` target, LeakSanitizer at exit): a plan kept in the plan cache was
/// reported as a direct leak of its `matmul` epilogue's activation-constant array. The plan was
/// alive; the epilogue sat in a payload of the multi-payload `ExecutionPlan.Step` enum, which
/// kept its case in the spare high bits of that array's pointer, so LeakSanitizer did not
/// recognise the pointer. Steps now carry plain integers and the references sit in
/// ``ExecutionPlan/StepTables``.
@Suite("Plan steps keep their references visible to LeakSanitizer")
struct PlanStepLeakVisibilityTests {
    /// The address of a non-empty array's buffer object: its elements start 32 bytes in (the
    /// object header, then count and capacity).
    static func bufferAddress<T>(_ array: [T]) -> UInt {
        array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress!) - 32 }
    }

    /// The value's bytes as words.
    static func words<T>(of value: T) -> [UInt] {
        withUnsafeBytes(of: value) { bytes in
            stride(from: 0, to: bytes.count - bytes.count % 8, by: 8).map {
                bytes.loadUnaligned(fromByteOffset: $0, as: UInt.self)
            }
        }
    }

    @Test("a step is plain data; an epilogue in the tables stores its arrays' pointers unchanged")
    func stepsHoldNoReference() {
        #expect(_isPOD(ExecutionPlan.Step.self), "ExecutionPlan.Step must not carry a reference in a payload")
        let program = FusedProgram(
            computeType: .float32, instructions: [.input(0), .input(1), .binary(.add, 0, 1)], outputs: [2])
        let leaves = [3, 4]
        var epilogue = ExecutionPlan.ConvolutionEpilogue(conv: 1, residual: 2, lower: 3, upper: 4)
        epilogue.activation = .geluExact
        epilogue.activationConstants = [(entry: 5, value: 0.5)]
        epilogue.unfused = (program, leaves)
        let words = Self.words(of: epilogue)
        for address in [Self.bufferAddress(epilogue.activationConstants), Self.bufferAddress(leaves)] {
            #expect(
                words.contains(address), "\(words.map { String($0, radix: 16) }) lacks \(String(address, radix: 16))")
        }
    }
}
