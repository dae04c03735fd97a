import Foundation
import TesseraModels
import TesseraMultiArray
import Testing
import _TesseraTestSupport

@Suite("Classic models match their source libraries")
struct ClassicFixtureTests {
    @Test("every classic fixture is present")
    func fixturesExist() {
        #expect(ClassicFixture.all.count >= 51)
    }

    @Test("one prediction per row matches scikit-learn / XGBoost / LibSVM", arguments: ClassicFixture.all)
    func singlePredictions(_ fixture: ClassicFixture) throws {
        let model = try MLModel(contentsOf: fixture.model)
        for (index, input) in try fixture.providers().enumerated() {
            let output = try model.prediction(from: input)
            for (name, expected) in fixture.expected[index] {
                let problem = expected.mismatch(output.featureValue(for: name), tolerance: fixture.tolerance)
                #expect(problem == nil, "row \(index) output \(name): \(problem ?? "")")
            }
        }
    }

    @Test("a batch gives the same outputs in one pass", arguments: ClassicFixture.all)
    func batchPredictions(_ fixture: ClassicFixture) throws {
        let model = try MLModel(contentsOf: fixture.model)
        let outputs = try model.predictions(fromBatch: MLArrayBatchProvider(array: try fixture.providers()))
        #expect(outputs.count == fixture.rows.count)
        for index in 0..<outputs.count {
            for (name, expected) in fixture.expected[index] {
                let problem = expected.mismatch(
                    outputs.features(at: index).featureValue(for: name), tolerance: fixture.tolerance)
                #expect(problem == nil, "row \(index) output \(name): \(problem ?? "")")
            }
        }
    }
}
