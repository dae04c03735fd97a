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
