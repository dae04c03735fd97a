import TesseraKernels

extension GraphOp {
    /// The word a leaf (a value that exists) is written as in a plan key.
    static let constantCode = 0

    /// Writes the op as words for a plan key: a tag, then the payload with its lengths, so
    /// different ops never write the same words.
    ///
    /// The common ops are written inline; the rest are numbered through `codes`, which gives
    /// each distinct op a number (new ops need no change here to be keyed right). The codes
    /// belong to the plan cache: the two are emptied together.
    func encode(into words: inout [Int], codes: inout [GraphOp: Int]) {
        switch self {
        case .constant:
            words.append(GraphOp.constantCode)
        case .unary(let op):
            words.append(1)
            words.append(Int(op.rawValue))
        case .binary(let op):
            words.append(2)
            words.append(Int(op.rawValue))
        case .select:
            words.append(3)
        case .cast(let type):
            words.append(4)
            words.append(Int(type.rawValue))
        case .broadcast(let shape):
            words.append(5)
            words.append(shape.count)
            for dimension in shape { words.append(dimension) }
        case .reshape(let shape):
            words.append(6)
            words.append(shape.count)
            for dimension in shape { words.append(dimension) }
        case .reduce(let op, let axes):
            words.append(7)
            words.append(Int(op.rawValue))
            words.append(axes.count)
            for axis in axes { words.append(axis) }
        case .matmul:
            words.append(8)
        default:
            words.append(9)
            if let code = codes[self] {
                words.append(code)
            } else {
                words.append(codes.count)
                codes[self] = codes.count
            }
        }
    }
}
