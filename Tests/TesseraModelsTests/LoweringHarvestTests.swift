import Foundation
import TesseraTensor
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// coremltools' own MIL op unit tests, harvested by `tools/harvest_coremltools_op_tests.py`
/// into a directory named by `TESSERA_HARVEST_DIR` (thousands of packages, so not committed).
///
/// Opt-in: `TESSERA_HARVEST_DIR=Tests/Fixtures/harvested swift test --filter LoweringHarvest`.
/// Prints, per MIL op type, how many cases pass, fail, or use an op Tessera does not lower,
/// and records an issue for every failing case whose ops are all supported.
@Suite("Lowering harvested coremltools op tests")
struct LoweringHarvestTests {
    /// One harvested case's `case.json`.
    struct Case: Decodable {
        var test: String
        var inputs: [String]
        var outputs: [String]
        var atol: Double
        var rtol: Double
        var ops: [String]
    }

    enum Outcome: String {
        case pass, fail, unsupported
        case loadError = "load error"
        case runError = "run error"
        /// A program with fp16 values: its expected outputs are often fp16-rounded, so it is
        /// compared at 1e-2 and counted apart.
        case passFloat16 = "pass (fp16 program)"
        case failFloat16 = "fail (fp16 program)"
    }

    static var directory: String? { ProcessInfo.processInfo.environment["TESSERA_HARVEST_DIR"] }
    /// `TESSERA_HARVEST_FLOAT16_ROUNDING=1` lowers with ``Float16Rounding/roundedToFloat16``.
    static var float16Rounding: Float16Rounding {
        ProcessInfo.processInfo.environment["TESSERA_HARVEST_FLOAT16_ROUNDING"] == "1" ? .roundedToFloat16 : .none
    }

    @Test("harvested cases match coremltools' expected outputs", .enabled(if: directory != nil))
    func harvested() throws {
        let root = URL(fileURLWithPath: try #require(Self.directory))
        let files =
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent == "case.json" }
            .sorted { $0.path < $1.path } ?? []
        var tally: [String: [Outcome: Int]] = [:]
        var totals: [Outcome: Int] = [:]
        var failures: [String] = []
        // One line per case (its folder relative to the root, outcome, op types) for
        // tools/summarize_harvest.py, which weights sampled families.
        var perCase = "case,outcome,ops,detail\n"
        for file in files {
            let directory = file.deletingLastPathComponent()
            let harvested = try JSONDecoder().decode(Case.self, from: try Data(contentsOf: file))
            FileHandle.standardError.write(Data("harvest: \(directory.lastPathComponent) \(harvested.ops)\n".utf8))
            let (outcome, detail) = run(harvested, in: directory)
            for op in harvested.ops { tally[op, default: [:]][outcome, default: 0] += 1 }
            totals[outcome, default: 0] += 1
            let relative = directory.path.dropFirst(root.path.count).trimmingCharacters(in: ["/"])
            let quoted = "\"" + detail.replacingOccurrences(of: "\"", with: "'") + "\""
            perCase += "\(relative),\(outcome.rawValue),\(harvested.ops.joined(separator: " ")),\(quoted)\n"
            if outcome == .fail || outcome == .runError || outcome == .loadError || outcome == .failFloat16 {
                failures.append("\(directory.lastPathComponent) \(harvested.ops) \(outcome.rawValue): \(detail)")
            }
        }
        var report = "op, pass, fail, unsupported, errors, fp16-program pass, fp16-program fail\n"
        for op in tally.keys.sorted() {
            let t = tally[op]!
            let errors = (t[.loadError] ?? 0) + (t[.runError] ?? 0)
            let columns = [
                t[.pass] ?? 0, t[.fail] ?? 0, t[.unsupported] ?? 0, errors, t[.passFloat16] ?? 0, t[.failFloat16] ?? 0,
            ]
            report += op + ", " + columns.map(String.init).joined(separator: ", ") + "\n"
        }
        report += "\(files.count) cases: "
        report += totals.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }
            .joined(separator: ", ")
        report += "\n" + failures.joined(separator: "\n")
        print(report)
        try? report.write(to: root.appendingPathComponent("report.txt"), atomically: true, encoding: .utf8)
        try? perCase.write(to: root.appendingPathComponent("outcomes.csv"), atomically: true, encoding: .utf8)
        for failure in failures { Issue.record(Comment(rawValue: failure)) }
    }

    /// Loads, runs and compares one case.
    func run(_ harvested: Case, in directory: URL) -> (Outcome, String) {
        let function: LoweredFunction
        var isFloat16 = false
        do {
            let package = try CoreMLPackage(contentsOf: directory.appendingPathComponent("model.mlpackage"))
            if let main = package.model.mlProgram?.functions["main"], let block = try? main.block() {
                let types = main.inputs.map(\.type) + block.operations.flatMap { $0.outputs.map(\.type) }
                isFloat16 = types.contains { $0.tensorType?.dataType == .float16 }
            }
            function = try LoweredFunction(
                package: package, functionName: "main", float16Rounding: Self.float16Rounding)
        } catch let error as ModelFormatError where error.kind == .unsupportedModelType {
            return (.unsupported, "\(error)")
        } catch {
            return (.loadError, "\(error)")
        }
        do {
            var inputs: [String: MLTensor] = [:]
            for (index, name) in harvested.inputs.enumerated() {
                let array = try NumPyArray(contentsOf: directory.appendingPathComponent("input_\(index).npy"))
                inputs[name] =
                    try array.dtype == "<i4"
                    ? MLTensor(shape: array.shape, scalars: array.ints.map { Int32($0) }, scalarType: Int32.self)
                    : MLTensor(shape: array.shape, scalars: array.floats, scalarType: Float.self)
            }
            // Some tests pass a 0-d array for an input declared [1] (or [1, 1]); give such a
            // one-element value the declared shape.
            for (name, type) in function.inputs {
                guard let tensor = inputs[name], tensor.scalarCount == 1,
                    let declared = LoweredFunction.checkableShape(type), declared.allSatisfy({ $0 == 1 }),
                    declared.count != tensor.rank
                else { continue }
                inputs[name] = tensor.reshaped(to: declared.map { _ in 1 })
            }
            let outputs = try function.run(inputs)
            MLTensor.materialize(Array(outputs.values))
            for (index, name) in harvested.outputs.enumerated() {
                let expected = try NumPyArray(contentsOf: directory.appendingPathComponent("expected_\(index).npy"))
                guard let got = outputs[name] else { return (.fail, "no output \(name)") }
                guard got.scalarCount == expected.count else {
                    return (.fail, "\(name): shape \(got.shape), expected \(expected.shape)")
                }
                let (rtol, atol) =
                    isFloat16
                    ? (max(harvested.rtol, 1e-2), max(harvested.atol, 1e-2)) : (harvested.rtol, harvested.atol)
                if let mismatch = firstMismatch(got.scalars(of: Float.self), expected.floats, rtol: rtol, atol: atol) {
                    return (isFloat16 ? .failFloat16 : .fail, "\(name): \(mismatch)")
                }
            }
            return (isFloat16 ? .passFloat16 : .pass, "")
        } catch {
            return (.runError, "\(error)")
        }
    }
}
