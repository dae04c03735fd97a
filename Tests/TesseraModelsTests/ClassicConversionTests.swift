import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// Core ML's conversions between feature kinds, on converted models whose expected outputs
/// come from the source library: the same row given in another form gives the same result.
@Suite("Classic models convert feature values as Core ML does")
struct ClassicConversionTests {
    static func fixture(_ name: String) -> ClassicFixture {
        ClassicFixture.all.first { $0.name == name }!
    }

    @Test("int64 values fed to double inputs, and one-element multi-arrays for scalars")
    func scalarForms() throws {
        let fixture = Self.fixture("xgb_binary")
        let model = try MLModel(contentsOf: fixture.model)
        for (index, row) in fixture.rows.enumerated() {
            var asArrays: [String: MLFeatureValue] = [:]
            for (name, value) in row {
                guard case .double(let number) = value else { continue }
                asArrays[name] = MLFeatureValue(
                    multiArray: MLMultiArray(MLShapedArray<Float>(scalars: [Float(number)], shape: [1])))
            }
            let output = try model.prediction(from: MLDictionaryFeatureProvider(features: asArrays))
            for (name, expected) in fixture.expected[index] {
                let problem = expected.mismatch(output.featureValue(for: name), tolerance: fixture.tolerance)
                #expect(problem == nil, "row \(index) \(name): \(problem ?? "")")
            }
        }
        // Integral values as int64s give what the same values as doubles give.
        let doubles = MLDictionaryFeatureProvider(
            features: Dictionary(
                uniqueKeysWithValues: (0..<30).map { ("f\($0)", MLFeatureValue(double: Double($0 % 3))) }))
        let integers = MLDictionaryFeatureProvider(
            features: Dictionary(
                uniqueKeysWithValues: (0..<30).map { ("f\($0)", MLFeatureValue(int64: Int64($0 % 3))) }))
        let a = try model.prediction(from: doubles).featureValue(for: "classProbability")?.dictionaryValue
        let b = try model.prediction(from: integers).featureValue(for: "classProbability")?.dictionaryValue
        #expect(a != nil && a == b)
    }

    @Test("a float32 multi-array gives what the float64 one gives, up to float32 rounding")
    func float32Array() throws {
        let fixture = Self.fixture("sk_linear_regression")
        let model = try MLModel(contentsOf: fixture.model)
        for (index, row) in fixture.rows.enumerated() {
            guard case .array(let values, let shape)? = row["input"] else { continue }
            let input = MLDictionaryFeatureProvider(features: [
                "input": MLFeatureValue(
                    multiArray: MLMultiArray(MLShapedArray<Float>(scalars: values.map { Float($0) }, shape: shape)))
            ])
            let got = try model.prediction(from: input).featureValue(for: "prediction")?.doubleValue ?? .nan
            guard case .double(let expected)? = fixture.expected[index]["prediction"] else { continue }
            #expect(abs(got - expected) <= 1e-5 * max(1, abs(expected)), "row \(index): \(got) vs \(expected)")
        }
    }

    @Test("a [String: Double] dictionary works through MLDictionaryFeatureProvider(dictionary:)")
    func stringDoubleDictionary() throws {
        let fixture = Self.fixture("sk_pipeline_dictvectorizer_logistic")
        let model = try MLModel(contentsOf: fixture.model)
        guard case .dictionary(let words, _)? = fixture.rows[0]["words"] else { return }
        let input = try MLDictionaryFeatureProvider(dictionary: ["words": words])
        let output = try model.prediction(from: input)
        let problem = fixture.expected[0]["sentiment"]!.mismatch(output.featureValue(for: "sentiment"), tolerance: 0)
        #expect(problem == nil, "\(problem ?? "")")
    }

    @Test("classifier outputs are a label and a label → probability dictionary; the description lists the labels")
    func classifierOutputs() throws {
        let model = try MLModel(contentsOf: Self.fixture("sk_gradient_boosting_multiclass").model)
        #expect(model.modelDescription.predictedFeatureName == "classLabel")
        #expect(model.modelDescription.predictedProbabilitiesName == "classProbability")
        #expect((model.modelDescription.classLabels as? [String]) == ["setosa", "versicolor", "virginica"])
    }
}
