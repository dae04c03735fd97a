import Foundation
import TesseraModels
import TesseraProtobuf
import Testing
import _TesseraTestSupport

@Suite("Compute plan: structure, devices, costs")
struct ComputePlanTests {
    /// Loads a plan and the main function of its program.
    func mainFunction(_ url: URL) async throws -> (MLComputePlan, MLModelStructure.Program.Function) {
        let plan = try await MLComputePlan.load(contentsOf: url, configuration: MLModelConfiguration())
        guard case .program(let program) = plan.modelStructure, let main = program.functions["main"] else {
            Issue.record("\(url.lastPathComponent) has no program with a main function")
            throw CancellationError()
        }
        return (plan, main)
    }

    @Test("operations, operator names, inputs and outputs match what coremltools read", arguments: ModelFixture.all)
    func structureMatchesFixture(_ fixture: ModelFixture) async throws {
        let (_, main) = try await mainFunction(fixture.packageURL)
        #expect(main.inputs.map(\.name) == fixture.program.functionInputs.map(\.name))
        #expect(main.block.outputNames == fixture.program.blockOutputs)
        #expect(main.block.operations.map(\.operatorName) == fixture.program.operations.map(\.type))
        for (operation, expected) in zip(main.block.operations, fixture.program.operations) {
            #expect(operation.outputs.map(\.name) == expected.outputs)
            #expect(Set(operation.inputs.keys) == Set(expected.inputs.keys), "\(operation.operatorName)")
            for (name, names) in expected.inputs {
                // The summary writes "<value>" for a literal binding.
                let bound: [String] =
                    operation.inputs[name]?.bindings.map {
                        if case .name(let value) = $0 { value } else { "<value>" }
                    } ?? []
                #expect(bound == names, "\(operation.operatorName).\(name)")
            }
        }
    }

