import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// The parallel C arrays of `tessera_model_predict`, read back into feature providers.
///
/// Multi-array features wrap the caller's memory without copying; the providers must not
/// outlive the call that passed the arrays.
struct FeatureArrays {
    /// The most dimensions a multi-array feature may have.
    static let maximumRank = 32

    var count: Int
    var items: UnsafePointer<Int32>?
    var names: UnsafePointer<UnsafePointer<CChar>?>?
    var kinds: UnsafePointer<Int32>?
    var dataTypes: UnsafePointer<Int32>?
    var ranks: UnsafePointer<Int32>?
    var shapes: UnsafePointer<Int64>?
    var strides: UnsafePointer<Int64>?
    var data: UnsafePointer<UnsafeRawPointer?>?
    var integers: UnsafePointer<Int64>?
    var doubles: UnsafePointer<Double>?

    /// One provider per item, in item order.
    ///
    /// - Throws: ``CABIError`` for an argument out of range (a null array, an unknown kind or
    ///   data type, a rank over ``maximumRank``); ``MLModelError`` for a value Core ML refuses.
    func providers(itemCount: Int) throws -> [any MLFeatureProvider] {
        guard itemCount >= 1, count >= 0 else {
            throw CABIError(
                code: CABIError.badArgument, "\(itemCount) items and \(count) features; need at least one item")
        }
        guard count == 0 || (items != nil && names != nil && kinds != nil) else {
            throw CABIError(code: CABIError.badArgument, "items, names and kinds must not be null")
        }
        var features = [[String: MLFeatureValue]](repeating: [:], count: itemCount)
        var dimension = 0
        for index in 0..<count {
            let item = Int(items![index])
            guard (0..<itemCount).contains(item), let namePointer = names![index] else {
                throw CABIError(
                    code: CABIError.badArgument, "feature \(index): item \(item) or its name is out of range")
            }
            let name = String(cString: namePointer)
            features[item][name] = try value(at: index, name: name, dimension: &dimension)
        }
        return features.map { MLDictionaryFeatureProvider(features: $0) }
    }

    /// The value of feature `index`; `dimension` is where its shape starts in `shapes` and
    /// moves past it.
    private func value(at index: Int, name: String, dimension: inout Int) throws -> MLFeatureValue {
        let kind = MLFeatureType(rawValue: Int(kinds![index]))
        switch kind {
        case .int64:
            return MLFeatureValue(int64: try required(integers, "integers")[index])
        case .double:
            return MLFeatureValue(double: try required(doubles, "doubles")[index])
        case .string:
            return MLFeatureValue(string: String(cString: try text(at: index, name: name)))
        case .dictionary:
            return try dictionary(at: index, name: name)
        case .multiArray:
            return MLFeatureValue(multiArray: try multiArray(at: index, name: name, dimension: &dimension))
        default:
            throw CABIError(
                code: Int32(MLModelError.Code.featureType.rawValue),
                "input \"\(name)\": Tessera's Python binding cannot pass a feature of kind \(kinds![index]) "
                    + "(\(kind?.description ?? "unknown")); it passes multi-arrays, int64, double, string and dictionary values"
            )
        }
    }

    private func required<T>(_ pointer: UnsafePointer<T>?, _ what: String) throws -> UnsafePointer<T> {
        guard let pointer else { throw CABIError(code: CABIError.badArgument, "\(what) must not be null") }
        return pointer
    }

    private func text(at index: Int, name: String) throws -> UnsafePointer<CChar> {
        guard let pointer = try required(data, "data")[index] else {
            throw CABIError(code: CABIError.badArgument, "input \"\(name)\": its text is null")
        }
        return pointer.assumingMemoryBound(to: CChar.self)
    }

    private func dictionary(at index: Int, name: String) throws -> MLFeatureValue {
        let json = Data(String(cString: try text(at: index, name: name)).utf8)
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CABIError(code: CABIError.badArgument, "input \"\(name)\": the dictionary is not a JSON object")
        }
        let integerKeys = (integers?[index] ?? 0) == 1
        var values: [AnyHashable: NSNumber] = [:]
        for (key, value) in object {
            guard let number = value as? NSNumber else {
                throw MLModelError(.featureType, "input \"\(name)\": the value for key \(key) is not a number")
            }
            if integerKeys {
                guard let integer = Int64(key) else {
                    throw MLModelError(.featureType, "input \"\(name)\": key \(key) is not an integer")
                }
                values[AnyHashable(integer)] = number
            } else {
                values[AnyHashable(key)] = number
            }
        }
        return try MLFeatureValue(dictionary: values)
    }

    private func multiArray(at index: Int, name: String, dimension: inout Int) throws -> MLMultiArray {
        let rank = Int(try required(ranks, "ranks")[index])
        guard (0...Self.maximumRank).contains(rank) else {
            throw CABIError(
                code: CABIError.badArgument,
                "input \"\(name)\" has rank \(rank); at most \(Self.maximumRank) dimensions")
        }
        let rawType = Int(try required(dataTypes, "dataTypes")[index])
        guard let dataType = MLMultiArrayDataType(rawValue: rawType) else {
            throw CABIError(code: CABIError.badArgument, "input \"\(name)\": \(rawType) is not an MLMultiArrayDataType")
        }
        let shapes = try required(shapes, "shapes")
        let strides = try required(strides, "strides")
        let shape = (0..<rank).map { NSNumber(value: shapes[dimension + $0]) }
        let steps = (0..<rank).map { NSNumber(value: strides[dimension + $0]) }
        dimension += rank
        guard let pointer = try required(data, "data")[index] else {
            throw CABIError(code: CABIError.badArgument, "input \"\(name)\": its data pointer is null")
        }
        do {
            return try MLMultiArray(
                dataPointer: UnsafeMutableRawPointer(mutating: pointer), shape: shape, dataType: dataType,
                strides: steps)
        } catch {
            throw MLModelError(.featureType, "input \"\(name)\": \(error)")
        }
    }
}
