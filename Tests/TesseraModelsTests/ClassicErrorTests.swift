import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraProtobuf
import TesseraTensor
import Testing
import _TesseraTestSupport

/// Broken models and bad inputs: typed errors naming the model part, never a crash or an
/// endless walk.
@Suite("Classic models reject bad files and bad inputs")
struct ClassicErrorTests {
    struct BadModel: Decodable, CustomStringConvertible, Sendable {
        var model: String
        var errorMentions: [String]
        var description: String { model }
    }

    static let badModels: [BadModel] = {
        let data = try! Data(contentsOf: Fixtures.url("classic/bad_models.json"))
        return try! JSONDecoder().decode([BadModel].self, from: data)
    }()

    @Test("a broken converted model fails to load with an error naming the part", arguments: badModels)
    func brokenModel(_ bad: BadModel) {
        #expect(Self.badModels.count >= 5)
        do {
            _ = try MLModel(contentsOf: Fixtures.url("classic/\(bad.model)"))
            Issue.record("\(bad.model) loaded")
        } catch let error as MLModelError {
            #expect(error.code == .io)
            for word in bad.errorMentions {
                #expect(error.message.contains(word), "\(error.message) does not mention \(word)")
            }
        } catch {
            Issue.record("\(bad.model): \(error)")
        }
    }

    @Test(
        "Apple's proprietary model types are refused by name",
        arguments: [
            ("textClassifier", 2000), ("wordTagger", 2001), ("visionFeaturePrint", 2002),
            ("gazetteer", 2004), ("itemSimilarityRecommender", 501), ("linkedModel", 556),
        ])
    func proprietary(_ type: String, _ field: Int) throws {
        var writer = ProtobufWriter()
        writer.writeInt64(5, field: 1)
        writer.writeMessage(field: field) { _ in }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-\(type)-\(UUID()).mlmodel")
        try Data(writer.bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try MLModel(contentsOf: url)
            Issue.record("a \(type) model loaded")
        } catch let error as MLModelError {
            #expect(error.code == .generic)
            #expect(error.message.contains(type) && error.message.contains("Apple's framework"), "\(error.message)")
        }
    }

    @Test("a dictionary where a multi-array is declared is a feature-type error naming the model")
    func dictionaryForArray() throws {
        let model = try MLModel(contentsOf: Fixtures.url("classic/sk_linear_regression.mlmodel"))
        let input = MLDictionaryFeatureProvider(features: ["input": try MLFeatureValue(dictionary: ["a": 1])])
        #expect {
            _ = try model.prediction(from: input)
        } throws: { error in
            let error = error as? MLModelError
            return error?.code == .featureType && error!.message.contains("glmRegressor")
                && error!.message.contains("dictionary")
        }
    }

    @Test("a string where one-hot categories are integers is a feature-type error naming the encoder")
    func oneHotWrongType() throws {
        let model = try MLModel(contentsOf: Fixtures.url("classic/sk_pipeline_onehot_linear.mlmodel"))
        let wrongShape = MLDictionaryFeatureProvider(features: ["input": MLFeatureValue(string: "red")])
        #expect(throws: MLModelError.self) { try model.prediction(from: wrongShape) }
        // An unknown integer category: the encoder says which value it is.
        let unknown = MLDictionaryFeatureProvider(features: [
            "input": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Double>(scalars: [9, 0, 0], shape: [3])))
        ])
        #expect {
            _ = try model.prediction(from: unknown)
        } throws: { error in
            let message = (error as? MLModelError)?.message ?? ""
            return message.contains("oneHotEncoder") && message.contains("9")
        }
    }

    @Test("a missing input names the input and the model's inputs")
    func missingInput() throws {
        let model = try MLModel(contentsOf: Fixtures.url("classic/xgb_regressor.mlmodel"))
        #expect {
            _ = try model.prediction(from: MLDictionaryFeatureProvider(features: [:]))
        } throws: { error in
            let message = (error as? MLModelError)?.message ?? ""
            return (error as? MLModelError)?.code == .featureType && message.contains("\"f0\" is missing")
        }
    }

    @Test("a bad batch item is reported with its index")
    func batchIndex() throws {
        let model = try MLModel(contentsOf: Fixtures.url("classic/sk_decision_tree_regressor.mlmodel"))
        let good = MLDictionaryFeatureProvider(features: [
            "input": MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Double>(repeating: 0, shape: [10])))
        ])
        let bad = MLDictionaryFeatureProvider(features: ["input": MLFeatureValue(string: "x")])
        #expect {
            _ = try model.predictions(fromBatch: MLArrayBatchProvider(array: [good, good, bad]))
        } throws: { error in
            ((error as? MLModelError)?.message ?? "").hasPrefix("batch input 2:")
        }
    }
}