    @Test(
        "cost weights sum to 1, constants weigh 0, conv and linear outweigh element-wise ops",
        arguments: ModelFixture.all)
    func costWeights(_ fixture: ModelFixture) async throws {
        let (plan, main) = try await mainFunction(fixture.packageURL)
        let weights = main.block.operations.map { plan.estimatedCost(of: $0)?.weight }
        #expect(weights.allSatisfy { $0 != nil })
        let total = weights.reduce(0) { $0 + ($1 ?? 0) }
        #expect(abs(total - 1) < 1e-9)
        for (operation, weight) in zip(main.block.operations, weights) {
            if operation.operatorName == "const" || operation.operatorName.hasPrefix("constexpr_") {
                #expect(weight == 0)
            } else {
                #expect((weight ?? 0) > 0, "\(operation.operatorName)")
            }
        }
        let heavy = zip(main.block.operations, weights).filter { ["conv", "linear"].contains($0.0.operatorName) }
        let light = zip(main.block.operations, weights).filter {
            ["relu", "softmax", "add", "mul"].contains($0.0.operatorName)
        }
        for (heavyOperation, heavyWeight) in heavy {
            for (lightOperation, lightWeight) in light {
                #expect(
                    (heavyWeight ?? 0) > (lightWeight ?? 1),
                    "\(heavyOperation.operatorName) should outweigh \(lightOperation.operatorName)")
            }
        }
    }

    @Test("conv's weight reflects its FLOPs: 2 × output elements × Cin × k × k")
    func convFlops() async throws {
        // conv_fp32: image [1, 3, 8, 8], weight [4, 3, 3, 3], output [1, 4, 8, 8] (same padding):
        // 2 · 256 · 27 = 13,824 FLOPs and ~2.3 KB; the other ops are element-wise over ≤ 256
        // elements.
        let (plan, main) = try await mainFunction(modelFixture("conv_fp32.mlpackage"))
        let conv = try #require(main.block.operations.first { $0.operatorName == "conv" })
        let relu = try #require(main.block.operations.first { $0.operatorName == "relu" })
        let convWeight = try #require(plan.estimatedCost(of: conv)?.weight)
        let reluWeight = try #require(plan.estimatedCost(of: relu)?.weight)
        // relu: 256 FLOPs but 2 KiB moved, so memory time keeps it near a quarter.
        #expect(convWeight > 0.5)
        #expect(convWeight > 2 * reluWeight)
    }

    @Test("every non-const operation prefers and supports only the CPU; constants have no device")
    func deviceUsage() async throws {
        let (plan, main) = try await mainFunction(modelFixture("linear_relu_softmax.mlpackage"))
        for operation in main.block.operations {
            let usage = plan.deviceUsage(for: operation)
            if operation.operatorName == "const" {
                #expect(usage == nil)
                continue
            }
            let unwrapped = try #require(usage)
            guard case .cpu = unwrapped.preferred else {
                Issue.record("\(operation.operatorName) prefers \(unwrapped.preferred)")
                continue
            }
            #expect(unwrapped.supported == [unwrapped.preferred])
            #expect(unwrapped.preferredComputeDevice == unwrapped.preferred)
        }
        #expect(MLModel.availableComputeDevices.count == 1)
        #expect(MLModel.availableComputeDevices.first.map { "\($0)" } == "CPU")
        #expect(MLComputeDevice.allComputeDevices == MLModel.availableComputeDevices)
    }

    @Test("a plan answers only for its own operations")
    func foreignOperation() async throws {
        let (plan, _) = try await mainFunction(modelFixture("linear_relu_softmax.mlpackage"))
        let (_, otherMain) = try await mainFunction(modelFixture("linear_relu_softmax.mlpackage"))
        let foreign = try #require(otherMain.block.operations.first { $0.operatorName == "linear" })
        #expect(plan.deviceUsage(for: foreign) == nil)
        #expect(plan.estimatedCost(of: foreign) == nil)
    }

    @Test("types describe as MIL writes them; literals are bound as values")
    func typesAndValues() async throws {
        let (_, main) = try await mainFunction(modelFixture("conv_fp32.mlpackage"))
        #expect(main.inputs.map { "\($0.type)" } == ["fp32[1, 3, 8, 8]"])
        let conv = try #require(main.block.operations.first { $0.operatorName == "conv" })
        #expect(conv.outputs.map { "\($0.type)" } == ["fp32[1, 4, 8, 8]"])
        let weight = try #require(main.block.operations.first)
        #expect(weight.operatorName == "const" && weight.inputs.isEmpty && weight.blocks.isEmpty)
    }

    @Test("a multi-function program lists every function, each with weights summing to 1")
    func multiFunction() async throws {
        let plan = try await MLComputePlan.load(
            contentsOf: modelFixture("multifunction.mlpackage"), configuration: MLModelConfiguration())
        guard case .program(let program) = plan.modelStructure else {
            Issue.record("not a program")
            return
        }
        #expect(Set(program.functions.keys) == ["main", "scaled"])
        for (name, function) in program.functions {
            let total = function.block.operations.reduce(0) { $0 + (plan.estimatedCost(of: $1)?.weight ?? 0) }
            #expect(abs(total - 1) < 1e-9, "\(name)")
        }
        let scaled = try #require(program.functions["scaled"])
        #expect(
            scaled.block.operations.filter { $0.operatorName != "const" }.map(\.operatorName) == [
                "linear", "mul", "add",
            ])
    }

    @Test("a neural network's layers, and their device")
    func neuralNetwork() async throws {
        let url = modelFixture("neural_network.mlmodel")
        let plan = try await MLComputePlan.load(contentsOf: url, configuration: MLModelConfiguration())
        guard case .neuralNetwork(let network) = plan.modelStructure else {
            Issue.record("expected a neural network, got \(plan.modelStructure)")
            return
        }
        // coremltools reads one layer: relu, an `activation` layer from x to y.
        #expect(network.layers.map(\.name) == ["relu"])
        #expect(network.layers.map(\.type) == ["activation"])
        #expect(network.layers.first?.inputNames == ["x"])
        #expect(network.layers.first?.outputNames == ["y"])
        if case .cpu? = network.layers.first.flatMap({ plan.deviceUsage(for: $0)?.preferred }) {
        } else {
            Issue.record("the layer should run on the CPU")
        }
        let structure = try await MLModelStructure.load(contentsOf: url)
        guard case .neuralNetwork(let loaded) = structure else {
            Issue.record("MLModelStructure.load disagrees")
            return
        }
        #expect(loaded.layers.map(\.type) == ["activation"])
    }

    @Test("compiled models have the same structure and costs as their packages")
    func compiledStructure() async throws {
        let compiled = try await MLModel.compileModel(at: modelFixture("conv_fp16.mlpackage"))
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let (packagePlan, packageMain) = try await mainFunction(modelFixture("conv_fp16.mlpackage"))
        let (compiledPlan, compiledMain) = try await mainFunction(compiled)
        #expect(packageMain.block.operations.map(\.operatorName) == compiledMain.block.operations.map(\.operatorName))
        for (a, b) in zip(packageMain.block.operations, compiledMain.block.operations) {
            let x = packagePlan.estimatedCost(of: a)?.weight ?? -1
            let y = compiledPlan.estimatedCost(of: b)?.weight ?? -2
            // Widening fp16 weights to fp32 changes the bytes read, so weights move a little.
            #expect(abs(x - y) < 0.1, "\(a.operatorName)")
        }
        let network = try await MLModel.compileModel(at: modelFixture("neural_network.mlmodel"))
        defer { try? FileManager.default.removeItem(at: network.deletingLastPathComponent()) }
        let structure = try await MLModelStructure.load(contentsOf: network)
        if case .neuralNetwork(let loaded) = structure {
            #expect(loaded.layers.map(\.name) == ["relu"])
        } else {
            Issue.record("a compiled neural network lost its layers")
        }
    }

    @Test("a missing model throws .io")
    func missing() async {
        await #expect(throws: MLModelError.self) {
            _ = try await MLComputePlan.load(
                contentsOf: URL(fileURLWithPath: "/nonexistent/M.mlpackage"), configuration: MLModelConfiguration())
        }
    }
}

