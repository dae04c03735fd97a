import CTesseraSIMD

/// An activation a linear layer's product applies to each result after its bias (see
/// ``PackedGEMM/product(rows:a:lda:_:c:ldc:columnBias:clamp:activation:)``): the smooth
/// activations of transformers, each computed as the element-wise ops of ``FusedProgram`` do
/// for the same expression, in the same order (`MLTensor.gelu` and `MLTensor.silu` build them).
///
/// ```swift
/// LinearActivation.geluExact.apply(to: y, count: 3072)
/// ```
package enum LinearActivation: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `x · 0.5 · (erf(x · 0.70710677) + 1)` (MIL's gelu `EXACT`).
    case geluExact
    /// `x · 0.5 · (tanh((x + x · x · x · 0.044715) · 0.7978846) + 1)` (MIL's gelu
    /// `TANH_APPROXIMATION`).
    case geluTanh
    /// `x · sigmoid(x)` (SiLU, swish).
    case silu

    /// The name, for plans and profiles.
    package var description: String {
        switch self {
        case .geluExact: "gelu"
        case .geluTanh: "gelu_tanh"
        case .silu: "silu"
        }
    }

    /// The activation's code for the C kernels (a `TESSERA_ACTIVATION_` value).
    var code: Int32 {
        switch self {
        case .geluExact: Int32(TESSERA_ACTIVATION_GELU_ERF)
        case .geluTanh: Int32(TESSERA_ACTIVATION_GELU_TANH)
        case .silu: Int32(TESSERA_ACTIVATION_SILU)
        }
    }

    /// `p[i] = f(p[i])` for `i < count`. Single-threaded.
    package func apply(to p: UnsafeMutablePointer<Float>, count: Int) {
        tessera_activation_f32(code, p, count)
    }

    /// ``apply(to:count:)`` over `rows` rows of `columns` contiguous floats, split across the
    /// kernel threads: a product's activation when its kernel did not apply it.
    ///
    /// - Precondition: `c` holds `rows · columns` floats. Runs multithreaded: do not call it
    ///   from a `parallelFor` body.
    package func applyRows(_ c: UnsafeMutablePointer<Float>, rows: Int, columns: Int) {
        if rows == 0 || columns == 0 { return }
        parallelFor(count: rows, cost: .perItem(nanoseconds: Double(columns) * 2)) { range in
            for i in range { apply(to: c + i * columns, count: columns) }
        }
    }
}
