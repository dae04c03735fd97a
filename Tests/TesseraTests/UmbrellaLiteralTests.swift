import Tessera
import Testing

/// What Core ML code gets from `import Tessera` alone: the literals of Apple's examples infer the
/// same scalar types as in Core ML, although Tessera adds `Double` as a tensor scalar type.
@Suite("import Tessera: literals infer Core ML's scalar types")
struct UmbrellaLiteralTests {
    @Test("an unlabelled float array literal makes a Float tensor")
    func unlabelledFloatLiteral() async {
        let t = MLTensor([1.0, 3.0, 2.0])
        #expect(t.scalarType is Float.Type)
        #expect(t.shape == [3])
        #expect(await t.shapedArray(of: Float.self).scalars == [1, 3, 2])
    }

    @Test("shape and float literals make a Float tensor")
    func shapedFloatLiteral() {
        #expect(MLTensor(shape: [2, 2], scalars: [1.0, 2.0, 3.0, 4.0]).scalarType is Float.Type)
        #expect(MLTensor(repeating: 0.5, shape: [2]).scalarType is Float.Type)
        #expect(MLTensor(rangeFrom: 0.0, to: 1.0, by: 0.25).scalarType is Float.Type)
        #expect(MLTensor(linearSpaceFrom: 0.0, through: 1.0, count: 3).scalarType is Float.Type)
    }

    @Test("an explicit Double scalar type still makes a Double tensor (Tessera extension)")
    func explicitDouble() {
        #expect(MLTensor(shape: [3], scalars: [1.0, 3.0, 2.0], scalarType: Double.self).scalarType is Double.Type)
        #expect(MLTensor([1.0, 3.0, 2.0], scalarType: Double.self).scalarType is Double.Type)
        let values: [Double] = [1, 3, 2]
        #expect(MLTensor(values).scalarType is Double.Type)
        #expect(MLTensor(shape: [3], scalars: values).scalarType is Double.Type)
    }

    @Test("typed arrays keep their element type")
    func typedArrays() {
        #expect(MLTensor([1, 2, 3] as [Int32]).scalarType is Int32.Type)
        #expect(MLTensor([1, 2, 3], scalarType: Int32.self).scalarType is Int32.Type)
        #expect(MLTensor([1, 2] as [Float16]).scalarType is Float16.Type)
    }
}
