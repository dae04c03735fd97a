import Foundation
import TesseraModels
import TesseraMultiArray
import TesseraTensor

/// Predicts one input, or a batch of inputs, from features laid out as parallel C arrays;
/// returns a result handle (`tessera_result_*`), or nil with the error in the out-parameters.
///
/// Feature `i` belongs to input item `items[i]` (0 ..< `itemCount`) and is named `names[i]`;
/// `kinds[i]` is an ``MLFeatureType`` raw value and says which arrays hold its value:
/// - `multiArray` (5): `dataTypes[i]` (``MLMultiArrayDataType`` raw value), `ranks[i]`
///   dimensions taken in turn from `shapes` and `strides` (elements, not bytes), elements at
///   `data[i]`. The memory is read during the call only and never kept.
/// - `int64` (1): `integers[i]`; `double` (2): `doubles[i]`; `string` (3): `data[i]`, UTF-8.
/// - `dictionary` (6): `data[i]`, a UTF-8 JSON object of numbers (string keys; integer keys
///   as decimal strings when `integers[i]` is 1).
///
/// With `state` (from `tessera_model_make_state`) the single item is predicted with it. Two or
/// more items run as one batch (Tessera's batched execution where the program allows it).
///
/// ```c
/// void *result = tessera_model_predict(model, NULL, 1, 1, items, names, kinds, types, ranks,
///                                      shapes, strides, data, integers, doubles, &code, &message);
/// ```
@_cdecl("tessera_model_predict")
public func modelPredict(
    _ handle: UnsafeMutableRawPointer, _ state: UnsafeMutableRawPointer?, _ itemCount: Int32, _ featureCount: Int32,
    _ items: UnsafePointer<Int32>?, _ names: UnsafePointer<UnsafePointer<CChar>?>?, _ kinds: UnsafePointer<Int32>?,
    _ dataTypes: UnsafePointer<Int32>?, _ ranks: UnsafePointer<Int32>?, _ shapes: UnsafePointer<Int64>?,
    _ strides: UnsafePointer<Int64>?, _ data: UnsafePointer<UnsafeRawPointer?>?, _ integers: UnsafePointer<Int64>?,
    _ doubles: UnsafePointer<Double>?, _ errorCode: UnsafeMutablePointer<Int32>?,
    _ errorMessage: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> UnsafeMutableRawPointer? {
    catchingErrors(code: errorCode, message: errorMessage) {
        let model = ModelHandle.from(handle).model
        let layout = FeatureArrays(
            count: Int(featureCount), items: items, names: names, kinds: kinds, dataTypes: dataTypes, ranks: ranks,
            shapes: shapes, strides: strides, data: data, integers: integers, doubles: doubles)
        let providers = try layout.providers(itemCount: Int(itemCount))
        let outputs: [any MLFeatureProvider]
        if let state {
            guard providers.count == 1 else {
                throw CABIError(code: CABIError.badArgument, "a stateful prediction takes one input, not a batch")
            }
            let state = Unmanaged<StateHandle>.fromOpaque(state).takeUnretainedValue().state
            outputs = [try model.prediction(from: providers[0], using: state)]
        } else if providers.count == 1 {
            outputs = [try model.prediction(from: providers[0])]
        } else {
            let batch = try model.predictions(fromBatch: MLArrayBatchProvider(array: providers))
            outputs = (0..<batch.count).map { batch.features(at: $0) }
        }
        let order = model.modelDescription.outputOrder
        let result = try ResultHandle(outputs.map { try ResultHandle.Item($0, order: order) })
        return Unmanaged.passRetained(result).toOpaque()
    }
}
