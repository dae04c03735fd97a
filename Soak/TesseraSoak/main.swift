// `make soak`: many concurrent predictions on one model, every output checked against the
// serial result, with the resident set size at start and end (Docs/Reliability.md).
//
//   TesseraSoak [--tasks 64] [--predictions 100000] [--rss-growth-mb 64]
//   TesseraSoak leaks [COUNT]      the loop `make leaks` runs under valgrind (LeakLoop.swift)
//
// Two phases: a stateless model (linear → ReLU → softmax) and a stateful one (an fp16
// accumulator, each task with its own MLState, a fresh one every 16 steps). A mismatch, or RSS
// growing by more than the bound between the warm start and the end, fails the run.
import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

struct Options {
    var tasks = 64
    var predictions = 100_000
    var rssGrowthMB = 64.0

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { break }
            switch flag {
            case "--tasks": tasks = Int(value) ?? tasks
            case "--predictions": predictions = Int(value) ?? predictions
            case "--rss-growth-mb": rssGrowthMB = Double(value) ?? rssGrowthMB
            default: print("unknown flag \(flag)")
            }
        }
    }
}

/// The resident set size in MiB (`/proc/self/statm`).
func residentMB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = Double(text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0)
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

let fixtures: URL = {
    var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while directory.path != "/",
        !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path)
    {
        directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent("Tests/Fixtures")
}()

func floats(_ provider: any MLFeatureProvider, _ name: String) -> [Float] {
    MLShapedArray<Float>(converting: provider.featureValue(for: name)!.multiArrayValue!).scalars
}

func input(_ name: String, _ values: [Float], shape: [Int], fp16: Bool = false) -> MLDictionaryFeatureProvider {
    let array =
        fp16
        ? MLMultiArray(MLShapedArray<Float16>(scalars: values.map { Float16($0) }, shape: shape))
        : MLMultiArray(MLShapedArray<Float>(scalars: values, shape: shape))
    return MLDictionaryFeatureProvider(features: [name: MLFeatureValue(multiArray: array)])
}

/// Runs `count` predictions split over `tasks` tasks; `body(task, index)` returns the number of
/// mismatches of one prediction.
func concurrently(tasks: Int, count: Int, _ body: @escaping @Sendable (Int, Int) throws -> Int) async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<tasks {
            group.addTask {
                var mismatches = 0
                for index in stride(from: task, to: count, by: tasks) { mismatches += try body(task, index) }
                return mismatches
            }
        }
        return try await group.reduce(0, +)
    }
}

if CommandLine.arguments.count >= 2, CommandLine.arguments[1] == "leaks" {
    try LeakLoop.run(
        count: CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 1000 : 1000, fixtures: fixtures)
    exit(0)
}

let options = Options(CommandLine.arguments)
var failed = false

// Stateless: 16 distinct inputs, their serial outputs, then every prediction compared exactly.
let stateless = try MLModel(contentsOf: fixtures.appendingPathComponent("models/linear_relu_softmax.mlpackage"))
/// Input `seed`: eight values in [-1, 1) that differ between seeds.
func soakInput(_ seed: Int) -> [Float] {
    (0..<8).map { index in
        let step: Int = (index * 7 + seed * 13) % 17
        return Float(step) / 8 - 1
    }
}
let inputs = (0..<16).map(soakInput)
let expected = try inputs.map { floats(try stateless.prediction(from: input("x", $0, shape: [1, 8])), "softmax_0") }
for _ in 0..<200 { _ = try stateless.prediction(from: input("x", inputs[0], shape: [1, 8])) }
var start = residentMB()
var clock = Date()
let statelessMismatches = try await concurrently(tasks: options.tasks, count: options.predictions) { _, index in
    let output = try stateless.prediction(from: input("x", inputs[index % 16], shape: [1, 8]))
    return floats(output, "softmax_0") == expected[index % 16] ? 0 : 1
}
var end = residentMB()
print(
    String(
        format: "stateless: %d predictions on %d tasks in %.1f s, %d mismatches, RSS %.1f → %.1f MiB",
        options.predictions, options.tasks, Date().timeIntervalSince(clock), statelessMismatches, start, end))
if statelessMismatches > 0 || end - start > options.rssGrowthMB { failed = true }

// Stateful: the accumulator's output after step k of the same input, serially, is the reference.
let stateful = try MLModel(contentsOf: fixtures.appendingPathComponent("state/accumulator.mlpackage"))
let x: [Float] = [0.5, -0.25, 1, 2]
let stepsPerState = 16
let reference = try {
    let state = stateful.makeState()
    return try (0..<stepsPerState).map { _ in
        floats(try stateful.prediction(from: input("x", x, shape: [1, 4], fp16: true), using: state), "y")
    }
}()
final class States: @unchecked Sendable {
    // One slot per task, touched only by that task.
    var states: [MLState]
    init(_ states: [MLState]) { self.states = states }
}
let states = States((0..<options.tasks).map { _ in stateful.makeState() })
start = residentMB()
clock = Date()
let statefulMismatches = try await concurrently(tasks: options.tasks, count: options.predictions) { task, index in
    let step = (index / options.tasks) % stepsPerState
    if step == 0 { states.states[task] = stateful.makeState() }
    let output = try stateful.prediction(from: input("x", x, shape: [1, 4], fp16: true), using: states.states[task])
    return floats(output, "y") == reference[step] ? 0 : 1
}
end = residentMB()
print(
    String(
        format: "stateful: %d predictions on %d tasks (own MLState each) in %.1f s, %d mismatches, RSS %.1f → %.1f MiB",
        options.predictions, options.tasks, Date().timeIntervalSince(clock), statefulMismatches, start, end))
if statefulMismatches > 0 || end - start > options.rssGrowthMB { failed = true }
print(failed ? "soak: FAILED (bound: RSS growth ≤ \(options.rssGrowthMB) MiB, 0 mismatches)" : "soak: passed")
exit(failed ? 1 : 0)
