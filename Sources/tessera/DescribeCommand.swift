import Tessera

/// `tessera describe MODEL`: the model's inputs, outputs, metadata and operation counts
/// (MODEL is an `.mlpackage`, `.mlmodel` or Tessera-compiled `.mlmodelc`),
/// read from the file without running it (so models with unsupported ops describe too).
enum DescribeCommand {
    static func run(_ arguments: [String]) throws {
        guard arguments.count == 1 else { throw CLIError("usage: tessera describe MODEL") }
        let url = URL(fileURLWithPath: arguments[0])
        let corePackage: CoreMLPackage
        do {
            corePackage = try ModelSource.open(url)
        } catch let error as MLModelError {
            throw CLIError(error.message)
        }
        let spec = corePackage.model
        let description = try MLModelDescription(spec, functionName: nil)
        let kind = spec.type.map { "\($0)" } ?? "no model type"
        print("\(url.lastPathComponent): \(kind), specification version \(spec.specificationVersion)")
        if let about = description.metadata[.description] as? String { print("  \(about)") }

        print("\ninputs")
        for name in description.inputOrder {
            let feature = description.inputDescriptionsByName[name]!
            print("  \(feature)" + (feature.shortDescription.isEmpty ? "" : "  — \(feature.shortDescription)"))
        }
        print("outputs")
        for name in description.outputOrder {
            let feature = description.outputDescriptionsByName[name]!
            var role = ""
            if name == description.predictedFeatureName { role = "  (predicted label)" }
            if name == description.predictedProbabilitiesName { role = "  (class probabilities)" }
            print("  \(feature)\(role)")
        }
        if let labels = description.classLabels {
            print("class labels (\(labels.count)): " + labels.map { "\($0)" }.joined(separator: ", "))
        }

        print("metadata")
        for (key, title) in [
            (MLModelMetadataKey.author, "author"), (.license, "license"), (.versionString, "version"),
        ] {
            if let value = description.metadata[key] as? String { print("  \(title): \(value)") }
        }
        let creator = description.metadata[.creatorDefinedKey] as? [String: String] ?? [:]
        for key in creator.keys.sorted() { print("  \(key): \(creator[key]!)") }

        for line in spec.neuralNetwork?.summaryLines ?? [] { print(line) }
        if let classic = spec.classic {
            print("structure")
            for line in classic.summary(type: spec.type, indent: "  ") { print(line) }
        }
        if let program = spec.mlProgram {
            for name in program.functions.keys.sorted() {
                let function = program.functions[name]!
                let operations = (try? function.block().operations) ?? []
                var counts: [String: Int] = [:]
                for operation in operations { counts[operation.type, default: 0] += 1 }
                let listed = counts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }
                print(
                    "operations in \(name) (\(function.opset), \(operations.count)): " + listed.joined(separator: ", "))
            }
        }
    }
}
