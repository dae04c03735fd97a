import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor
import Testing
import _TesseraTestSupport

/// A classic-model fixture written by `tools/make_classic_fixtures.py` (a converted
/// `.mlmodel`) or `tools/make_classic_spec_fixtures.py` (a spec built with coremltools' proto
/// classes): input rows, and the outputs the source library (scikit-learn, XGBoost, LibSVM)
/// gives for them, or that the spec's documented semantics give, computed in NumPy.
struct ClassicFixture: CustomStringConvertible, Sendable {
    /// The fixture's name (its JSON file without the extension).
    let name: String
    let model: URL
    let tolerance: Double
    /// Each row's features, as the JSON encodes them.
    let rows: [[String: ClassicValue]]
    let expected: [[String: ClassicValue]]

    var description: String { name }

    /// Every fixture in `Tests/Fixtures/classic`, by name.
    static let all: [ClassicFixture] = {
        let directory = Fixtures.url("classic")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && $0 != "bad_models.json" }.sorted().map { file in
            do {
                return try ClassicFixture(directory.appendingPathComponent(file))
            } catch {
                fatalError("[ClassicFixture] cannot read \(file): \(error)")
            }
        }
    }()

    init(_ url: URL) throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        name = url.deletingPathExtension().lastPathComponent
        model = url.deletingLastPathComponent().appendingPathComponent(json["model"] as! String)
        tolerance = (json["tolerance"] as? Double) ?? 1e-9
        rows = (json["rows"] as! [[String: Any]]).map { $0.mapValues(ClassicValue.init) }
        expected = (json["expected"] as! [[String: Any]]).map { $0.mapValues(ClassicValue.init) }
    }

    /// The rows as feature providers.
    func providers() throws -> [MLDictionaryFeatureProvider] {
        try rows.map { row in MLDictionaryFeatureProvider(features: try row.mapValues { try $0.featureValue() }) }
    }
}

/// A feature value as the fixtures encode it.
enum ClassicValue: Sendable {
    case double(Double)
    case int64(Int64)
    case string(String)
    case array([Double], shape: [Int])
    case dictionary([String: Double], intKeys: Bool)

    init(_ any: Any) {
        let object = any as! [String: Any]
        if let value = object["double"] {
            self = .double((value as? String) == "nan" ? .nan : (value as! NSNumber).doubleValue)
        } else if let value = object["int64"] {
            self = .int64((value as! NSNumber).int64Value)
        } else if let value = object["string"] {
            self = .string(value as! String)
        } else if let values = object["array"] {
            self = .array(
                (values as! [Any]).map { ($0 as? NSNumber)?.doubleValue ?? .nan },
                shape: (object["shape"] as! [NSNumber]).map(\.intValue))
        } else {
            let entries = (object["dict"] as! [String: NSNumber]).mapValues(\.doubleValue)
            self = .dictionary(entries, intKeys: (object["keyType"] as? String) == "int64")
        }
    }

    /// The value as an `MLFeatureValue` (arrays as float64 multi-arrays).
    func featureValue() throws -> MLFeatureValue {
        switch self {
        case .double(let value): return MLFeatureValue(double: value)
        case .int64(let value): return MLFeatureValue(int64: value)
        case .string(let value): return MLFeatureValue(string: value)
        case .array(let values, let shape):
            return MLFeatureValue(multiArray: MLMultiArray(MLShapedArray<Double>(scalars: values, shape: shape)))
        case .dictionary(let entries, let intKeys):
            var dictionary: [AnyHashable: NSNumber] = [:]
            for (key, value) in entries {
                dictionary[intKeys ? AnyHashable(Int64(key)!) : AnyHashable(key)] = NSNumber(value: value)
            }
            return try MLFeatureValue(dictionary: dictionary)
        }
    }

    /// Why `actual` does not match this expected value within `tolerance` (relative, with
    /// an absolute floor of `tolerance`), or `nil` when it does.
    func mismatch(_ actual: MLFeatureValue?, tolerance: Double) -> String? {
        guard let actual else { return "missing" }
        func close(_ a: Double, _ e: Double) -> Bool { abs(a - e) <= tolerance * max(1, abs(e)) }
        switch self {
        case .string(let expected):
            return actual.type == .string && actual.stringValue == expected
                ? nil : "got \(actual), expected \(expected)"
        case .int64(let expected):
            return actual.type == .int64 && actual.int64Value == expected ? nil : "got \(actual), expected \(expected)"
        case .double(let expected):
            return actual.type == .double && close(actual.doubleValue, expected)
                ? nil : "got \(actual.doubleValue), expected \(expected)"
        case .array(let expected, let shape):
            guard let array = actual.multiArrayValue else { return "got \(actual), expected a multi-array" }
            guard array.shape.map(\.intValue) == shape else {
                return "got shape \(array.shape.map(\.intValue)), expected \(shape)"
            }
            let got = MLShapedArray<Double>(converting: array).scalars
            return got.count == expected.count && zip(got, expected).allSatisfy(close)
                ? nil : "got \(got), expected \(expected)"
        case .dictionary(let expected, let intKeys):
            let got = actual.dictionaryValue
            guard got.count == expected.count else { return "got \(got.count) entries, expected \(expected.count)" }
            for (key, value) in expected {
                let number = intKeys ? got[AnyHashable(Int64(key)!)] : got[AnyHashable(key)]
                guard let number, close(number.doubleValue, value) else {
                    return "entry \(key): got \(String(describing: number)), expected \(value)"
                }
            }
            return nil
        }
    }
}
