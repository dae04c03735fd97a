import Foundation
import TesseraKernels
import TesseraTensor
import Testing

@testable import TesseraModels

/// Weights a model file stores inline (NeuralNetwork `WeightParams`, an ML program's immediate
/// values) become constants in memory nobody writes, which the kernels' weight cache accepts.
@Suite("Inline model weights as cacheable constants")
struct ModelConstantTests {
    @Test("a model constant holds its values in adopted, 64-byte-aligned memory the weight cache accepts")
    func modelConstantIsCacheable() {
        let values: [Float] = (0..<24).map { Float($0) * 0.5 - 3 }
        let constant = MLTensor.modelConstant(shape: [2, 3, 4], scalars: values)
        #expect(constant.shape == [2, 3, 4])
        #expect(constant.shapedArray(of: Float.self).scalars == values)
        let value = constant.node.value!
        #expect(PreparedWeights.isCacheable(value.storage))
        #expect(Int(bitPattern: value.storage.pointer) % 64 == 0)
        // The same values in a tensor of Tessera's own buffers are packed per call instead.
        let owned = MLTensor(shape: [2, 3, 4], scalars: values, scalarType: Float.self)
        #expect(!PreparedWeights.isCacheable(owned.node.value!.storage))
    }
}
