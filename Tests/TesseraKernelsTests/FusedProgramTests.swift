import Foundation
import TesseraKernels
import Testing
import _TesseraTestSupport

/// Evaluates a program one element at a time in `Float`, from the documented semantics of
/// each instruction (only ops that are exact in float, so results must match bit for bit).
func referenceEvaluate(_ program: FusedProgram, inputs: [[Float]], count: Int) -> [[Float]] {
    var outputs = Array(repeating: [Float](), count: program.outputs.count)
    for e in 0..<count {
        var values: [Float] = []
        for instruction in program.instructions {
            let v: Float
            switch instruction {
            case .input(let k): v = inputs[k][e]
            case .constant(let c): v = Float(c)
            case .unary(let op, let a): v = Float(NaiveElementwise.unary(op, Double(values[a])))
            case .binary(let op, let a, let b):
                v = Float(NaiveElementwise.binary(op, Double(values[a]), Double(values[b])))
            case .select(let c, let a, let b): v = values[c] != 0 ? values[a] : values[b]
            case .cast(let type, let a):
                switch type {
                case .int8: v = Float(Int8(truncatingIfNeeded: Int(values[a].rounded(.towardZero))))
                case .bool: v = values[a] != 0 ? 1 : 0
                case .float16: v = Float(Float16(values[a]))
                default: v = values[a]
                }
            }
            values.append(v)
        }
        for (o, register) in program.outputs.enumerated() { outputs[o].append(values[register]) }
    }
    return outputs
}

/// A random program over `inputs` inputs using ops that are exact in float32.
func randomProgram(inputs: Int, length: Int, rng: inout SeededRandom) -> FusedProgram {
    var instructions: [FusedProgram.Instruction] = (0..<inputs).map { .input($0) }
    let unary: [UnaryOp] = [.neg, .abs, .square, .floor, .sign]
    let binary: [BinaryOp] = [.add, .sub, .mul, .min, .max, .less, .equal, .logicalOr]
    for _ in 0..<length {
        let n = instructions.count
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: instructions.append(.constant(Double(Int.random(in: -3...3, using: &rng)) / 2))
        case 1...3: instructions.append(.unary(unary.randomElement(using: &rng)!, Int.random(in: 0..<n, using: &rng)))
        case 4...7:
            instructions.append(
                .binary(
                    binary.randomElement(using: &rng)!, Int.random(in: 0..<n, using: &rng),
                    Int.random(in: 0..<n, using: &rng)))
        case 8:
            instructions.append(
                .select(
                    condition: Int.random(in: 0..<n, using: &rng), Int.random(in: 0..<n, using: &rng),
                    Int.random(in: 0..<n, using: &rng)))
        default: instructions.append(.cast(to: [.int8, .bool, .float16].randomElement(using: &rng)!, n - 1))
        }
    }
    let count = instructions.count
    return FusedProgram(computeType: .float32, instructions: instructions, outputs: [count - 1, count / 2])
}

@Suite("Fused programs")
struct FusedProgramTests {
    @Test("random programs over mixed layouts match a per-element reference", arguments: 0..<12)
    func randomPrograms(seed: Int) {
        var rng = SeededRandom(seed: UInt64(seed) * 7919)
        let shape = [
            Int.random(in: 1...4, using: &rng), Int.random(in: 1...40, using: &rng),
            Int.random(in: 1...70, using: &rng),
        ]
        let count = shape.reduce(1, *)
        let program = randomProgram(inputs: 3, length: Int.random(in: 3...25, using: &rng), rng: &rng)
        let kinds = (0..<3).map { _ in LayoutKind.allCases.randomElement(using: &rng)! }
        // Input 2 broadcasts along the middle axis.
        let shapes = [shape, shape, [shape[0], 1, shape[2]]]
        let storages = (0..<3).map { k in
            kinds[k].make(shape: shapes[k]) { _ in Float(Int.random(in: -8...8, using: &rng)) / 4 }
        }
        let logical = (0..<3).map { NaiveLayout.gather(storages[$0].storage, storages[$0].layout.broadcast(to: shape)) }
        let expected = referenceEvaluate(program, inputs: logical, count: count)
        var out0 = [Float](repeating: .nan, count: count)
        var out1 = [Float](repeating: .nan, count: count)
        storages[0].storage.withUnsafeBytes { p0 in
            storages[1].storage.withUnsafeBytes { p1 in
                storages[2].storage.withUnsafeBytes { p2 in
                    out0.withUnsafeMutableBytes { o0 in
                        out1.withUnsafeMutableBytes { o1 in
                            let pointers = [p0.baseAddress!, p1.baseAddress!, p2.baseAddress!]
                            program.run(
                                shape: shape,
                                inputs: (0..<3).map {
                                    FusedInput(
                                        pointer: pointers[$0], layout: storages[$0].layout.broadcast(to: shape),
                                        type: .float32)
                                },
                                outputs: [
                                    FusedOutput(pointer: o0.baseAddress!, type: .float32),
                                    FusedOutput(pointer: o1.baseAddress!, type: .float32),
                                ])
                        }
                    }
                }
            }
        }
        #expect(out0 == expected[0], "\(program)")
        #expect(out1 == expected[1], "\(program)")
    }

