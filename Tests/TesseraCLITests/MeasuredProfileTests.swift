import Foundation
import Tessera
import Testing
import _TesseraTestSupport

@testable import tessera

/// `tessera plan MODEL --measure`: real predictions of fixture models (made by coremltools,
/// `tools/`) timed step by step and summed by operation, kernel path and step kind.
/// Structural checks only: no timing thresholds.
@Suite("tessera plan --measure splits measured time by operation and kernel path")
struct MeasuredProfileTests {
    @Test(
        "the groups cover every step, their times add up to the steps' total, which the predictions contain",
        arguments: [
            ("models/conv_fp32.mlpackage", "conv2d"), ("models/linear_relu_softmax.mlpackage", "matmul"),
        ])
    func groupsAddUp(model: String, operation: String) throws {
        let measured = try MeasuredProfile(url: Fixtures.url(model), functionName: nil, runs: 3)
        #expect(measured.runs == 3)
        #expect(measured.predictionMilliseconds.count == 3)
        // At least one plan run per prediction.
        #expect(measured.planRuns.count >= 3)
        #expect(measured.byOperation.map(\.name).contains(operation), "\(measured.byOperation.map(\.name))")
        let total = measured.stepNanoseconds
        #expect(total > 0)
        for groups in [measured.byOperation, measured.byPath, measured.byKind] {
            #expect(!groups.isEmpty)
            #expect(groups.reduce(UInt64(0)) { $0 + $1.nanoseconds } == total)
            #expect(groups.allSatisfy { !$0.name.isEmpty && $0.steps >= 0 })
            // Largest first.
            #expect(zip(groups, groups.dropFirst()).allSatisfy { $0.nanoseconds >= $1.nanoseconds })
        }
        // Steps per prediction, by kind, add up to the plan's steps per prediction.
        let stepsPerPrediction = measured.planRuns.reduce(0) { $0 + $1.steps.count } / measured.runs
        #expect(measured.byKind.reduce(0) { $0 + $1.steps } == stepsPerPrediction)
        // The steps run inside the predictions, each plan run inside its prediction.
        #expect(Double(total) <= measured.predictionNanoseconds)
        for run in measured.planRuns {
            #expect(run.steps.reduce(UInt64(0)) { $0 + $1.nanoseconds } <= run.nanoseconds)
        }
        let report = measured.report()
        #expect(report.contains("by operation") && report.contains("by kernel path") && report.contains(operation))
    }

    @Test("with --all, every step of the prediction's plan is listed once, in plan order")
    func everyStep() throws {
        let measured = try MeasuredProfile(
            url: Fixtures.url("models/conv_fp32.mlpackage"), functionName: nil, runs: 2)
        let steps = measured.slowestSteps(Int.max)
        let lines = measured.report(allSteps: true).split(separator: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("every step in plan order") }) else {
            Issue.record("no step list in the report")
            return
        }
        let listed = lines[(header + 1)...].prefix { $0.hasPrefix("  #") }
        #expect(listed.count == steps.count)
        let indices = listed.compactMap { line in
            Int(line.dropFirst(3).prefix { $0.isNumber })
        }
        #expect(indices == steps.map(\.index).sorted())
        #expect(!measured.report().contains("every step in plan order"))
    }
}
