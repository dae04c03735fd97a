import Tessera

/// `tessera predict MODEL --input NAME=VALUE … [--output-dir DIR]`: one prediction through
/// `MLModel`, printing every output, and writing multi-array outputs as `.npy` files when an
/// output directory is given. A value is a `.npy` file, `@FILE.json`, or a literal read as the
/// model's input type declares (`--input age=3.5`, `--input sex=male`); see
/// `FeatureInputParsing.swift`.
enum PredictCommand {
    static let usage =
        "usage: tessera predict MODEL --input NAME=VALUE … [--output-dir DIR] "
        + "(VALUE: FILE.npy, @FILE.json, a number or a string)"

    static func run(_ arguments: [String]) throws {
        var modelPath: String?
        var rawInputs: [(name: String, value: String)] = []
        var outputDirectory: URL?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--input", "-i":
                guard index + 1 < arguments.count else { throw CLIError("--input needs NAME=FILE.npy") }
                let pair = arguments[index + 1]
                guard let equals = pair.firstIndex(of: "=") else {
                    throw CLIError("--input \(pair): expected NAME=FILE.npy")
                }
                rawInputs.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
                index += 2
            case "--output-dir", "-o":
                guard index + 1 < arguments.count else { throw CLIError("--output-dir needs a directory") }
                outputDirectory = URL(fileURLWithPath: arguments[index + 1])
                index += 2
            default:
                guard modelPath == nil, !argument.hasPrefix("-") else { throw CLIError(usage) }
                modelPath = argument
                index += 1
            }
        }
        guard let modelPath else { throw CLIError(usage) }
        let model = try MLModel(contentsOf: URL(fileURLWithPath: modelPath))
        var inputs: [String: MLFeatureValue] = [:]
        for (name, text) in rawInputs {
            inputs[name] = try FeatureInputParsing.value(
                text, for: model.modelDescription.inputDescriptionsByName[name], name: name)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let output = try model.prediction(from: MLDictionaryFeatureProvider(features: inputs))
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        if let outputDirectory {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        }
        let names =
            model.modelDescription.outputOrder.isEmpty
            ? output.featureNames.sorted() : model.modelDescription.outputOrder
        for name in names {
            guard let value = output.featureValue(for: name) else { continue }
            switch value.type {
            case .multiArray:
                let array = value.multiArrayValue!
                let values = MLShapedArray<Float>(converting: array).scalars
                let shown = values.prefix(8).map { String(format: "%.6g", $0) }.joined(separator: ", ")
                print(
                    "\(name): \(array.dataType) \(array.shape.map(\.intValue)) [\(shown)\(values.count > 8 ? ", …" : "")]"
                )
                if let outputDirectory {
                    let file = outputDirectory.appendingPathComponent("\(name).npy")
                    try NumPyFile.encode(array).write(to: file)
                    print("  written to \(file.path)")
                }
            case .dictionary:
                let entries = value.dictionaryValue.map { (key: "\($0.key.base)", value: $0.value.doubleValue) }
                    .sorted { $0.value > $1.value }
                print(
                    "\(name): "
                        + entries.map { "\($0.key) \(String(format: "%.4f", $0.value))" }.joined(separator: ", "))
            case .string: print("\(name): \(value.stringValue)")
            case .int64: print("\(name): \(value.int64Value)")
            case .double: print("\(name): \(value.doubleValue)")
            default: print("\(name): \(value)")
            }
        }
        print(String(format: "prediction took %.3f ms", elapsed))
    }
}
