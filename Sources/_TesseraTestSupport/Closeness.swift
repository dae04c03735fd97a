/// Whether `actual` is within `atol + rtol * |expected|` of `expected`, element by element,
/// treating NaNs as equal to NaNs and infinities as equal to the same infinity.
///
/// Returns a description of the first mismatch, or `nil` when everything is close.
package func firstMismatch(
    _ actual: [Double], _ expected: [Double], rtol: Double = 1e-5, atol: Double = 1e-6
) -> String? {
    guard actual.count == expected.count else {
        return "count \(actual.count) != expected \(expected.count)"
    }
    for i in 0..<actual.count {
        let a = actual[i]
        let e = expected[i]
        if a.isNaN && e.isNaN { continue }
        if a.isInfinite || e.isInfinite {
            if a == e { continue }
            return "element \(i): got \(a), expected \(e)"
        }
        if !(abs(a - e) <= atol + rtol * abs(e)) {
            return "element \(i): got \(a), expected \(e) (diff \(abs(a - e)))"
        }
    }
    return nil
}

/// `firstMismatch` for `Float` arrays.
package func firstMismatch(
    _ actual: [Float], _ expected: [Float], rtol: Double = 1e-5, atol: Double = 1e-6
) -> String? {
    firstMismatch(actual.map(Double.init), expected.map(Double.init), rtol: rtol, atol: atol)
}
