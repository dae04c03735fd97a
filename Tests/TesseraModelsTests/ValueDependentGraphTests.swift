import Foundation
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Models whose graph depends on values are never replayed: one that reads an input's value
/// while its graph is built, and one that draws random values. (Kept out of `make tsan-ci`:
/// ThreadSanitizer reports an access race in `FusedRunner.gather`'s row cursor on the random
/// model's fused reduction, on the materialization path predictions took before replay too.)
@Suite("Prediction replay: graphs that depend on values are built every time")
struct ValueDependentGraphTests {
    typealias Support = PredictionReplayTests

    @Test("a build that reads an input's value (a runtime slice begin) is never replayed")
    func inputValueReadIsNotReplayed() throws {
        let directory = Fixtures.url("mil-ops/slice_update_runtime_begin_squeezed")
        let model = try MLModel(contentsOf: directory.appendingPathComponent("model.mlpackage"))
        let x = try NumPyFile.read(directory.appendingPathComponent("x.npy"))
        let update = try NumPyFile.read(directory.appendingPathComponent("update.npy"))
        func predict(_ begin: [Int32]) throws -> [Float] {
            let begins = MLMultiArray(MLShapedArray<Int32>(scalars: begin, shape: [3]))
            let output = try model.prediction(from: try Support.provider(["x": x, "update": update, "begin": begins]))
            return try #require(Support.floats(output).values.first)
        }
        let first = try predict([2, 0, 1])
        #expect(model.replay.isRefused)
        let second = try predict([2, 0, 1])
        let third = try predict([2, 0, 1])
        #expect(second == first && third == first)
        // Another begin, the same shapes: the update lands elsewhere.
        let moved = try predict([1, 0, 1])
        #expect(moved != first)
        let fresh = try MLModel(contentsOf: directory.appendingPathComponent("model.mlpackage"))
        let begins = MLMultiArray(MLShapedArray<Int32>(scalars: [1, 0, 1], shape: [3]))
        let want = Support.floats(
            try fresh.prediction(from: try Support.provider(["x": x, "update": update, "begin": begins]))
        ).values.first
        #expect(moved == want)
    }

    @Test("unseeded random ops draw fresh values on every prediction")
    func randomOpsAreNotReplayed() throws {
        let directory = Fixtures.url("mil-ops/random_samples")
        let model = try MLModel(contentsOf: directory.appendingPathComponent("model.mlpackage"))
        let inputs = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".npy") && !$0.hasPrefix("expected") }
        var arrays: [String: MLMultiArray] = [:]
        for file in inputs {
            arrays[String(file.dropLast(4))] = try NumPyFile.read(directory.appendingPathComponent(file))
        }
        var draws: [[String: [Float]]] = []
        for _ in 0..<4 { draws.append(Support.floats(try model.prediction(from: try Support.provider(arrays)))) }
        #expect(model.replay.confirmed == nil)
        for (a, b) in zip(draws, draws.dropFirst()) { #expect(a != b) }
    }
}
