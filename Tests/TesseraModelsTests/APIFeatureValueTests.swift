import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("API: feature values, sequences and providers")
struct APIFeatureValueTests {
    @Test("scalar values report their type and default the other accessors")
    func scalars() {
        let integer = MLFeatureValue(int64: 42)
        #expect(integer.type == .int64)
        #expect(integer.int64Value == 42)
        #expect(integer.doubleValue == 0)
        #expect(integer.stringValue == "")
        #expect(integer.multiArrayValue == nil)
        #expect(integer.dictionaryValue.isEmpty)
        #expect(!integer.isUndefined)

        let double = MLFeatureValue(double: 0.25)
        #expect(double.type == .double && double.doubleValue == 0.25 && double.int64Value == 0)

        let string = MLFeatureValue(string: "cat")
        #expect(string.type == .string && string.stringValue == "cat")
    }

    @Test("undefined values keep their type")
    func undefined() {
        let value = MLFeatureValue(undefined: .multiArray)
        #expect(value.isUndefined)
        #expect(value.type == .multiArray)
        #expect(value.multiArrayValue == nil)
    }

    @Test("feature type raw values are Core ML's")
    func featureTypeRawValues() {
        #expect(MLFeatureType.invalid.rawValue == 0)
        #expect(MLFeatureType.int64.rawValue == 1)
        #expect(MLFeatureType.double.rawValue == 2)
        #expect(MLFeatureType.string.rawValue == 3)
        #expect(MLFeatureType.image.rawValue == 4)
        #expect(MLFeatureType.multiArray.rawValue == 5)
        #expect(MLFeatureType.dictionary.rawValue == 6)
        #expect(MLFeatureType.sequence.rawValue == 7)
        #expect(MLFeatureType.state.rawValue == 8)
    }

    @Test("multi-array and shaped-array values convert both ways")
    func arrays() throws {
        let shaped = MLShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
        let value = MLFeatureValue(shapedArray: shaped)
        #expect(value.type == .multiArray)
        #expect(value.multiArrayValue?.shape == [2, 3])
        #expect(value.multiArrayValue?.dataType == .float32)
        #expect(value.shapedArrayValue(of: Float.self)?.scalars == [1, 2, 3, 4, 5, 6])
        #expect(value.shapedArrayValue(of: Int32.self)?.scalars == [1, 2, 3, 4, 5, 6])
        #expect(MLFeatureValue(double: 1).shapedArrayValue(of: Float.self) == nil)

        let array = try MLMultiArray([1.5, 2.5] as [Double])
        let wrapped = MLFeatureValue(multiArray: array)
        #expect(wrapped.multiArrayValue === array)
    }

    @Test("dictionary values take String or Int64 keys and reject others")
    func dictionaries() throws {
        let strings = try MLFeatureValue(dictionary: ["cat": 0.75, "dog": 0.25])
        #expect(strings.type == .dictionary)
        #expect(strings.dictionaryValue["cat"]?.doubleValue == 0.75)

        let integers = try MLFeatureValue(dictionary: [AnyHashable(Int64(3)): 0.5, AnyHashable(4): 0.5])
        #expect(integers.dictionaryValue[AnyHashable(Int64(4))]?.doubleValue == 0.5)

        #expect(throws: MLModelError.self) { try MLFeatureValue(dictionary: [AnyHashable(1.5): 1]) }
        #expect(throws: MLModelError.self) { try MLFeatureValue(dictionary: ["a": 1, AnyHashable(Int64(2)): 1]) }
    }

    @Test("sequences hold strings or integers")
    func sequences() {
        let words = MLSequence(strings: ["a", "cat"])
        #expect(words.type == .string && words.stringValues == ["a", "cat"] && words.int64Values.isEmpty)
        let numbers = MLSequence(int64s: [1, 2, 3])
        #expect(numbers.type == .int64 && numbers.int64Values.map(\.int64Value) == [1, 2, 3])
        let empty = MLSequence(empty: .string)
        #expect(empty.type == .string && empty.stringValues.isEmpty)
        let value = MLFeatureValue(sequence: words)
        #expect(value.type == .sequence && value.sequenceValue?.stringValues == ["a", "cat"])
    }

