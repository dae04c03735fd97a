import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// The random NeuralNetwork layers (`randomNormal*`, `randomUniform*`, `randomBernoulli*`,
/// `categoricalDistribution`) from `tools/neuralnetwork_fixture_cases_spec5.py`: Core ML does
/// not specify its stream, so each output is checked by its statistics against the layer's
/// parameters (mean and standard deviation within five standard errors, bounds, class
/// frequencies), and for repeatability: a seeded layer gives the same values every
/// prediction, an unseeded one fresh values.
@Suite("NeuralNetwork random layers")
struct NeuralNetworkRandomLayerTests {
    @Test("draws from the layer's distribution", arguments: NeuralNetworkFixture.random)
    func distribution(_ fixture: NeuralNetworkFixture) throws {
        let d = try #require(fixture.distribution)
        let model = try MLModel(contentsOf: fixture.url)
        func draw() throws -> ([Float], [Int]) {
            let output = try model.prediction(from: try fixture.provider())
            let array = try #require(output.featureValue(for: "y")?.multiArrayValue)
            return (MLShapedArray<Float>(converting: array).scalars, array.shape.map(\.intValue))
        }
        let (values, shape) = try draw()
        #expect(shape == d.shape, "\(fixture.name): shape \(shape), expected \(d.shape)")
        let x = values.map(Double.init)
        let n = Double(x.count)
        let mean = x.reduce(0, +) / n
        let std = (x.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / n).squareRoot()
        switch d.kind {
        case "normal":
            let (m, s) = (d.mean ?? 0, d.std ?? 1)
            #expect(Swift.abs(mean - m) < 5 * s / n.squareRoot(), "\(fixture.name): mean \(mean), expected \(m)")
            #expect(Swift.abs(std - s) < 5 * s / (2 * n).squareRoot(), "\(fixture.name): std \(std), expected \(s)")
        case "uniform":
            let (low, high) = (d.low ?? 0, d.high ?? 1)
            #expect(x.allSatisfy { $0 >= low && $0 < high }, "\(fixture.name): a value outside [\(low), \(high))")
            let s = (high - low) / 12.squareRoot()
            #expect(Swift.abs(mean - (low + high) / 2) < 5 * s / n.squareRoot(), "\(fixture.name): mean \(mean)")
            #expect(Swift.abs(std - s) < 0.05 * s, "\(fixture.name): std \(std), expected \(s)")
        case "bernoulli":
            let p = d.p ?? 0.5
            #expect(x.allSatisfy { $0 == 0 || $0 == 1 }, "\(fixture.name): a value other than 0 or 1")
            #expect(Swift.abs(mean - p) < 5 * (p * (1 - p) / n).squareRoot(), "\(fixture.name): mean \(mean), p \(p)")
        case "categorical":
            let rows = try #require(d.probabilities)
            let samples = d.shape[1]
            for (row, probabilities) in rows.enumerated() {
                let drawn = x[(row * samples)..<((row + 1) * samples)]
                for (label, p) in probabilities.enumerated() {
                    let frequency = Double(drawn.filter { $0 == Double(label) }.count) / Double(samples)
                    let bound = p == 0 ? 0 : 5 * (p * (1 - p) / Double(samples)).squareRoot()
                    #expect(
                        Swift.abs(frequency - p) <= bound,
                        "\(fixture.name): row \(row) class \(label) frequency \(frequency), expected \(p)")
                }
                #expect(drawn.allSatisfy { $0 >= 0 && $0 < Double(probabilities.count) && $0 == $0.rounded() })
            }
        default:
            Issue.record("\(fixture.name): unknown distribution \(d.kind)")
        }
        let (again, _) = try draw()
        if d.seeded {
            #expect(again == values, "\(fixture.name): a seeded layer gave other values on the second prediction")
        } else {
            #expect(again != values, "\(fixture.name): an unseeded layer repeated its values")
        }
    }
}
