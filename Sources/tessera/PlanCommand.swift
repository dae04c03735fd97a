import Tessera
import TesseraGraph

/// `tessera plan MODEL [--function NAME] [--all] [--measure [--runs N]]`: the model's compute
/// plan, one row per operation with its output, shape, device and estimated cost weight.
///
/// `--measure` (a Tessera extension) runs predictions on random inputs with the executor's
/// step profile on (``StepProfile``): every step of the plan a prediction runs (a fused
/// program, a kernel, a view) is timed as it runs, and the times are summed by operation
/// (`conv2d`, `matmul`, `softmax`, `elementwise`, …) and by kernel path (packed or OpenBLAS
/// convolution, depthwise, packed GEMM, OpenBLAS `sgemm`, fused element-wise, softmax, …).
/// Operations fused into one step count under the step's operation. With `--all` the measured
/// report lists every step in plan order, not only the ten slowest.
enum PlanCommand {
    static let usage = "usage: tessera plan MODEL [--function NAME] [--all] [--measure [--runs N]]"

    static func run(_ arguments: [String]) throws {
        var modelPath: String?
        var functionName: String?
        var showAll = false
        var measure = false
        var runs = 20
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--function":
                guard index + 1 < arguments.count else { throw CLIError("--function needs a name") }
                functionName = arguments[index + 1]
                index += 1
            case "--runs":
                guard index + 1 < arguments.count, let count = Int(arguments[index + 1]), count > 0 else {
                    throw CLIError("--runs needs a positive count")
                }
                runs = count
                index += 1
            case "--all": showAll = true
            case "--measure": measure = true
            default:
                guard modelPath == nil, !arguments[index].hasPrefix("-") else { throw CLIError(usage) }
                modelPath = arguments[index]
            }
            index += 1
        }
        guard let modelPath else { throw CLIError(usage) }
        let url = URL(fileURLWithPath: modelPath)
        let plan = try blocking { try await MLComputePlan.load(contentsOf: url, configuration: MLModelConfiguration()) }

        guard case .program(let program) = plan.modelStructure else {
            printNonProgram(plan, name: url.lastPathComponent)
            if measure, case .neuralNetwork = plan.modelStructure {
                print(try MeasuredProfile(url: url, functionName: nil, runs: runs).report(allSteps: showAll))
            }
            return
        }
        let name = functionName ?? (program.functions["main"] != nil ? "main" : program.functions.keys.sorted().first)
        guard let name, let function = program.functions[name] else {
            throw CLIError(
                "the program has no function \"\(functionName ?? "main")\" (it has: "
                    + program.functions.keys.sorted().joined(separator: ", ") + ")")
        }
        let measured = measure ? try MeasuredProfile(url: url, functionName: name, runs: runs) : nil
        print("\(url.lastPathComponent): function \(name) of \(program.functions.count)")
        let header =
            "    #  operator                      output                          type                        device  cost"
        print(header)
        var hidden = 0
        var rows: [(index: Int, operation: MLModelStructure.Program.Operation, depth: Int)] = []
        var stack = function.block.operations.enumerated().reversed().map { ($0.offset, $0.element, 0) }
        var counter = 0
        while let (_, operation, depth) = stack.popLast() {
            rows.append((counter, operation, depth))
            counter += 1
            for block in operation.blocks.reversed() {
                stack += block.operations.enumerated().reversed().map { ($0.offset, $0.element, depth + 1) }
            }
        }
        for row in rows {
            let operation = row.operation
            if operation.operatorName == "const" && !showAll {
                hidden += 1
                continue
            }
            let output = operation.outputs.first
            let weight = plan.estimatedCost(of: operation)?.weight ?? 0
            let device = plan.deviceUsage(for: operation).map { "\($0.preferred)" } ?? "-"
            let line =
                pad(String(row.index), 5, right: true) + "  "
                + pad(String(repeating: "  ", count: row.depth) + operation.operatorName, 28) + "  "
                + pad(output?.name ?? "-", 30) + "  " + pad(output.map { "\($0.type)" } ?? "-", 26) + "  "
                + pad(device, 6) + "  " + pad(String(format: "%5.1f%%", weight * 100), 6, right: true)
            print(line)
        }
        if hidden > 0 { print("(\(hidden) const operations not shown; --all shows them)") }
        if let measured { print(measured.report(allSteps: showAll)) }
    }

    /// Prints a neural network's layers, a pipeline's sub-models, or that the type is unsupported.
    static func printNonProgram(_ plan: MLComputePlan, name: String) {
        switch plan.modelStructure {
        case .neuralNetwork(let network):
            print("\(name): neural network, \(network.layers.count) layers")
            for (index, layer) in network.layers.enumerated() {
                let device = plan.deviceUsage(for: layer).map { "\($0.preferred)" } ?? "-"
                let cost = plan.estimatedCost(of: layer).map { String(format: "%5.1f%%", $0.weight * 100) } ?? "-"
                print(
                    pad(String(index), 5, right: true) + "  " + pad(layer.type, 20) + "  " + pad(layer.name, 24) + "  "
                        + pad(device, 6) + "  " + pad(cost, 6, right: true) + "  "
                        + layer.inputNames.joined(separator: ",") + " → " + layer.outputNames.joined(separator: ","))
            }
        case .pipeline(let pipeline):
            print(
                "\(name): pipeline of \(pipeline.subModels.count) models: "
                    + pipeline.subModelNames.joined(separator: ", "))
        case .program: break
        case .unsupported:
            print("\(name): a model type without operations to plan")
        }
    }

    /// `text` padded with spaces to `width` (left-aligned unless `right`).
    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }

    /// Runs an async throwing operation to completion from synchronous code.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let semaphore = DispatchSemaphore(value: 0)
        Task {
            do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
            semaphore.signal()
        }
        semaphore.wait()
        return try box.result!.get()
    }
}

/// Carries a result from a task to the thread waiting on it (guarded by the semaphore).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
