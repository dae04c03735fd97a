import Foundation
import TesseraMultiArray
import TesseraTensor

// Core ML's conversions between feature kinds, as classic models apply them to their inputs:
// an int64 read as a double and back, a one-element multi-array read as a number, a
// multi-array of any numeric data type read as doubles.

extension MLFeatureValue {
    /// The value as a number: a double, an int64, or the element of a one-element
    /// multi-array; `nil` for other kinds.
    ///
    /// ```swift
    /// MLFeatureValue(int64: 3).numericValue      // 3.0
    /// ```
    var numericValue: Double? {
        switch storage {
        case .double(let value): value
        case .int64(let value): Double(value)
        case .multiArray(let array) where array.count == 1: Self.doubles(of: array)[0]
        default: nil
        }
    }

    /// The value as an integer: an int64, an integral double, or the element of a
    /// one-element multi-array holding one; `nil` otherwise.
    var integerValue: Int64? {
        if case .int64(let value) = storage { return value }
        guard let number = numericValue, number.rounded() == number, abs(number) < 9.2e18 else { return nil }
        return Int64(number)
    }

    /// A number's or a multi-array's elements as doubles, row-major; `nil` for other kinds.
    var doubleElements: [Double]? {
        switch storage {
        case .double(let value): [value]
        case .int64(let value): [Double(value)]
        case .multiArray(let array): Self.doubles(of: array)
        default: nil
        }
    }

    /// A multi-array's elements as doubles in row-major order (a contiguous `.double` array
    /// is copied directly; other data types and layouts are converted).
    static func doubles(of array: MLMultiArray) -> [Double] {
        let shape = array.shapeValues
        if array.dataType == .double, array.strideValues == contiguousStrides(shape) {
            let count = array.count
            return array.withUnsafeBufferPointer(ofType: Double.self) { Array($0.prefix(count)) }
        }
        return MLShapedArray<Double>(converting: array).scalars
    }

    /// Row-major strides of `shape`.
    static func contiguousStrides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var stride = 1
        for axis in shape.indices.reversed() {
            strides[axis] = stride
            stride *= shape[axis]
        }
        return strides
    }

    /// A multi-array value of `dataType` and `shape` holding `values` (row-major).
    static func array(_ values: [Double], shape: [Int], dataType: MLMultiArrayDataType) -> MLFeatureValue {
        let double = MLShapedArray<Double>(scalars: values, shape: shape)
        let array: MLMultiArray =
            switch dataType {
            case .double: MLMultiArray(double)
            case .int32: MLMultiArray(MLShapedArray<Int32>(converting: MLMultiArray(double)))
            default: MLMultiArray(MLShapedArray<Float>(converting: MLMultiArray(double)))
            }
        return MLFeatureValue(multiArray: array)
    }

    /// `values` as the kind `description` declares: a double, an int64 (rounded toward
    /// zero), or a multi-array of its data type and shape (`[count]` when it declares none).
    static func numeric(_ values: [Double], as description: MLFeatureDescription?) -> MLFeatureValue {
        switch description?.type {
        case .double? where values.count == 1: return MLFeatureValue(double: values[0])
        case .int64? where values.count == 1: return MLFeatureValue(int64: Int64(values[0]))
        default:
            let constraint = description?.multiArrayConstraint
            let declared = constraint?.shapeValues ?? []
            let shape = declared.reduce(1, *) == values.count && !declared.isEmpty ? declared : [values.count]
            return array(values, shape: shape, dataType: constraint?.dataType ?? .double)
        }
    }
}

/// Reads a classic model's numeric inputs into one vector of doubles: each input in the
/// description's order, a number as one element and a multi-array as its elements.
///
/// This is how Core ML feeds linear models, SVMs, tree ensembles and k-NN: a model
/// converted with one double input per column (`f0`, `f1`, … from XGBoost) and one with a
/// single multi-array input read the same vector.
struct FeatureVectorReader: Sendable {
    /// Per input: its description and its width (`nil` when the description leaves it open).
    let columns: [(feature: MLFeatureDescription, width: Int?)]
    /// The vector's length, when every width is known.
    let width: Int?

    /// Plans the reading of `interface`'s inputs.
    ///
    /// - Parameter exactWidth: The length the model needs, when it knows it (a linear model's
    ///   weight count); an input of open width takes what the others leave.
    /// - Throws: ``ModelFormatError`` when an input is not numeric or the widths disagree.
    init(_ interface: ClassicInterface, exactWidth: Int?, file: String) throws {
        var columns: [(feature: MLFeatureDescription, width: Int?)] = []
        for input in interface.inputs {
            switch input.type {
            case .double, .int64: columns.append((input, 1))
            case .multiArray:
                let shape = input.multiArrayConstraint?.shapeValues ?? []
                columns.append((input, shape.isEmpty ? nil : shape.reduce(1, *)))
            default:
                throw interface.invalid(
                    "input \"\(input.name)\" is a \(input.type); the model reads numbers or multi-arrays", file: file)
            }
        }
        guard !columns.isEmpty else { throw interface.invalid("the model declares no input", file: file) }
        let open = columns.indices.filter { columns[$0].width == nil }
        let known = columns.compactMap(\.width).reduce(0, +)
        if let exactWidth {
            if open.count == 1 {
                columns[open[0]].width = exactWidth - known
            }
            let total = columns.compactMap(\.width).reduce(0, +)
            if open.count <= 1, total != exactWidth || (open.count == 1 && exactWidth - known < 1) {
                throw interface.invalid(
                    "the inputs hold \(open.count == 1 ? known : total) values, but the model's parameters need "
                        + "\(exactWidth)", file: file)
            }
        }
        self.columns = columns
        width = columns.allSatisfy({ $0.width != nil }) ? columns.compactMap(\.width).reduce(0, +) : nil
    }

