import Foundation
import TesseraKernels

/// Shape and stride checks shared by the initializers. Each returns a message describing the
/// problem, or `nil` when the input is good; throwing initializers wrap it in an
/// ``MLMultiArrayError``, non-throwing ones trap with it.
enum MultiArrayLayout {
    /// `shape` as `Int`s, or a message when a value is negative or not a whole number.
    static func integers(_ values: [NSNumber], what: String) -> Result<[Int], MLMultiArrayError> {
        var result: [Int] = []
        result.reserveCapacity(values.count)
        for value in values {
            let integer = value.intValue
            guard Double(integer) == value.doubleValue else {
                return .failure(
                    MLMultiArrayError(
                        what == "shape" ? .invalidShape : .invalidStrides,
                        "\(what) \(values.map(\.doubleValue)) has a value that is not a whole number"))
            }
            result.append(integer)
        }
        return .success(result)
    }

    /// The element count of `shape`, or a message when a dimension is negative or the count
    /// (or its size in bytes) overflows.
    static func count(of shape: [Int], elementSize: Int) -> Result<Int, MLMultiArrayError> {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            return .failure(MLMultiArrayError(.invalidShape, "shape \(shape) has a negative dimension"))
        }
        guard let count = shape.checkedElementCount else {
            return .failure(MLMultiArrayError(.invalidShape, "shape \(shape) has too many elements"))
        }
        guard !count.multipliedReportingOverflow(by: elementSize).overflow else {
            return .failure(MLMultiArrayError(.invalidShape, "shape \(shape) has too many bytes"))
        }
        return .success(count)
    }

    /// The number of elements from `[0, 0, …]` to the farthest element, inclusive (0 for an
    /// empty shape), after checking that `strides` fit `shape`: one per dimension, none
    /// negative, and no two indices landing on the same element.
    static func span(shape: [Int], strides: [Int], elementSize: Int) -> Result<Int, MLMultiArrayError> {
        guard strides.count == shape.count else {
            return .failure(
                MLMultiArrayError(
                    .invalidStrides,
                    "strides \(strides) do not match shape \(shape): \(strides.count) vs \(shape.count) dimensions"))
        }
        guard strides.allSatisfy({ $0 >= 0 }) else {
            return .failure(MLMultiArrayError(.invalidStrides, "strides \(strides) have a negative value"))
        }
        if shape.contains(0) { return .success(0) }
        // Non-overlap: visiting the dimensions from the smallest stride up, each stride must
        // step over everything the smaller ones reach.
        var reach = 1
        for axis in shape.indices.sorted(by: { strides[$0] < strides[$1] }) where shape[axis] > 1 {
            guard strides[axis] >= reach else {
                return .failure(
                    MLMultiArrayError(
                        .invalidStrides,
                        "strides \(strides) make elements of shape \(shape) overlap (dimension \(axis) has stride "
                            + "\(strides[axis]) but the dimensions inside it span \(reach) elements)"))
            }
            let (extent, overflow1) = strides[axis].multipliedReportingOverflow(by: shape[axis] - 1)
            let (next, overflow2) = extent.addingReportingOverflow(reach)
            guard !overflow1, !overflow2 else {
                return .failure(
                    MLMultiArrayError(.invalidStrides, "strides \(strides) reach too far for shape \(shape)"))
            }
            reach = next
        }
        var last = 0
        for axis in shape.indices {
            let (step, overflow) = strides[axis].multipliedReportingOverflow(by: shape[axis] - 1)
            guard !overflow, !last.addingReportingOverflow(step).overflow else {
                return .failure(
                    MLMultiArrayError(.invalidStrides, "strides \(strides) reach too far for shape \(shape)"))
            }
            last += step
        }
        guard !(last + 1).multipliedReportingOverflow(by: elementSize).overflow else {
            return .failure(MLMultiArrayError(.invalidStrides, "strides \(strides) reach too far for shape \(shape)"))
        }
        return .success(last + 1)
    }

    /// Whether every pair of indices of `layout` reads a different element (no broadcast).
    static func isNonOverlapping(_ layout: StridedLayout) -> Bool {
        if case .success = span(shape: layout.shape, strides: layout.strides, elementSize: 1) { return true }
        return false
    }
}
