import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing

@Suite("API: bad inputs throw MLModelError before anything runs")
struct APIInputValidationTests {
    let digits: MLModel
    let flexible: MLModel

    init() throws {
        digits = try MLModel(contentsOf: DigitsDemo.packageURL)
        flexible = try MLModel(contentsOf: modelFixture("flexible_shapes.mlpackage"))
    }

    func floats(_ shape: [Int]) -> MLFeatureValue {
        MLFeatureValue(shapedArray: MLShapedArray<Float>(repeating: 0.5, shape: shape))
    }

    @Test("a missing input names the input and what the model expects")
    func missing() {
        expectModelError(.featureType, containing: ["\"image\"", "missing", "float32", "[1, 64]"]) {
            _ = try digits.prediction(from: MLDictionaryFeatureProvider(dictionary: [:]))
        }
        expectModelError(.featureType, containing: ["\"image\"", "missing"]) {
            _ = try digits.prediction(from: MLDictionaryFeatureProvider(dictionary: ["Image": floats([1, 64])]))
        }
    }

    @Test("an undefined value counts as missing for a required input")
    func undefined() {
        expectModelError(.featureType, containing: ["\"image\"", "missing"]) {
            _ = try digits.prediction(
                from: MLDictionaryFeatureProvider(dictionary: ["image": MLFeatureValue(undefined: .multiArray)]))
        }
    }

    @Test("extra inputs are ignored, as Core ML ignores them")
    func extra() throws {
        let sample = DigitsDemo.samples.samples[0]
        let scaled = MLShapedArray<Float>(scalars: sample.pixels.map { Float($0) / 16 }, shape: [1, 64])
        let output = try digits.prediction(
            from: MLDictionaryFeatureProvider(dictionary: ["image": scaled, "unused": "hello", "also": 3]))
        #expect(output.featureValue(for: "classLabel")?.stringValue == sample.label)
        #expect(output.featureValue(for: "unused") == nil)
    }

    @Test(
        "a value of the wrong feature type",
        arguments: [
            ("string", MLFeatureType.string), ("double", .double), ("int64", .int64), ("dictionary", .dictionary),
            ("sequence", .sequence),
        ])
    func wrongType(_ name: String, _ type: MLFeatureType) throws {
        let value: MLFeatureValue =
            switch type {
            case .string: MLFeatureValue(string: "7")
            case .double: MLFeatureValue(double: 7)
            case .int64: MLFeatureValue(int64: 7)
            case .dictionary: try MLFeatureValue(dictionary: ["a": 1])
            default: MLFeatureValue(sequence: MLSequence(strings: ["a"]))
            }
        expectModelError(.featureType, containing: ["\"image\"", "is a \(name) value", "multi-array"]) {
            _ = try digits.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": value]))
        }
    }

    @Test("a multi-array of the wrong shape", arguments: [[1, 63], [64], [1, 1, 64], [2, 64], [1, 128]])
    func wrongShape(_ shape: [Int]) {
        expectModelError(.featureType, containing: ["\"image\"", "\(shape)", "[1, 64]"]) {
            _ = try digits.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": floats(shape)]))
        }
    }

    @Test("flexible shapes: every allowed range and enumerated shape runs", arguments: [1, 4, 17, 64])
    func flexibleAccepted(_ tokens: Int) throws {
        for maskLength in [2, 4, 16] {
            let output = try flexible.prediction(
                from: MLDictionaryFeatureProvider(dictionary: [
                    "tokens": floats([1, tokens, 8]), "mask": floats([1, maskLength, 8]),
                ]))
            #expect(output.featureValue(for: "linear_0")?.multiArrayValue?.shape == [1, NSNumber(value: tokens), 4])
            #expect(output.featureValue(for: "relu_0")?.multiArrayValue?.shape == [1, NSNumber(value: maskLength), 8])
        }
    }

    @Test("flexible shapes: a size outside the range names the dimension and the range")
    func rangeRejected() {
        expectModelError(.featureType, containing: ["\"tokens\"", "[1, 65, 8]", "dimension 1", "1...64"]) {
            _ = try flexible.prediction(
                from: MLDictionaryFeatureProvider(dictionary: [
                    "tokens": floats([1, 65, 8]), "mask": floats([1, 4, 8]),
                ]))
        }
        expectModelError(.featureType, containing: ["\"tokens\"", "dimension 2", "8...8"]) {
            _ = try flexible.prediction(
                from: MLDictionaryFeatureProvider(dictionary: [
                    "tokens": floats([1, 4, 9]), "mask": floats([1, 4, 8]),
                ]))
        }
        expectModelError(.featureType, containing: ["\"tokens\"", "rank 2"]) {
            _ = try flexible.prediction(
                from: MLDictionaryFeatureProvider(dictionary: ["tokens": floats([4, 8]), "mask": floats([1, 4, 8])]))
        }
    }

    @Test("flexible shapes: a shape not in the enumeration lists the allowed ones")
    func enumerationRejected() {
        expectModelError(.featureType, containing: ["\"mask\"", "[1, 8, 8]", "[1, 4, 8]", "[1, 2, 8]", "[1, 16, 8]"]) {
            _ = try flexible.prediction(
                from: MLDictionaryFeatureProvider(dictionary: [
                    "tokens": floats([1, 4, 8]), "mask": floats([1, 8, 8]),
                ]))
        }
    }

    @Test("a bad input in a batch names its index and returns nothing")
    func batch() throws {
        let good = try DigitsDemo.input(DigitsDemo.samples.samples[0])
        let bad = try MLDictionaryFeatureProvider(dictionary: ["image": floats([1, 8])])
        expectModelError(.featureType, containing: ["batch input 2", "\"image\""]) {
            _ = try digits.predictions(fromBatch: MLArrayBatchProvider(array: [good, good, bad]))
        }
    }

    @Test("tensor predictions check names and shapes too")
    func tensors() async {
        do {
            _ = try await digits.prediction(from: ["image": MLTensor(zeros: [1, 32], scalarType: Float.self)])
            Issue.record("expected an error")
        } catch let error as MLModelError {
            #expect(error.code == .featureType && error.message.contains("[1, 32]"))
        } catch {
            Issue.record("unexpected \(error)")
        }
        do {
            _ = try await digits.prediction(from: ["pixels": MLTensor(zeros: [1, 64], scalarType: Float.self)])
            Issue.record("expected an error")
        } catch let error as MLModelError {
            #expect(error.code == .featureType && error.message.contains("missing"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("the model still predicts correctly after rejected inputs")
    func noPartialState() throws {
        for shape in [[1, 1], [3, 64], [1, 65]] {
            _ = try? digits.prediction(from: MLDictionaryFeatureProvider(dictionary: ["image": floats(shape)]))
        }
        let sample = DigitsDemo.samples.samples[4]
        #expect(
            try digits.prediction(from: DigitsDemo.input(sample)).featureValue(for: "classLabel")?.stringValue
                == sample.label)
    }
}