@Suite("Compute plan: pipelines")
struct ComputePlanPipelineTests {
    @Test("a pipeline lists its sub-models' names and structures; layer types come from the oneof field")
    func pipeline() async throws {
        // Model { specificationVersion 4, pipeline { models: [NN(activation x→y), NN(innerProduct y→z)],
        //         names: ["first", "second"] } }
        func network(
            _ name: String, _ field: Int, _ input: String, _ output: String
        ) -> (inout ProtobufWriter) -> Void {
            { model in
                model.writeInt64(4, field: 1)
                model.writeMessage(field: 500) { network in
                    network.writeMessage(field: 1) { layer in
                        layer.writeString(name, field: 1)
                        layer.writeString(input, field: 2)
                        layer.writeString(output, field: 3)
                        layer.writeMessage(field: field) { _ in }
                    }
                }
            }
        }
        var writer = ProtobufWriter()
        writer.writeInt64(4, field: 1)
        writer.writeMessage(field: 202) { pipeline in
            pipeline.writeMessage(field: 1, network("act", 130, "x", "y"))
            pipeline.writeMessage(field: 1, network("fc", 140, "y", "z"))
            pipeline.writeString("first", field: 2)
            pipeline.writeString("second", field: 2)
        }
        let scratch = try TemporaryDirectory()
        let url = scratch.url.appendingPathComponent("Pipeline.mlmodel")
        try Data(writer.bytes).write(to: url)
        let plan = try await MLComputePlan.load(contentsOf: url, configuration: MLModelConfiguration())
        guard case .pipeline(let pipeline) = plan.modelStructure else {
            Issue.record("expected a pipeline, got \(plan.modelStructure)")
            return
        }
        #expect(pipeline.subModelNames == ["first", "second"])
        var types: [String] = []
        for model in pipeline.subModels {
            guard case .neuralNetwork(let network) = model else {
                Issue.record("expected neural networks")
                continue
            }
            types += network.layers.map(\.type)
            #expect(network.layers.allSatisfy { plan.deviceUsage(for: $0) != nil })
        }
        #expect(types == ["activation", "innerProduct"])
    }
}
