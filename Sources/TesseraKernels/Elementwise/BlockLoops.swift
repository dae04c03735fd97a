/// One operand of a block instruction: `n` values in memory, or one value shared by every
/// element of the block (a constant or a broadcast scalar).
@usableFromInline
enum BlockOperand<C> {
    case block(UnsafePointer<C>)
    case uniform(C)
}

/// The SIMD loops every element-wise body runs through: sixteen lanes at a time, then the
/// remainder through the same vector body on a padded register, so an element's result never
/// depends on where it falls in the block.
@usableFromInline
enum BlockLoop {
    /// `dst[i] = body(src[i])` for `i in 0..<n`.
    @inline(__always)
    static func map<C: SIMDScalar>(
        _ src: UnsafePointer<C>, _ dst: UnsafeMutablePointer<C>, _ n: Int,
        _ body: (SIMD16<C>) -> SIMD16<C>
    ) {
        let s = UnsafeRawPointer(src)
        let d = UnsafeMutableRawPointer(dst)
        let width = MemoryLayout<C>.stride
        var i = 0
        while i + 16 <= n {
            let x = s.loadUnaligned(fromByteOffset: i * width, as: SIMD16<C>.self)
            d.storeBytes(of: body(x), toByteOffset: i * width, as: SIMD16<C>.self)
            i += 16
        }
        if i < n {
            var x = SIMD16<C>(repeating: src[i])
            for lane in 0..<(n - i) { x[lane] = src[i + lane] }
            let y = body(x)
            for lane in 0..<(n - i) { dst[i + lane] = y[lane] }
        }
    }

    /// `dst[i] = body(a[i], b[i])` for `i in 0..<n`, with uniform operands kept in a register.
    @inline(__always)
    static func map<C: SIMDScalar>(
        _ a: BlockOperand<C>, _ b: BlockOperand<C>, _ dst: UnsafeMutablePointer<C>, _ n: Int,
        _ body: (SIMD16<C>, SIMD16<C>) -> SIMD16<C>
    ) {
        switch (a, b) {
        case (.block(let pa), .block(let pb)):
            let sa = UnsafeRawPointer(pa)
            let sb = UnsafeRawPointer(pb)
            let d = UnsafeMutableRawPointer(dst)
            let width = MemoryLayout<C>.stride
            var i = 0
            while i + 16 <= n {
                let x = sa.loadUnaligned(fromByteOffset: i * width, as: SIMD16<C>.self)
                let y = sb.loadUnaligned(fromByteOffset: i * width, as: SIMD16<C>.self)
                d.storeBytes(of: body(x, y), toByteOffset: i * width, as: SIMD16<C>.self)
                i += 16
            }
            if i < n {
                var x = SIMD16<C>(repeating: pa[i])
                var y = SIMD16<C>(repeating: pb[i])
                for lane in 0..<(n - i) {
                    x[lane] = pa[i + lane]
                    y[lane] = pb[i + lane]
                }
                let r = body(x, y)
                for lane in 0..<(n - i) { dst[i + lane] = r[lane] }
            }
        case (.block(let pa), .uniform(let vb)):
            let y = SIMD16<C>(repeating: vb)
            map(pa, dst, n) { body($0, y) }
        case (.uniform(let va), .block(let pb)):
            let x = SIMD16<C>(repeating: va)
            map(pb, dst, n) { body(x, $0) }
        case (.uniform(let va), .uniform(let vb)):
            let r = body(SIMD16(repeating: va), SIMD16(repeating: vb))[0]
            dst.update(repeating: r, count: n)
        }
    }

    /// `dst[i] = body(src[i])` one element at a time, for functions with no vector form.
    @inline(__always)
    static func mapScalar<C>(
        _ src: UnsafePointer<C>, _ dst: UnsafeMutablePointer<C>, _ n: Int, _ body: (C) -> C
    ) {
        for i in 0..<n { dst[i] = body(src[i]) }
    }

    /// `dst[i] = body(a[i], b[i])` one element at a time.
    @inline(__always)
    static func mapScalar<C>(
        _ a: BlockOperand<C>, _ b: BlockOperand<C>, _ dst: UnsafeMutablePointer<C>, _ n: Int,
        _ body: (C, C) -> C
    ) {
        switch (a, b) {
        case (.block(let pa), .block(let pb)): for i in 0..<n { dst[i] = body(pa[i], pb[i]) }
        case (.block(let pa), .uniform(let vb)): for i in 0..<n { dst[i] = body(pa[i], vb) }
        case (.uniform(let va), .block(let pb)): for i in 0..<n { dst[i] = body(va, pb[i]) }
        case (.uniform(let va), .uniform(let vb)): dst.update(repeating: body(va, vb), count: n)
        }
    }
}
