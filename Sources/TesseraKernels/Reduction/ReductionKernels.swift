/// A reduction over one or more axes.
///
/// Semantics follow NumPy: `max`/`min` propagate NaN; `argmax`/`argmin` return the first
/// index of the extreme value, and a NaN counts as the extreme (the first NaN wins); integer
/// `sum`/`product` wrap in the input type's width; `all`/`any` treat any non-zero value
/// (including NaN) as true.
///
/// ```swift
/// ReductionOp.argmax.outputType(for: .float32)   // .int32
/// ```
@usableFromInline package enum ReductionOp: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The sum (0 over nothing).
    case sum
    /// The arithmetic mean (NaN over nothing).
    case mean
    /// The product (1 over nothing).
    case product
    /// The largest value; NaN if any value is NaN.
    case max
    /// The smallest value; NaN if any value is NaN.
    case min
    /// Whether every value is non-zero (true over nothing).
    case all
    /// Whether some value is non-zero (false over nothing).
    case any
    /// The index of the first largest value (or of the first NaN).
    case argmax
    /// The index of the first smallest value (or of the first NaN).
    case argmin

    /// The output type the op produces for `input`, or `nil` when the caller must choose
    /// (`mean` of an integer type: any floating-point type) or the op does not apply
    /// (`sum`, `mean`, `product` of `bool`).
    package func outputType(for input: KernelScalarType) -> KernelScalarType? {
        switch self {
        case .sum, .product: return input == .bool ? nil : input
        case .mean: return input.isFloatingPoint ? input : nil
        case .max, .min: return input
        case .all, .any: return .bool
        case .argmax, .argmin: return .int32
        }
    }

    /// Whether reducing an empty axis is an error (there is no identity element).
    package var requiresNonEmpty: Bool {
        switch self {
        case .max, .min, .argmax, .argmin: return true
        default: return false
        }
    }

    /// The lowercase name used in messages, e.g. `argmax`.
    @usableFromInline package var description: String {
        switch self {
        case .sum: return "sum"
        case .mean: return "mean"
        case .product: return "product"
        case .max: return "max"
        case .min: return "min"
        case .all: return "all"
        case .any: return "any"
        case .argmax: return "argmax"
        case .argmin: return "argmin"
        }
    }
}