    @Test("isEqual compares type and contents")
    func equality() throws {
        #expect(MLFeatureValue(int64: 1).isEqual(to: MLFeatureValue(int64: 1)))
        #expect(!MLFeatureValue(int64: 1).isEqual(to: MLFeatureValue(double: 1)))
        let a = MLFeatureValue(multiArray: try MLMultiArray([1, 2] as [Float]))
        let b = MLFeatureValue(multiArray: try MLMultiArray([1, 2] as [Float]))
        let c = MLFeatureValue(multiArray: try MLMultiArray([1, 3] as [Float]))
        #expect(a.isEqual(to: b))
        #expect(!a.isEqual(to: c))
    }

    @Test("MLDictionaryFeatureProvider converts Swift values and rejects others")
    func dictionaryProvider() throws {
        let array = try MLMultiArray([1, 2] as [Float])
        let provider = try MLDictionaryFeatureProvider(dictionary: [
            "value": MLFeatureValue(double: 1), "int": 3, "double": 0.5, "float": Float(0.25), "string": "s",
            "array": array, "shaped": MLShapedArray<Float>(scalars: [1], shape: [1]),
            "sequence": MLSequence(strings: ["x"]), "dict": ["a": 1.0] as [String: Double],
        ])
        #expect(
            provider.featureNames == [
                "value", "int", "double", "float", "string", "array", "shaped", "sequence", "dict",
            ])
        #expect(provider["int"]?.type == .int64 && provider["int"]?.int64Value == 3)
        #expect(provider["double"]?.type == .double && provider["double"]?.doubleValue == 0.5)
        #expect(provider["float"]?.doubleValue == 0.25)
        #expect(provider["string"]?.stringValue == "s")
        #expect(provider["array"]?.multiArrayValue === array)
        #expect(provider["shaped"]?.type == .multiArray)
        #expect(provider["sequence"]?.type == .sequence)
        #expect(provider["dict"]?.dictionaryValue["a"]?.doubleValue == 1)
        #expect(provider.featureValue(for: "missing") == nil)
        #expect(provider.dictionary.count == 9)

        expectModelError(.featureType, containing: ["\"bad\"", "Date"]) {
            _ = try MLDictionaryFeatureProvider(dictionary: ["bad": Date()])
        }
    }

    @Test("MLArrayBatchProvider from providers and from columns")
    func batchProvider() throws {
        let first = try MLDictionaryFeatureProvider(dictionary: ["x": 1.0])
        let batch = MLArrayBatchProvider(array: [first, first])
        #expect(batch.count == 2)
        #expect(batch.features(at: 1).featureValue(for: "x")?.doubleValue == 1)

        let columns = try MLArrayBatchProvider(dictionary: ["x": [1.0, 2.0, 3.0], "name": ["a", "b", "c"]])
        #expect(columns.count == 3)
        #expect(columns.array[2].featureValue(for: "x")?.doubleValue == 3)
        #expect(columns.array[1].featureValue(for: "name")?.stringValue == "b")

        expectModelError(.featureType, containing: ["different lengths"]) {
            _ = try MLArrayBatchProvider(dictionary: ["x": [1.0], "y": [1.0, 2.0]])
        }
    }

    @Test("a custom provider type works as model input")
    func customProvider() throws {
        struct DigitInput: MLFeatureProvider {
            var pixels: MLMultiArray
            var featureNames: Set<String> { ["image"] }
            func featureValue(for featureName: String) -> MLFeatureValue? {
                featureName == "image" ? MLFeatureValue(multiArray: pixels) : nil
            }
        }
        let model = try MLModel(contentsOf: DigitsDemo.packageURL)
        let sample = DigitsDemo.samples.samples[0]
        let pixels = MLMultiArray(MLShapedArray<Float>(scalars: sample.pixels.map { Float($0) / 16 }, shape: [1, 64]))
        let output = try model.prediction(from: DigitInput(pixels: pixels))
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
    }

    @Test("MLModelError carries Core ML's domain and codes")
    func errors() {
        let error = MLModelError(.featureType, "input \"x\" is missing")
        #expect(MLModelError.errorDomain == "com.apple.CoreML")
        #expect(MLModelErrorDomain == "com.apple.CoreML")
        #expect(error.errorCode == 1)
        #expect(error.localizedDescription == "input \"x\" is missing")
        #expect(MLModelError.Code.io.rawValue == 3 && MLModelError.Code.predictionCancelled.rawValue == 11)
        do {
            throw error
        } catch MLModelError.featureType {
            // matched by code, as on Apple platforms
        } catch {
            Issue.record("catch MLModelError.featureType did not match")
        }
    }
}