    /// The row's vector. A missing optional input reads as NaN (a missing value).
    ///
    /// - Throws: ``MLModelError`` `.featureType` naming the input when it is missing, of a
    ///   kind that holds no numbers (a string, a dictionary) or of the wrong size.
    func read(_ row: any MLFeatureProvider, _ interface: ClassicInterface) throws -> [Double] {
        if columns.count == 1, let value = row.featureValue(for: columns[0].feature.name),
            case .multiArray(let array) = value.storage, columns[0].width == nil || columns[0].width == array.count
        {
            return MLFeatureValue.doubles(of: array)
        }
        var vector: [Double] = []
        vector.reserveCapacity(width ?? 16)
        for (feature, width) in columns {
            guard let value = try interface.value(of: feature, in: row) else {
                vector.append(contentsOf: repeatElement(Double.nan, count: width ?? 1))
                continue
            }
            if width == 1, let number = value.numericValue {
                vector.append(number)
                continue
            }
            guard let elements = value.doubleElements else {
                throw interface.inputError(
                    "input \"\(feature.name)\" is a \(value.type) value, but the model expects \(feature.expectation)")
            }
            if let width, elements.count != width {
                throw interface.inputError(
                    "input \"\(feature.name)\" has \(elements.count) values, but the model expects \(width)")
            }
            vector.append(contentsOf: elements)
        }
        return vector
    }

    /// Writes the row's vector (``width`` values, every width known) at `destination`, as
    /// ``read(_:_:)`` reads it but without an array per row.
    private func write(
        _ row: any MLFeatureProvider, _ interface: ClassicInterface, into destination: UnsafeMutablePointer<Double>
    ) throws {
        var at = destination
        for (feature, width) in columns {
            let width = width ?? 0
            if let value = row.featureValue(for: feature.name) {
                switch value.storage {
                case .double(let number) where width == 1:
                    at.pointee = number
                    at += 1
                    continue
                case .int64(let number) where width == 1:
                    at.pointee = Double(number)
                    at += 1
                    continue
                case .multiArray(let array)
                where array.dataType == .double && array.count == width
                    && array.strideValues == MLFeatureValue.contiguousStrides(array.shapeValues):
                    array.withUnsafeBufferPointer(ofType: Double.self) {
                        at.update(from: $0.baseAddress!, count: width)
                    }
                    at += width
                    continue
                default: break
                }
            }
            // Every other kind (and every error) as `read` handles it.
            let vector = try FeatureVectorReader(columns: [(feature, width)]).read(row, interface)
            at.update(from: vector, count: width)
            at += width
        }
    }

    /// A reader of the given columns, all widths known.
    private init(columns: [(feature: MLFeatureDescription, width: Int?)]) {
        self.columns = columns
        width = columns.compactMap(\.width).reduce(0, +)
    }

    /// Every row's vector, stacked into one row-major matrix of `rows.count × width`.
    ///
    /// - Throws: as ``read(_:_:)``, with the item's index in front; and when rows of an
    ///   open-width input differ in length.
    func readMatrix(_ rows: [any MLFeatureProvider], _ interface: ClassicInterface) throws -> (
        values: [Double], width: Int
    ) {
        if let width, width > 0 {
            // Every width known: each row writes its values straight into the matrix.
            var failure: (any Error)?
            let matrix = [Double](unsafeUninitializedCapacity: rows.count * width) { buffer, count in
                for (index, row) in rows.enumerated() {
                    do {
                        try ClassicBatch.item(index) {
                            try write(row, interface, into: buffer.baseAddress! + index * width)
                        }
                    } catch {
                        failure = error
                        buffer.baseAddress!.initialize(repeating: 0, count: rows.count * width)
                        break
                    }
                }
                count = rows.count * width
            }
            if let failure { throw failure }
            return (matrix, width)
        }
        var matrix: [Double] = []
        var rowWidth = width ?? -1
        for (index, row) in rows.enumerated() {
            let vector = try ClassicBatch.item(index) { try read(row, interface) }
            if rowWidth < 0 { rowWidth = vector.count }
            guard vector.count == rowWidth else {
                throw MLModelError(
                    .featureType,
                    "batch input \(index): \(interface.part): the input holds \(vector.count) values, but batch "
                        + "input 0 holds \(rowWidth)")
            }
            matrix.append(contentsOf: vector)
        }
        return (matrix, max(rowWidth, 0))
    }
}