    @Test("one pass writes several outputs of different types")
    func mixedOutputs() {
        // y = x * 0.5 + 1 (float16), mask = y > 2 (bool), from a uint8 input.
        let program = FusedProgram(
            computeType: .float32,
            instructions: [
                .input(0), .constant(0.5), .binary(.mul, 0, 1), .constant(1), .binary(.add, 2, 3),
                .constant(2), .binary(.greater, 4, 5),
            ],
            outputs: [4, 6])
        let x: [UInt8] = (0..<3000).map { UInt8($0 % 256) }
        var y = [Float16](repeating: 0, count: 3000)
        var mask = [Bool](repeating: false, count: 3000)
        x.withUnsafeBytes { px in
            y.withUnsafeMutableBytes { py in
                mask.withUnsafeMutableBytes { pm in
                    program.run(
                        shape: [3000],
                        inputs: [
                            FusedInput(
                                pointer: px.baseAddress!, layout: StridedLayout(contiguous: [3000]), type: .uint8)
                        ],
                        outputs: [
                            FusedOutput(pointer: py.baseAddress!, type: .float16),
                            FusedOutput(pointer: pm.baseAddress!, type: .bool),
                        ])
                }
            }
        }
        #expect(y == x.map { Float16(Float($0) * 0.5 + 1) })
        #expect(mask == x.map { Float($0) * 0.5 + 1 > 2 })
    }

    @Test("an output may overwrite its contiguous input in place")
    func inPlace() {
        var data = (0..<5000).map { Float($0) }
        let program = FusedProgram(
            computeType: .float32, instructions: [.input(0), .constant(2), .binary(.mul, 0, 1), .binary(.add, 2, 0)],
            outputs: [3])
        data.withUnsafeMutableBytes { p in
            program.run(
                shape: [5000],
                inputs: [
                    FusedInput(pointer: p.baseAddress!, layout: StridedLayout(contiguous: [5000]), type: .float32)
                ],
                outputs: [FusedOutput(pointer: p.baseAddress!, type: .float32)])
        }
        #expect(data == (0..<5000).map { Float($0) * 3 })
    }

    @Test("broadcast operands: scalar, and a stride-0 inner axis longer than a block")
    func uniformOperands() {
        let shape = [3, 2500]
        let row: [Float] = [1, 2, 3]  // broadcast along the long axis
        let scalar: [Float] = [10]
        var out = [Float](repeating: 0, count: 7500)
        let program = FusedProgram(
            computeType: .float32, instructions: [.input(0), .input(1), .binary(.mul, 0, 1), .unary(.sqrt, 1)],
            outputs: [2])
        row.withUnsafeBytes { pr in
            scalar.withUnsafeBytes { ps in
                out.withUnsafeMutableBytes { po in
                    program.run(
                        shape: shape,
                        inputs: [
                            FusedInput(
                                pointer: pr.baseAddress!,
                                layout: StridedLayout(contiguous: [3, 1]).broadcast(to: shape), type: .float32),
                            FusedInput(
                                pointer: ps.baseAddress!, layout: StridedLayout(contiguous: []).broadcast(to: shape),
                                type: .float32),
                        ],
                        outputs: [FusedOutput(pointer: po.baseAddress!, type: .float32)])
                }
            }
        }
        let expected: [Float] = (0..<7500).map { (i: Int) -> Float in Float(i / 2500 + 1) * 10 }
        #expect(out == expected)
    }