/// Reductions over axes of a strided operand into a contiguous output.
package enum ReductionKernels {
    /// Reduces `input` (read through `layout`) over `axes` into `output`.
    ///
    /// The output is contiguous row-major of shape `layout.shape` with every reduced axis set
    /// to 1 (keep-rank form; callers drop axes by reshaping). Empty `axes` applies the op to
    /// each element alone (a copy, a cast to bool, or 0 for `argmax`/`argmin`). Reducing an
    /// axis of size 0 gives `sum` 0, `product` 1, `mean` NaN, `all` true, `any` false.
    ///
    /// Output types: `sum`, `product`, `max`, `min` keep `type`; `mean` keeps a floating-point
    /// `type` and needs a floating-point `outputType` for integer inputs; `all`/`any` give
    /// `.bool`; `argmax`/`argmin` give `.int32`, the index along the reduced axes flattened
    /// in row-major order. `float16` accumulates in `float32`.
    ///
    /// ```swift
    /// // x: [2, 3] float32 = [[1, 5, 2], [7, 0, 7]]
    /// ReductionKernels.reduce(.sum, input: x, layout: StridedLayout(contiguous: [2, 3]), type: .float32,
    ///                         axes: [1], output: out, outputType: .float32)     // [[8], [14]]
    /// ReductionKernels.reduce(.argmax, input: x, layout: StridedLayout(contiguous: [2, 3]), type: .float32,
    ///                         axes: [1], output: idx, outputType: .int32)       // [[1], [0]]
    /// ```
    ///
    /// - Parameters:
    ///   - op: The reduction.
    ///   - input: The base pointer `layout` is relative to.
    ///   - layout: Shape, strides (any, including 0 and negative) and offset of the input.
    ///   - type: The input's scalar type.
    ///   - axes: The axes to reduce: unique, each in `0..<layout.rank`, in any order.
    ///   - output: Room for `layout.count / (product of reduced sizes)` elements of `outputType`.
    ///   - outputType: The output's scalar type (see above).
    /// - Precondition: `axes` are valid; `outputType` follows the rules above; `sum`,
    ///   `product`, `mean` are not applied to `bool`; `max`, `min`, `argmax`, `argmin` do not
    ///   reduce an empty axis; `argmax`/`argmin` reduce fewer than 2³¹ elements.
    package static func reduce(
        _ op: ReductionOp, input: UnsafeRawPointer, layout: StridedLayout, type: KernelScalarType,
        axes: [Int], output: UnsafeMutableRawPointer, outputType: KernelScalarType
    ) {
        let shape = layout.shape
        for axis in axes {
            kernelPrecondition(axis >= 0 && axis < layout.rank, "[reduce] axis \(axis) out of range for shape \(shape)")
        }
        kernelPrecondition(Set(axes).count == axes.count, "[reduce] repeated axis in \(axes) for shape \(shape)")
        if let expected = op.outputType(for: type) {
            kernelPrecondition(
                outputType == expected,
                "[reduce] \(op) of \(type) produces \(expected), not \(outputType) (shape \(shape))")
        } else {
            kernelPrecondition(
                op == .mean && type.isInteger && outputType.isFloatingPoint,
                "[reduce] \(op) is not defined for \(type) with output \(outputType) (shape \(shape))")
        }
        let reducedCount = axes.reduce(1) { $0 * shape[$1] }
        if op.requiresNonEmpty && reducedCount == 0 {
            let outputCount = (0..<layout.rank).reduce(1) { axes.contains($1) ? $0 : $0 * shape[$1] }
            kernelPrecondition(
                outputCount == 0,
                "[reduce] \(op) over an empty axis (axes \(axes) of shape \(shape)) has no identity")
        }
        kernelPrecondition(
            !(op == .argmax || op == .argmin) || reducedCount <= Int(Int32.max),
            "[reduce] \(op) over \(reducedCount) elements overflows int32 indices (shape \(shape))")
        let plan = ReductionPlan(layout: layout, axes: axes)
        switch type {
        case .float32: dispatch(op, Float.self, input, plan, output, outputType)
        case .float16: dispatch(op, Float16.self, input, plan, output, outputType)
        case .float64: dispatch(op, Double.self, input, plan, output, outputType)
        case .int32: dispatch(op, Int32.self, input, plan, output, outputType)
        case .int16: dispatch(op, Int16.self, input, plan, output, outputType)
        case .int8: dispatch(op, Int8.self, input, plan, output, outputType)
        case .uint32: dispatch(op, UInt32.self, input, plan, output, outputType)
        case .uint16: dispatch(op, UInt16.self, input, plan, output, outputType)
        // Bool is one byte holding 0 or 1: max/min/argmax/argmin/all/any on bytes agree with it.
        case .uint8, .bool: dispatch(op, UInt8.self, input, plan, output, outputType)
        }
    }

    private static func dispatch<T: ReductionScalar>(
        _ op: ReductionOp, _: T.Type, _ input: UnsafeRawPointer, _ plan: ReductionPlan,
        _ output: UnsafeMutableRawPointer, _ outputType: KernelScalarType
    ) {
        func run<S: ReductionStep>(_ step: S.Type) {
            ReductionDriver.run(step, input: input, plan: plan, output: output)
        }
        switch op {
        case .sum: run(SumStep<T>.self)
        case .product: run(ProductStep<T>.self)
        case .mean:
            if T.kernelScalarType.isFloatingPoint {
                run(MeanStep<T>.self)
            } else {
                switch outputType {
                case .float32: run(IntegerMeanStep<T, Float>.self)
                case .float64: run(IntegerMeanStep<T, Double>.self)
                case .float16: run(IntegerMeanStep<T, Float16>.self)
                default: kernelFailure("[reduce] mean of \(T.kernelScalarType) into \(outputType)")
                }
            }
        case .max: run(ExtremumStep<T, Maximum>.self)
        case .min: run(ExtremumStep<T, Minimum>.self)
        case .all: run(LogicalStep<T, LogicalAll>.self)
        case .any: run(LogicalStep<T, LogicalAny>.self)
        case .argmax: run(ArgStep<T, Maximum>.self)
        case .argmin: run(ArgStep<T, Minimum>.self)
        }
    }
}
