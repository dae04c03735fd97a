import Tessera

/// `tessera compile MODEL -o DIR`: compiles a model with `MLModel.compileModel(at:)` and
/// moves the result to `DIR/<name>.mlmodelc` (or to `DIR` itself when it ends in `.mlmodelc`).
enum CompileCommand {
    static func run(_ arguments: [String]) throws {
        var model: String?
        var output: String?
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "-o", "--output":
                guard index + 1 < arguments.count else { throw CLIError("-o needs a directory") }
                output = arguments[index + 1]
                index += 2
            default:
                guard model == nil else { throw CLIError("usage: tessera compile MODEL -o DIR") }
                model = arguments[index]
                index += 1
            }
        }
        guard let model, let output else { throw CLIError("usage: tessera compile MODEL -o DIR") }
        let compiled = try MLModel.compileModel(at: URL(fileURLWithPath: model))
        var destination = URL(fileURLWithPath: output)
        if destination.pathExtension != "mlmodelc" {
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            destination.appendPathComponent(compiled.lastPathComponent)
        }
        if FileManager.default.fileExists(atPath: destination.path) {
            try FileManager.default.removeItem(at: destination)
        }
        try FileManager.default.moveItem(at: compiled, to: destination)
        try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent())
        let loaded = try MLModel(contentsOf: destination)
        print("compiled \(model) → \(destination.path)")
        print(
            "load it with MLModel(contentsOf:) — \(loaded.modelDescription.inputOrder.count) inputs, "
                + "\(loaded.modelDescription.outputOrder.count) outputs")
    }
}