    /// A layer norm's last pass over rows that blocks straddle (a multiple of neither the block
    /// nor a vector): per-row statistics and per-column scales broadcast, a transposed operand
    /// and a float16 per-column one — blocks split at the rows and read in place, or copied.
    @Test("row-split blocks: per-row and per-column operands, transposed and float16 ones", arguments: [1, 7, 300])
    func rowSplitBlocks(rows: Int) {
        let width = 384
        let count = rows * width
        var rng = SeededRandom(seed: UInt64(rows))
        let x = rng.floats(count)
        let mean = rng.floats(rows)
        let gamma = rng.floats(width)
        let transposedSource = rng.floats(count)  // [width, rows] row-major, read as [rows, width]
        let beta = rng.floats(width).map { Float(Float16($0)) }
        let beta16 = beta.map { Float16($0) }
        // ((x - mean) * gamma + t) + beta
        let program = FusedProgram(
            computeType: .float32,
            instructions: [
                .input(0), .input(1), .binary(.sub, 0, 1), .input(2), .binary(.mul, 2, 3), .input(3),
                .binary(.add, 4, 5), .input(4), .binary(.add, 6, 7),
            ], outputs: [8])
        var out = [Float](repeating: .nan, count: count)
        let shape = [rows, width]
        x.withUnsafeBytes { px in
            mean.withUnsafeBytes { pm in
                gamma.withUnsafeBytes { pg in
                    transposedSource.withUnsafeBytes { pt in
                        beta16.withUnsafeBytes { pb in
                            out.withUnsafeMutableBytes { po in
                                program.run(
                                    shape: shape,
                                    inputs: [
                                        FusedInput(
                                            pointer: px.baseAddress!, layout: StridedLayout(contiguous: shape),
                                            type: .float32),
                                        FusedInput(
                                            pointer: pm.baseAddress!,
                                            layout: StridedLayout(contiguous: [rows, 1]).broadcast(to: shape),
                                            type: .float32),
                                        FusedInput(
                                            pointer: pg.baseAddress!,
                                            layout: StridedLayout(contiguous: [width]).broadcast(to: shape),
                                            type: .float32),
                                        FusedInput(
                                            pointer: pt.baseAddress!,
                                            layout: StridedLayout(contiguous: [width, rows]).permuted([1, 0]),
                                            type: .float32),
                                        FusedInput(
                                            pointer: pb.baseAddress!,
                                            layout: StridedLayout(contiguous: [width]).broadcast(to: shape),
                                            type: .float16),
                                    ],
                                    outputs: [FusedOutput(pointer: po.baseAddress!, type: .float32)])
                            }
                        }
                    }
                }
            }
        }
        let expected = (0..<count).map { e -> Float in
            let (r, c) = e.quotientAndRemainder(dividingBy: width)
            return ((x[e] - mean[r]) * gamma[c] + transposedSource[c * rows + r]) + beta[c]
        }
        #expect(out.map(\.bitPattern) == expected.map(\.bitPattern))
    }

