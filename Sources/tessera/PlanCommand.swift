import Tessera

/// `tessera plan MODEL [--function NAME] [--all] [--measure [--runs N]]`: the model's compute
/// plan, one row per operation with its output, shape, device and estimated cost weight.
///
/// `--measure` (a Tessera extension) times whole predictions on random inputs and splits
/// the median time over the operations by their cost weights; Tessera fuses operations into
/// shared kernels, so there is no per-operation wall time to measure directly.
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
                let milliseconds = try measurePrediction(url: url, functionName: nil, runs: runs)
                print(String(format: "median prediction %.3f ms over %d runs", milliseconds, runs))
            }
            return
        }
        let name = functionName ?? (program.functions["main"] != nil ? "main" : program.functions.keys.sorted().first)
        guard let name, let function = program.functions[name] else {
            throw CLIError(
                "the program has no function \"\(functionName ?? "main")\" (it has: "
                    + program.functions.keys.sorted().joined(separator: ", ") + ")")
        }
        var milliseconds: Double?
        if measure {
            milliseconds = try measurePrediction(url: url, functionName: name, runs: runs)
        }
        print("\(url.lastPathComponent): function \(name) of \(program.functions.count)")
        var header =
            "    #  operator                      output                          type                        device  cost"
        if milliseconds != nil { header += "     ~ms" }
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
            var line =
                pad(String(row.index), 5, right: true) + "  "
                + pad(String(repeating: "  ", count: row.depth) + operation.operatorName, 28) + "  "
                + pad(output?.name ?? "-", 30) + "  " + pad(output.map { "\($0.type)" } ?? "-", 26) + "  "
                + pad(device, 6) + "  " + pad(String(format: "%5.1f%%", weight * 100), 6, right: true)
            if let milliseconds { line += "  " + pad(String(format: "%.3f", milliseconds * weight), 7, right: true) }
            print(line)
        }
        if hidden > 0 { print("(\(hidden) const operations not shown; --all shows them)") }
        if let milliseconds {
            print(
                String(
                    format: "median prediction %.3f ms over %d runs; ~ms splits it by the cost weights ", milliseconds,
                    runs)
                    + "(operations run fused, so they are not timed one by one)")
        }
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

    /// The median wall time of a prediction on random inputs, in milliseconds.
    static func measurePrediction(url: URL, functionName: String?, runs: Int) throws -> Double {
        let configuration = MLModelConfiguration()
        configuration.functionName = functionName
        let model = try MLModel(contentsOf: url, configuration: configuration)
        var features: [String: MLFeatureValue] = [:]
        var generator = SystemRandomNumberGenerator()
        for (name, feature) in model.modelDescription.inputDescriptionsByName {
            guard let constraint = feature.multiArrayConstraint else {
                throw CLIError("--measure needs multi-array inputs; \(name) is \(feature.type)")
            }
            let shape = constraint.shape.map(\.intValue)
            let count = shape.reduce(1, *)
            let scalars = (0..<count).map { _ in Float.random(in: -1...1, using: &generator) }
            features[name] = MLFeatureValue(shapedArray: MLShapedArray<Float>(scalars: scalars, shape: shape))
        }
        let input = try MLDictionaryFeatureProvider(dictionary: features)
        for _ in 0..<2 { _ = try model.prediction(from: input) }
        var times: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try model.prediction(from: input)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return times.sorted()[times.count / 2]
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
