import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// The outputs of one `tessera_model_predict` call, as the C ABI reads them: per item, the
/// features in the model's output order, with their names, shapes and texts held as C
/// memory until `tessera_result_free`.
final class ResultHandle {
    /// One output feature.
    final class Feature {
        /// The name, NUL-terminated.
        let name: UnsafeMutablePointer<CChar>
        /// ``MLFeatureType`` raw value.
        let kind: Int32
        /// ``MLMultiArrayDataType`` raw value for a multi-array, else 0.
        let dataType: Int32
        /// The dimensions of a multi-array (room for one when it has none).
        let shape: UnsafeMutableBufferPointer<Int64>
        /// The number of dimensions of a multi-array; 0 for other kinds.
        let rank: Int32
        /// The value of an int64 feature.
        let integer: Int64
        /// The value of a double feature.
        let double: Double
        /// A string's UTF-8 text, or a dictionary as a JSON object; nil for other kinds.
        let text: UnsafeMutablePointer<CChar>?
        /// The multi-array, for `tessera_result_copy_array`.
        let array: MLMultiArray?

        init(name: String, value: MLFeatureValue) throws {
            self.name = strdup(name)
            kind = Int32(value.type.rawValue)
            var dataType: Int32 = 0
            var shape: [Int64] = []
            var integer: Int64 = 0
            var double = 0.0
            var text: String?
            var array: MLMultiArray?
            switch value.type {
            case .int64: integer = value.int64Value
            case .double: double = value.doubleValue
            case .string: text = value.stringValue
            case .dictionary:
                let (json, integerKeys) = try Self.json(value.dictionaryValue)
                text = json
                integer = integerKeys ? 1 : 0
            case .multiArray:
                if let multiArray = value.multiArrayValue {
                    dataType = Int32(multiArray.dataType.rawValue)
                    shape = multiArray.shape.map { Int64($0.intValue) }
                    array = multiArray
                }
            default:
                throw MLModelError(
                    .featureType, "output \"\(name)\" is a \(value.type); the Python binding returns no such values yet"
                )
            }
            self.dataType = dataType
            self.rank = Int32(shape.count)
            self.shape = .allocate(capacity: max(shape.count, 1))
            _ = self.shape.initialize(from: shape)
            self.integer = integer
            self.double = double
            self.text = text.map { strdup($0) }
            self.array = array
        }

        deinit {
            free(name)
            free(text)
            shape.deallocate()
        }

        /// The dictionary as a JSON object, and whether its keys were integers (written as
        /// decimal strings).
        static func json(_ dictionary: [AnyHashable: NSNumber]) throws -> (String, Bool) {
            var object: [String: Double] = [:]
            var integerKeys = false
            for (key, number) in dictionary {
                if let integer = key.base as? Int64 {
                    object[String(integer)] = number.doubleValue
                    integerKeys = true
                } else {
                    object["\(key.base)"] = number.doubleValue
                }
            }
            let data = try JSONSerialization.data(withJSONObject: object)
            return (String(decoding: data, as: UTF8.self), integerKeys)
        }
    }

    /// One input item's outputs.
    struct Item {
        var features: [Feature]

        /// The features of `provider`: those of `order` first, in order, then any other, by name.
        init(_ provider: any MLFeatureProvider, order: [String]) throws {
            let names = provider.featureNames
            let ordered = order.filter(names.contains) + names.subtracting(order).sorted()
            features = try ordered.compactMap { name in
                try provider.featureValue(for: name).map { try Feature(name: name, value: $0) }
            }
        }
    }

    /// The items, in input order.
    let items: [Item]

    init(_ items: [Item]) throws { self.items = items }

    /// The feature at (`item`, `index`), or nil when out of range.
    func feature(_ item: Int32, _ index: Int32) -> Feature? {
        guard items.indices.contains(Int(item)), items[Int(item)].features.indices.contains(Int(index)) else {
            return nil
        }
        return items[Int(item)].features[Int(index)]
    }
}

/// The number of output features of item `item` of a result (0 when out of range); writes the
/// number of items to `itemCount` when it is not null.
///
/// ```c
/// int count = tessera_result_feature_count(result, 0, &items);
/// ```
@_cdecl("tessera_result_feature_count")
public func resultFeatureCount(
    _ result: UnsafeMutableRawPointer, _ item: Int32, _ itemCount: UnsafeMutablePointer<Int32>?
) -> Int32 {
    let handle = Unmanaged<ResultHandle>.fromOpaque(result).takeUnretainedValue()
    itemCount?.pointee = Int32(handle.items.count)
    guard handle.items.indices.contains(Int(item)) else { return 0 }
    return Int32(handle.items[Int(item)].features.count)
}

