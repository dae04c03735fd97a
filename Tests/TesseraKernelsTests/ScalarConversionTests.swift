import TesseraKernels
import Testing
import _TesseraTestSupport

@Suite("Scalar conversion")
struct ScalarConversionTests {
    @Test("every float16 bit pattern widens exactly")
    func widenAllHalves() {
        let halves = (0...UInt16.max).map { Float16(bitPattern: $0) }
        var floats = [Float](repeating: 0, count: halves.count)
        halves.withUnsafeBufferPointer { h in
            floats.withUnsafeMutableBufferPointer { f in
                Float16Conversion.widen(h.baseAddress!, into: f.baseAddress!, count: h.count)
            }
        }
        for (h, f) in zip(halves, floats) {
            if h.isNaN {
                #expect(f.isNaN)
            } else {
                #expect(f.bitPattern == Float(h).bitPattern, "\(h.bitPattern)")
            }
        }
    }

    @Test("floats narrow to half rounding to nearest even, like Float16(_:)")
    func narrow() {
        var rng = SeededRandom(seed: 3)
        var values: [Float] = (0..<20_000).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng))
        }
        // Ties, the subnormal boundary, overflow and the largest half.
        values += [
            65504, 65519.99, 65520, 1e10, -1e10, 6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08,
            1 + 1.0 / 2048, 1 + 3.0 / 2048, 0, -0, .infinity, -.infinity, .nan,
        ]
        var halves = [Float16](repeating: 0, count: values.count)
        values.withUnsafeBufferPointer { f in
            halves.withUnsafeMutableBufferPointer { h in
                Float16Conversion.narrow(f.baseAddress!, into: h.baseAddress!, count: f.count)
            }
        }
        for (f, h) in zip(values, halves) {
            if f.isNaN {
                #expect(h.isNaN)
            } else {
                #expect(h.bitPattern == Float16(f).bitPattern, "\(f)")
            }
        }
    }

    @Test("casts follow the documented rules")
    func casts() {
        let values: [Float] = [-2.7, -0.5, 0, 0.5, 2.7, 300, -129, .nan, .infinity]
        func cast<D: KernelScalar>(_: D.Type) -> [D] {
            var out = [D](repeating: D(kernelDoubleValue: 0), count: values.count)
            values.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in
                    ScalarConversion.convert(
                        src.baseAddress!, from: .float32, into: dst.baseAddress!, to: D.kernelScalarType,
                        count: values.count)
                }
            }
            return out
        }
        #expect(cast(Int32.self) == [-2, 0, 0, 0, 2, 300, -129, 0, 0])
        #expect(cast(Int8.self) == [-2, 0, 0, 0, 2, 44, 127, 0, 0])
        #expect(cast(UInt8.self) == [254, 0, 0, 0, 2, 44, 127, 0, 0])
        #expect(cast(Bool.self) == [true, true, false, true, true, true, true, true, true])
        #expect(cast(Double.self).dropLast(2) == values.dropLast(2).map(Double.init))
    }

    @Test("float → integer conversions truncate toward zero and wrap, as the naive reference does")
    func floatToIntegerMatchesReference() {
        var rng = SeededRandom(seed: 11)
        var floats: [Float] = (0..<4_000).map { _ in Float.random(in: -70_000...70_000, using: &rng) }
        floats += (0..<4_000).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)) }
        floats += [-0.99, 0.99, -1, 1, 127.5, -128.5, 2_147_483_648, -2_147_483_904, 9.1e18, -9.1e18, 9.3e18]
        /// The rule written out: NaN, infinities and magnitudes past 9.2e18 give 0; otherwise the
        /// value truncated toward zero, wrapped to the width.
        func reference(_ x: Double) -> Int64 {
            guard x.isFinite, abs(x) < 9.2e18 else { return 0 }
            return Int64(exactly: x.rounded(.towardZero))!
        }
        func converted<S: KernelScalar, D: KernelScalar & FixedWidthInteger>(
            _ source: [S], from: KernelScalarType, to _: D.Type
        ) -> [D] {
            var out = [D](repeating: 0, count: source.count)
            source.withUnsafeBytes { src in
                out.withUnsafeMutableBytes { dst in
                    ScalarConversion.convert(
                        src.baseAddress!, from: from, into: dst.baseAddress!, to: D.kernelScalarType,
                        count: source.count)
                }
            }
            return out
        }
        let doubles = floats.map(Double.init) + [1e300, -4.5e18, 4.5e18]
        let halves = floats.map { Float16($0) }
        #expect(
            converted(floats, from: .float32, to: Int32.self)
                == floats.map { Int32(truncatingIfNeeded: reference(Double($0))) })
        #expect(
            converted(floats, from: .float32, to: Int8.self)
                == floats.map { Int8(truncatingIfNeeded: reference(Double($0))) })
        #expect(
            converted(doubles, from: .float64, to: Int32.self)
                == doubles.map { Int32(truncatingIfNeeded: reference($0)) })
        #expect(
            converted(halves, from: .float16, to: Int16.self)
                == halves.map { Int16(truncatingIfNeeded: reference(Double($0))) })
    }

    @Test("strided casts gather through the interpreter")
    func stridedCast() {
        let input = LayoutKind.transposed.make(shape: [3, 5]) { Int32($0 - 7) }
        var out = [Double](repeating: 0, count: 15)
        input.storage.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                ElementwiseKernels.cast(
                    input: src.baseAddress!, layout: input.layout, from: .int32, output: dst.baseAddress!, to: .float64)
            }
        }
        #expect(out == input.logicalElements.map(Double.init))
    }
}