    /// `(x op1 m) op2 (s + 0.25)` with `m` and `s` per row (uniform in each row-sized block), in
    /// every operand order: the two ops run as one pass and must give what two stored passes give.
    @Test(
        "two arithmetic ops with per-row operands run as one pass",
        arguments: [BinaryOp.add, .sub, .mul, .div], [BinaryOp.add, .sub, .mul, .div])
    func binaryPairs(first: BinaryOp, second: BinaryOp) {
        let shape = [5, 300]
        var rng = SeededRandom(seed: 91)
        var x = (0..<1500).map { _ in Float.random(in: -4...4, using: &rng) }
        x[7] = 0
        x[8] = .infinity
        x[9] = -0.0
        let m: [Float] = [0.5, -1.25, 3, 0, 1e-3]
        let s: [Float] = [1.5, 0.75, -2, 1e-5, 7]
        let perRow = StridedLayout(contiguous: [5, 1]).broadcast(to: shape)
        let logical = [x, (0..<1500).map { m[$0 / 300] }, (0..<1500).map { s[$0 / 300] }]
        for (xFirst, tFirst) in [(true, true), (true, false), (false, true), (false, false)] {
            // The second op's scalar (s + 0.25) is computed between the two, as in a layer norm.
            let program = FusedProgram(
                computeType: .float32,
                instructions: [
                    .input(0), .input(1), .binary(first, xFirst ? 0 : 1, xFirst ? 1 : 0), .input(2),
                    .constant(0.25), .binary(.add, 3, 4), .binary(second, tFirst ? 2 : 5, tFirst ? 5 : 2),
                ], outputs: [6])
            var out = [Float](repeating: .nan, count: 1500)
            x.withUnsafeBytes { px in
                m.withUnsafeBytes { pm in
                    s.withUnsafeBytes { ps in
                        out.withUnsafeMutableBytes { po in
                            program.run(
                                shape: shape,
                                inputs: [
                                    FusedInput(
                                        pointer: px.baseAddress!, layout: StridedLayout(contiguous: shape),
                                        type: .float32),
                                    FusedInput(pointer: pm.baseAddress!, layout: perRow, type: .float32),
                                    FusedInput(pointer: ps.baseAddress!, layout: perRow, type: .float32),
                                ],
                                outputs: [FusedOutput(pointer: po.baseAddress!, type: .float32)])
                        }
                    }
                }
            }
            let expected = referenceEvaluate(program, inputs: logical, count: 1500)[0]
            #expect(
                out.map(\.bitPattern) == expected.map(\.bitPattern), "\(program)")
        }
    }

    /// A condition that is the same over a block (a broadcast scalar) makes `select` pick an
    /// operand whole: the pick must still reach the output and survive later reuse of the
    /// operand's scratch slot (it once returned the operand's block unwritten to the output).
    @Test("select with a condition uniform in the block", arguments: [Float(1), 0])
    func selectUniformCondition(condition: Float) {
        let count = 37
        let programs = [
            // out = c ? x : y, written straight into the output.
            FusedProgram(
                computeType: .float32, instructions: [.input(0), .input(1), .input(2), .select(condition: 0, 1, 2)],
                outputs: [3]),
            // s = c ? x * 2 : y; out = (s + 1) + s * 3: `x * 2`'s slot is free after the select.
            FusedProgram(
                computeType: .float32,
                instructions: [
                    .input(0), .input(1), .input(2), .constant(2), .binary(.mul, 1, 3), .select(condition: 0, 4, 2),
                    .constant(1), .binary(.add, 5, 6), .constant(3), .binary(.mul, 5, 8), .binary(.add, 7, 9),
                ],
                outputs: [10]),
        ]
        let x = (0..<count).map { Float($0) }
        let y = (0..<count).map { Float(100 - $0) }
        for program in programs {
            let expected = referenceEvaluate(
                program, inputs: [[Float](repeating: condition, count: count), x, y], count: count)
            var out = [Float](repeating: .nan, count: count)
            [condition].withUnsafeBytes { pc in
                x.withUnsafeBytes { px in
                    y.withUnsafeBytes { py in
                        out.withUnsafeMutableBytes { po in
                            program.run(
                                shape: [count],
                                inputs: [
                                    FusedInput(
                                        pointer: pc.baseAddress!,
                                        layout: StridedLayout(contiguous: [1]).broadcast(to: [count]), type: .float32),
                                    FusedInput(
                                        pointer: px.baseAddress!, layout: StridedLayout(contiguous: [count]),
                                        type: .float32),
                                    FusedInput(
                                        pointer: py.baseAddress!, layout: StridedLayout(contiguous: [count]),
                                        type: .float32),
                                ],
                                outputs: [FusedOutput(pointer: po.baseAddress!, type: .float32)])
                        }
                    }
                }
            }
            #expect(out == expected[0], "\(program)")
        }
    }

    @Test("integer programs wrap and store to narrower types")
    func integerProgram() {
        let a: [Int16] = (0..<100).map { Int16($0 * 300 - 15000) }
        var out = [Int8](repeating: 0, count: 100)
        let program = FusedProgram(
            computeType: .int32, instructions: [.input(0), .constant(3), .binary(.mul, 0, 1), .unary(.abs, 2)],
            outputs: [3])
        a.withUnsafeBytes { pa in
            out.withUnsafeMutableBytes { po in
                program.run(
                    shape: [10, 10],
                    inputs: [
                        FusedInput(pointer: pa.baseAddress!, layout: StridedLayout(contiguous: [10, 10]), type: .int16)
                    ],
                    outputs: [FusedOutput(pointer: po.baseAddress!, type: .int8)])
            }
        }
        #expect(out == a.map { Int8(truncatingIfNeeded: Swift.abs(Int32($0) * 3)) })
    }

    @Test("a 200-instruction chain on a small tensor")
    func longChain() {
        var instructions: [FusedProgram.Instruction] = [.input(0), .constant(1.0001), .constant(0.0001)]
        var last = 0
        for _ in 0..<100 {
            instructions.append(.binary(.mul, last, 1))
            instructions.append(.binary(.add, instructions.count - 1, 2))
            last = instructions.count - 1
        }
        let program = FusedProgram(computeType: .float32, instructions: instructions, outputs: [last])
        let x = (0..<16).map { Float($0) }
        var out = [Float](repeating: 0, count: 16)
        x.withUnsafeBytes { px in
            out.withUnsafeMutableBytes { po in
                program.run(
                    shape: [16],
                    inputs: [
                        FusedInput(pointer: px.baseAddress!, layout: StridedLayout(contiguous: [16]), type: .float32)
                    ],
                    outputs: [FusedOutput(pointer: po.baseAddress!, type: .float32)])
            }
        }
        let expected = x.map { v -> Float in
            var y = v
            for _ in 0..<100 { y = y * 1.0001 + 0.0001 }
            return y
        }
        #expect(out == expected)
    }
}
