import Testing

@testable import TesseraGraph
@testable import TesseraKernels

/// Inside a checking scope a node whose rule fails records the rule's message and becomes a
/// zero placeholder that later nodes and the executor handle without crashing.
@Suite("Graph shape-check scope")
struct ShapeChecksTests {
    @Test("a conv2d bias of the wrong length is recorded, not trapped")
    func convBias() {
        let input = constant([Float](repeating: 1, count: 2 * 3 * 5 * 5), [2, 3, 5, 5])
        let weight = constant([Float](repeating: 1, count: 8 * 3 * 3 * 3), [8, 3, 3, 3])
        let bias = constant([1, 2, 3], [3])
        let (node, error) = ShapeChecks.withRecording {
            Node(.conv2d(Conv2DParameters()), inputs: [input, weight, bias])
        }
        #expect(error?.message == "[conv2d] bias [3] must have one value per output channel (8)")
        #expect(node?.shape == [2, 3, 5, 5] && node?.op == .constant)
    }

    @Test("conv2d and pool geometry come from the kernel layer's checked rule")
    func convAndPoolGeometry() {
        let input = constant([Float](repeating: 1, count: 3 * 4 * 4), [1, 3, 4, 4])
        let weight = constant([Float](repeating: 1, count: 2 * 2 * 3 * 3), [2, 2, 3, 3])
        let (_, convError) = ShapeChecks.withRecording {
            Node(.conv2d(Conv2DParameters()), inputs: [input, weight])
        }
        #expect(
            convError?.message
                == "[conv2d] weight [2, 2, 3, 3] expects 2 input channels per group, input [1, 3, 4, 4] with 1 groups has 3"
        )
        let (_, poolError) = ShapeChecks.withRecording {
            Node(.maxPool2d(Pool2DParameters(kernel: (5, 5))), inputs: [input])
        }
        #expect(
            poolError?.message
                == "[pool2d] window does not fit in padded input [1, 3, 4, 4] (\(Pool2DParameters(kernel: (5, 5))))")
    }

    @Test("nodes built on a placeholder run, and the first error is the one kept")
    func placeholderRuns() {
        let a = constant([1, 2, 3], [3])
        let b = constant([1, 2], [2])
        let (result, error) = ShapeChecks.withRecording { () -> Node in
            let bad = Node(.binary(.add), inputs: [a, b])  // placeholder [3] of zeros
            _ = Node(.reshape([4]), inputs: [bad])  // a second failure, not reported
            let y = Node(.unary(.exp), inputs: [Node(.binary(.mul), inputs: [bad, a])])
            GraphExecutor.materialize([y])
            return y
        }
        #expect(error?.message == "[add] shapes [3] and [2] are not broadcastable")
        #expect(result.map(floats) == [1, 1, 1])
    }

    @Test("outside a scope nothing is recording")
    func notRecording() {
        #expect(!ShapeChecks.isRecording)
        let (inside, _) = ShapeChecks.withRecording { ShapeChecks.isRecording }
        #expect(inside == true)
    }
}
