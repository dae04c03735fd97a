import Foundation
import TesseraProtobuf
import Testing
import _TesseraTestSupport

@testable import TesseraModels

/// Decoding NeuralNetwork specifications and their weights, against files coremltools wrote
/// (`tools/make_neuralnetwork_fixtures.py`) and hand-made `WeightParams`.
@Suite("NeuralNetwork specification")
struct NeuralNetworkSpecTests {
    /// The decoded specification of fixture `name`.
    func spec(_ name: String) throws -> CoreMLSpec.Model {
        let url = Fixtures.url("neuralnetwork/\(name)/model.mlmodel")
        return try CoreMLSpec.Model(decoding: try Data(contentsOf: url), file: "model.mlmodel")
    }

    @Test("a classifier decodes its kind, labels and probability layer")
    func classifier() throws {
        let model = try spec("classifier_int_labels")
        #expect(model.type == .neuralNetworkClassifier)
        let network = try #require(model.neuralNetwork)
        #expect(network.kind == .classifier)
        #expect(network.classLabels == .int64s([7, 11, 13]))
        #expect(network.labelProbabilityLayerName == "probs")
        #expect(network.layers.map(\.typeName) == ["innerProduct", "softmax"])
        #expect(model.classLabels == .int64s([7, 11, 13]))
    }

    @Test("the shape mappings and layer wiring decode as written")
    func layers() throws {
        let legacy = try #require(try spec("conv_valid").neuralNetwork)
        #expect(legacy.arrayInputShapeMapping == .rank5)
        #expect(legacy.layers.first?.inputs == ["x"] && legacy.layers.first?.outputs == ["y"])
        let exact = try #require(try spec("torch_small_cnn").neuralNetwork)
        #expect(exact.arrayInputShapeMapping == .exact)
        #expect(exact.summaryLines.first?.hasPrefix("layers (11, exact array mapping): convolution 3") == true)
        let untyped = try #require(try spec("invalid_unsupported_layer").neuralNetwork)
        #expect(untyped.summaryLines.contains("not supported by Tessera: layer field 0"))
        let loopBreak = try #require(try spec("invalid_control_flow_layer").neuralNetwork)
        #expect(!loopBreak.summaryLines.contains { $0.hasPrefix("not supported") })
    }

    @Test("sub-byte values unpack most significant bit first")
    func unpack() {
        // 3-bit values 5, 1, 7, 0, 2 → 101 001 111 000 010 (0 padding) = 0xA7 0x84.
        #expect(NeuralNetworkWeights.unpack([0xA7, 0x84], count: 5, bits: 3) == [5, 1, 7, 0, 2])
        #expect(NeuralNetworkWeights.unpack([0b1011_0000], count: 4, bits: 1) == [1, 0, 1, 1])
    }

    @Test("bad WeightParams throw naming the parameter")
    func badWeights() throws {
        func table(_ fields: (inout ProtobufWriter) -> Void) throws -> ProtobufFieldTable {
            var writer = ProtobufWriter()
            fields(&writer)
            return try ProtobufFieldTable(decoding: writer.bytes, message: "WeightParams")
        }
        let floats = try table { w in for v in [1, 2, 3] as [Float] { w.writeFloat(v, field: 1) } }
        #expect(try NeuralNetworkWeights.floats(floats, count: 3, what: "w") == [1, 2, 3])
        #expect(throws: OperandError.self) { try NeuralNetworkWeights.floats(floats, count: 4, what: "w") }
        let half = try table { $0.writeBytes([0x00, 0x3C, 0x00, 0xC0], field: 2) }  // 1.0, -2.0
        #expect(try NeuralNetworkWeights.floats(half, count: 2, what: "w") == [1, -2])
        let lut = try table { w in
            w.writeBytes([0b0001_1011], field: 30)  // 2-bit 0, 1, 2, 3
            w.writeMessage(field: 40) { q in
                q.writeUInt64(2, field: 1)
                q.writeMessage(field: 102) { t in for v in [0, 10, 20, 30] as [Float] { t.writeFloat(v, field: 1) } }
            }
        }
        #expect(try NeuralNetworkWeights.floats(lut, count: 4, what: "w") == [0, 10, 20, 30])
        let shortTable = try table { w in
            w.writeBytes([0b0001_1011], field: 30)
            w.writeMessage(field: 40) { q in
                q.writeUInt64(2, field: 1)
                q.writeMessage(field: 102) { t in for v in [0, 10, 20] as [Float] { t.writeFloat(v, field: 1) } }
            }
        }
        #expect(throws: OperandError.self) { try NeuralNetworkWeights.floats(shortTable, count: 4, what: "w") }
        let linear = try table { w in
            w.writeBytes([0, 255], field: 30)
            w.writeMessage(field: 40) { q in
                q.writeUInt64(8, field: 1)
                q.writeMessage(field: 101) { l in
                    l.writeFloat(0.5, field: 1)
                    l.writeFloat(-1, field: 2)
                }
            }
        }
        #expect(try NeuralNetworkWeights.floats(linear, count: 2, what: "w") == [-1, 126.5])
        #expect(throws: OperandError.self) { try NeuralNetworkWeights.floats(linear, count: 3, what: "w") }
    }
}