/// Describes output `index` of item `item`; returns 0, or -1 when out of range.
///
/// Writes the name (valid until `tessera_result_free`), the ``MLFeatureType`` raw value, and:
/// for a multi-array its ``MLMultiArrayDataType`` raw value, rank and dimensions (`shape`
/// valid until `tessera_result_free`; copy the elements with `tessera_result_copy_array`);
/// for int64 and double their value; for a string its text; for a dictionary a JSON object
/// in `text` and, in `integer`, 1 when its keys are integers.
///
/// ```c
/// tessera_result_feature(result, 0, 0, &name, &kind, &type, &rank, &shape, &integer, &real, &text);
/// ```
@_cdecl("tessera_result_feature")
public func resultFeature(
    _ result: UnsafeMutableRawPointer, _ item: Int32, _ index: Int32,
    _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>, _ kind: UnsafeMutablePointer<Int32>,
    _ dataType: UnsafeMutablePointer<Int32>, _ rank: UnsafeMutablePointer<Int32>,
    _ shape: UnsafeMutablePointer<UnsafePointer<Int64>?>, _ integer: UnsafeMutablePointer<Int64>,
    _ double: UnsafeMutablePointer<Double>, _ text: UnsafeMutablePointer<UnsafePointer<CChar>?>
) -> Int32 {
    let handle = Unmanaged<ResultHandle>.fromOpaque(result).takeUnretainedValue()
    guard let feature = handle.feature(item, index) else { return -1 }
    name.pointee = UnsafePointer(feature.name)
    kind.pointee = feature.kind
    dataType.pointee = feature.dataType
    rank.pointee = feature.rank
    shape.pointee = UnsafePointer(feature.shape.baseAddress)
    integer.pointee = feature.integer
    double.pointee = feature.double
    text.pointee = feature.text.map { UnsafePointer($0) }
    return 0
}

/// Copies the elements of multi-array output `index` of item `item`, row-major and
/// contiguous, into `destination` of `byteCount` bytes; returns 0, or -1 when out of range,
/// not a multi-array, or `byteCount` is not the array's size.
///
/// ```c
/// float values[16];
/// tessera_result_copy_array(result, 0, 0, values, sizeof values);
/// ```
@_cdecl("tessera_result_copy_array")
public func resultCopyArray(
    _ result: UnsafeMutableRawPointer, _ item: Int32, _ index: Int32, _ destination: UnsafeMutableRawPointer,
    _ byteCount: Int
) -> Int32 {
    let handle = Unmanaged<ResultHandle>.fromOpaque(result).takeUnretainedValue()
    guard let array = handle.feature(item, index)?.array else { return -1 }
    return ContiguousCopy.copy(array, to: destination, byteCount: byteCount) ? 0 : -1
}

/// Releases a result from `tessera_model_predict`.
///
/// ```c
/// tessera_result_free(result);
/// ```
@_cdecl("tessera_result_free")
public func resultFree(_ result: UnsafeMutableRawPointer?) {
    guard let result else { return }
    Unmanaged<ResultHandle>.fromOpaque(result).release()
}

/// Describes every output feature of item `item` in one call, into `buffer` of `capacity`
/// 64-bit words; returns the number of words the description takes (nothing is written
/// when that is more than `capacity`; call again with a larger buffer), or -1 when `item`
/// is out of range.
///
/// Per feature, in output order: the name's address (a NUL-terminated string valid until
/// `tessera_result_free`), the ``MLFeatureType`` raw value, the ``MLMultiArrayDataType`` raw
/// value (0 unless a multi-array), the rank, the int64 value (or 1 for a dictionary with
/// integer keys), the double value's bits, the text's address (0 unless a string or a
/// dictionary's JSON), then `rank` dimensions.
///
/// ```c
/// int64_t words[256];
/// int64_t used = tessera_result_describe(result, 0, words, 256);
/// ```
@_cdecl("tessera_result_describe")
public func resultDescribe(
    _ result: UnsafeMutableRawPointer, _ item: Int32, _ buffer: UnsafeMutablePointer<Int64>, _ capacity: Int
) -> Int {
    let handle = Unmanaged<ResultHandle>.fromOpaque(result).takeUnretainedValue()
    guard handle.items.indices.contains(Int(item)) else { return -1 }
    let features = handle.items[Int(item)].features
    let needed = features.reduce(0) { $0 + 7 + Int($1.rank) }
    guard needed <= capacity else { return needed }
    var offset = 0
    for feature in features {
        buffer[offset] = Int64(Int(bitPattern: feature.name))
        buffer[offset + 1] = Int64(feature.kind)
        buffer[offset + 2] = Int64(feature.dataType)
        buffer[offset + 3] = Int64(feature.rank)
        buffer[offset + 4] = feature.integer
        buffer[offset + 5] = Int64(bitPattern: feature.double.bitPattern)
        buffer[offset + 6] = Int64(Int(bitPattern: feature.text))
        for dimension in 0..<Int(feature.rank) { buffer[offset + 7 + dimension] = feature.shape[dimension] }
        offset += 7 + Int(feature.rank)
    }
    return needed
}
