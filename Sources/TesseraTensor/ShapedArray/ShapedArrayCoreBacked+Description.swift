import TesseraKernels

// Text, equality and coding.

extension _MLShapedArrayCoreBacked {
    /// The scalars as NumPy-style nested brackets.
    ///
    /// Rank 0 prints the scalar alone; rows of a matrix go on separate lines, aligned under
    /// their opening bracket, and blocks of rank 3 and above are separated by a blank line.
    ///
    /// ```swift
    /// MLShapedArray<Float>(scalars: [1, 2, 3, 4], shape: [2, 2]).description
    /// // [[1.0, 2.0],
    /// //  [3.0, 4.0]]
    /// ```
    public var description: String {
        let scalars = self.scalars
        let shape = self.shape
        if shape.isEmpty { return "\(scalars[0])" }
        var text = ""
        Self.describe(scalars, shape: shape, axis: 0, start: 0, into: &text)
        return text
    }

    /// Appends the block of `shape[axis...]` starting at `start` in `scalars`.
    private static func describe(_ scalars: [Scalar], shape: [Int], axis: Int, start: Int, into text: inout String) {
        text += "["
        let size = shape[axis]
        if axis == shape.count - 1 {
            for i in 0..<size {
                if i > 0 { text += ", " }
                text += "\(scalars[start + i])"
            }
        } else {
            let block = shape[(axis + 1)...].reduce(1, *)
            let separator =
                "," + String(repeating: "\n", count: shape.count - axis - 1)
                + String(repeating: " ", count: axis + 1)
            for i in 0..<size {
                if i > 0 { text += separator }
                describe(scalars, shape: shape, axis: axis + 1, start: start + i * block, into: &text)
            }
        }
        text += "]"
    }

    /// Whether two arrays have the same shape and the same scalars (strides do not matter).
    ///
    /// ```swift
    /// m == m.transposed().transposed()    // true
    /// ```
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.shape == rhs.shape && lhs.scalars == rhs.scalars
    }
}

/// The keys of the coded form: the shape and the row-major scalars.
private enum ShapedArrayCodingKeys: String, CodingKey {
    case shape
    case scalars
}

extension _MLShapedArrayCoreBacked {
    /// Encodes the shape and the row-major scalars (`{"shape": [2, 2], "scalars": [1, 2, 3, 4]}`
    /// with `JSONEncoder`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ShapedArrayCodingKeys.self)
        try container.encode(shape, forKey: .shape)
        try container.encode(scalars, forKey: .scalars)
    }

    /// Decodes the form ``encode(to:)`` writes.
    ///
    /// ```swift
    /// let back = try JSONDecoder().decode(MLShapedArray<Float>.self, from: JSONEncoder().encode(m))
    /// ```
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the shape has a negative dimension or does not
    ///   match the number of scalars (bad input never traps).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: ShapedArrayCodingKeys.self)
        let shape = try container.decode([Int].self, forKey: .shape)
        let scalars = try container.decode([Scalar].self, forKey: .scalars)
        guard shape.allSatisfy({ $0 >= 0 }), let expected = shape.checkedElementCount else {
            throw DecodingError.dataCorruptedError(
                forKey: .shape, in: container, debugDescription: "invalid shape \(shape)")
        }
        guard expected == scalars.count else {
            throw DecodingError.dataCorruptedError(
                forKey: .scalars, in: container,
                debugDescription: "\(scalars.count) scalars do not match shape \(shape) (\(expected) scalars)")
        }
        self.init(scalars: scalars, shape: shape)
    }
}
