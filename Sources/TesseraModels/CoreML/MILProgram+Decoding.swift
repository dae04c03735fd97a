import TesseraKernels
import TesseraProtobuf

extension MILProgram {
    /// Decodes `Program { version = 1; functions = 2 (map); docString = 3; attributes = 4 (map) }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Program") {
            var program = MILProgram(version: 0, functions: [:], docString: "", attributes: [:])
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: program.version = try reader.readInt64()
                case 2:
                    let entry = try reader.readMapEntry(default: MILFunction.empty) {
                        var child = try $0.readMessage()
                        return try MILFunction(from: &child)
                    }
                    program.functions[entry.key] = entry.value
                case 3: program.docString = try reader.readString()
                case 4:
                    let entry = try reader.readValueMapEntry()
                    program.attributes[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            return program
        }
    }
}

extension MILFunction {
    /// A function with nothing in it: the value of a map entry that omits its value.
    static let empty = MILFunction(inputs: [], opset: "", blockSpecializations: [:], attributes: [:])

    /// Decodes `Function { inputs = 1; opset = 2; block_specializations = 3 (map); attributes = 4 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Function") {
            var function = MILFunction.empty
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    function.inputs.append(try MILNamedValueType(from: &child))
                case 2: function.opset = try reader.readString()
                case 3:
                    let entry = try reader.readMapEntry(default: MILBlock.empty) {
                        var child = try $0.readMessage()
                        return try MILBlock(from: &child)
                    }
                    function.blockSpecializations[entry.key] = entry.value
                case 4:
                    let entry = try reader.readValueMapEntry()
                    function.attributes[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            return function
        }
    }
}

extension MILBlock {
    /// A block with nothing in it.
    static let empty = MILBlock(inputs: [], outputs: [], operations: [], attributes: [:])

    /// Decodes `Block { inputs = 1; outputs = 2; operations = 3; attributes = 4 }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Block") {
            var block = MILBlock.empty
            var operations: [ProtobufReader] = []
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1:
                    var child = try reader.readMessage()
                    block.inputs.append(try MILNamedValueType(from: &child))
                case 2: block.outputs.append(try reader.readString())
                case 3: operations.append(try reader.readMessage())
                case 4:
                    let entry = try reader.readValueMapEntry()
                    block.attributes[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            block.operations = try MILOperation.decode(operations)
            return block
        }
    }
}

extension MILOperation {
    /// Decodes a block's operations from their messages, in order; a block of many (a whole
    /// network's: MobileNetV2 has 539, most of them `const`) is decoded in runs across the
    /// kernel workers, since the operations are independent messages and decoding them was a
    /// third of loading a compiled model.
    ///
    /// - Throws: The error of the first operation, in block order, that does not decode.
    static func decode(_ messages: [ProtobufReader]) throws -> [MILOperation] {
        // About 2 µs per operation: below a few dozen, handing runs out costs more than it saves.
        guard messages.count >= 64 else {
            return try messages.map { message in
                var reader = message
                return try MILOperation(from: &reader)
            }
        }
        var decoded = [Result<MILOperation, any Error>?](repeating: nil, count: messages.count)
        decoded.withUnsafeMutableBufferPointer { results in
            nonisolated(unsafe) let results = results
            parallelFor(count: messages.count, cost: ParallelCost(nanosecondsPerItem: 2_000)) { range in
                for index in range {
                    var reader = messages[index]
                    results[index] = Result { try MILOperation(from: &reader) }
                }
            }
        }
        return try decoded.map { try $0!.get() }
    }

    /// Decodes `Operation { type = 1; inputs = 2 (map); outputs = 3; blocks = 4; attributes = 5 (map) }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Operation") {
            var operation = MILOperation(type: "", inputs: [:], outputs: [], blocks: [], attributes: [:])
            while let tag = try reader.nextField() {
                switch tag.fieldNumber {
                case 1: operation.type = try reader.readString()
                case 2:
                    let entry = try reader.readMapEntry(default: MILArgument(bindings: [])) {
                        var child = try $0.readMessage()
                        return try MILArgument(from: &child)
                    }
                    operation.inputs[entry.key] = entry.value
                case 3:
                    var child = try reader.readMessage()
                    operation.outputs.append(try MILNamedValueType(from: &child))
                case 4:
                    var child = try reader.readMessage()
                    operation.blocks.append(try MILBlock(from: &child))
                case 5:
                    let entry = try reader.readValueMapEntry()
                    operation.attributes[entry.key] = entry.value
                default: try reader.skipField()
                }
            }
            guard !operation.type.isEmpty else { throw reader.invalid("an operation has no type") }
            return operation
        }
    }
}

extension MILArgument {
    /// Decodes `Argument { repeated Binding arguments = 1 }`, each
    /// `Binding { oneof { string name = 1; Value value = 2 } }`.
    init(from reader: inout ProtobufReader) throws {
        self = try decodingMessage("Argument") {
            var bindings: [MILBinding] = []
            while let tag = try reader.nextField() {
                guard tag.fieldNumber == 1 else {
                    try reader.skipField()
                    continue
                }
                var binding = try reader.readMessage()
                var result: MILBinding?
                while let field = try binding.nextField() {
                    switch field.fieldNumber {
                    case 1: result = .name(try binding.readString())
                    case 2:
                        var child = try binding.readMessage()
                        result = .value(try MILValue(from: &child))
                    default: try binding.skipField()
                    }
                }
                guard let result else { throw reader.invalid("an argument binding has neither a name nor a value") }
                bindings.append(result)
            }
            return MILArgument(bindings: bindings)
        }
    }
}

extension ProtobufReader {
    /// Decodes a `map<string, Value>` entry.
    mutating func readValueMapEntry() throws -> (key: String, value: MILValue) {
        try readMapEntry(default: MILValue(type: nil, storage: .none)) {
            var child = try $0.readMessage()
            return try MILValue(from: &child)
        }
    }
}
