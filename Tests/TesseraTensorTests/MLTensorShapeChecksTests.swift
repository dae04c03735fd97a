import Foundation
import Testing

@testable import TesseraTensor

/// `MLTensor.withShapeChecks` throws the first broken rule with the trap's message, lets the
/// code after it run without crashing, and keeps scopes apart.
@Suite("MLTensor shape-check scope")
struct MLTensorShapeChecksTests {
    /// The message `body` makes the scope throw, or `nil` when it throws nothing.
    private func thrownMessage(_ body: () -> Void) -> String? {
        do {
            try MLTensor.withShapeChecks { body() }
            return nil
        } catch let error as MLTensorShapeError {
            return error.message
        } catch {
            return "unexpected \(error)"
        }
    }

    private let matrix = MLTensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])

    /// One broken rule per kind of check, each with the message its trap prints.
    static let cases: [(String, @Sendable () -> Void, String)] = [
        (
            "broadcast of two inline tensors",
            { _ = MLTensor([1, 2, 3] as [Float]) + MLTensor([1, 2] as [Float]) },
            "[add] shapes [3] and [2] are not broadcastable"
        ),
        (
            "broadcast of folded tensors larger than inline",
            {
                _ =
                    MLTensor(shape: [20], scalars: [Float](repeating: 1, count: 20))
                    * MLTensor(shape: [3], scalars: [1, 2, 3] as [Float])
            },
            "[mul] shapes [20] and [3] are not broadcastable"
        ),
        (
            "scalar types of a binary op",
            { _ = MLTensor([1, 2] as [Float]) + MLTensor([1, 2] as [Int32]) },
            "[add] scalar types differ: float32 [2] vs int32 [2]"
        ),
        (
            "matmul inner dimensions",
            {
                _ = MLTensor(zeros: [2, 3], scalarType: Float.self).matmul(
                    MLTensor(zeros: [4, 5], scalarType: Float.self))
            },
            "[matmul] inner dimensions differ: [2, 3] vs [4, 5]"
        ),
        (
            "matmul batch dimensions (the graph rule)",
            {
                _ = MLTensor(zeros: [2, 2, 3], scalarType: Float.self).matmul(
                    MLTensor(zeros: [3, 3, 4], scalarType: Float.self))
            },
            "[matmul] batch dimensions of [2, 2, 3] and [3, 3, 4] are not broadcastable"
        ),
        (
            "softmax axis",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).softmax(alongAxis: 2) },
            "[softmax] axis 2 is out of range for a tensor of shape [2, 3]"
        ),
        (
            "softmax of integers",
            { _ = MLTensor(zeros: [2, 3], scalarType: Int32.self).softmax() },
            "[softmax(1)] needs a floating-point tensor, got int32"
        ),
        (
            "repeated reduction axis",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).sum(alongAxes: [1, -1]) },
            "[sum] repeated axis in [1, -1] for a tensor of shape [2, 3]"
        ),
        (
            "reshape count",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).reshaped(to: [4]) },
            "[reshape] cannot reshape [2, 3] (6 scalars) to [4]"
        ),
        (
            "concatenation off the axis",
            {
                _ = MLTensor(
                    concatenating: [
                        MLTensor(zeros: [2, 3], scalarType: Float.self),
                        MLTensor(zeros: [3, 4], scalarType: Float.self),
                    ]
                )
            },
            "[concatenate] shapes differ off axis 0: [3, 4] vs [2, 3]"
        ),
        (
            "stacking of different shapes",
            {
                _ = MLTensor(stacking: [
                    MLTensor(zeros: [2], scalarType: Float.self), MLTensor(zeros: [3], scalarType: Float.self),
                ])
            },
            "[stack] shapes differ: [2] vs [3]"
        ),
        (
            "gather indices of the wrong type",
            {
                _ = MLTensor(zeros: [3, 3], scalarType: Float.self).gathering(
                    atIndices: MLTensor([0, 1] as [Float]), alongAxis: 0)
            },
            "[gather] indices must be int32, got float32"
        ),
        (
            "topK larger than the axis",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).topK(4) },
            "[topK] k = 4 is larger than the last axis of shape [2, 3]"
        ),
        (
            "subscript index",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self)[nil, -4] },
            "[subscript] index -4 is out of range for axis 1 of shape [2, 3]"
        ),
        (
            "split count",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).split(count: 2, alongAxis: 1) },
            "[split] count 2 does not divide dimension 1 of shape [2, 3]"
        ),
        (
            "padding pairs",
            { _ = MLTensor(zeros: [2, 3], scalarType: Float.self).padded(forSizes: [(1, 1)], with: 0) },
            "[padded] 1 (before, after) pairs for a tensor of shape [2, 3]"
        ),
        (
            "scalars that do not fill the shape",
            { _ = MLTensor(shape: [2, 2], scalars: [1, 2, 3] as [Float]) },
            "[MLTensor] 3 scalars do not fill shape [2, 2] (4 needed)"
        ),
        (
            "negative random shape",
            { _ = MLTensor(randomNormal: [2, -1], seed: 1, scalarType: Float.self) },
            "[randomNormal] negative dimension in shape [2, -1]"
        ),
        (
            "logical operator on floats",
            { _ = .!MLTensor([1] as [Float]) },
            "[logicalNot] needs bool tensors, got float32 [1]"
        ),
        (
            "attention mask",
            {
                let q = MLTensor(zeros: [2, 4], scalarType: Float.self)
                _ = MLTensor.scaledDotProductAttention(
                    query: q, key: q, value: q, mask: MLTensor(repeating: true, shape: [3, 4], scalarType: Bool.self))
            },
            "[scaledDotProductAttention] mask [3, 4] does not broadcast to the scores [2, 2] (query [2, 4], key [2, 4])"
        ),
    ]

    @Test("each broken rule is thrown with the trap's message", arguments: 0..<cases.count)
    func brokenRule(index: Int) {
        let (name, body, expected) = Self.cases[index]
        #expect(thrownMessage(body) == expected, "\(name)")
    }

    @Test("a scope whose rules hold returns the body's result")
    func success() throws {
        let sum = try MLTensor.withShapeChecks {
            (matrix + matrix).sum().scalars(of: Float.self)
        }
        #expect(sum == [42])
    }

    @Test("only the first broken rule is reported; a chain after it runs on placeholders")
    func chainAfterFailure() {
        let message = thrownMessage {
            let bad = matrix.matmul(matrix)  // [2, 3] × [2, 3]
            let worse = bad.reshaped(to: [7]).softmax(alongAxis: 5) + MLTensor(zeros: [4], scalarType: Float.self)
            let parts = worse.split(count: 3)
            _ = MLTensor(concatenating: parts, alongAxis: 9).transposed(permutation: [2, 0]).topK(10)
            _ = bad.gathering(atIndices: MLTensor([0, 7] as [Int32]), alongAxis: 4).sum(alongAxes: [0, 0])
        }
        #expect(message == "[matmul] inner dimensions differ: [2, 3] vs [2, 3]")
    }

    @Test("materializing and reading placeholders inside a failed scope is safe")
    func materializeInsideFailedScope() {
        var read: [Float] = []
        let message = thrownMessage {
            let bad = matrix.reshaped(to: [5])
            let y = (bad.exp() * 2 + matrix.sum()).softmax()
            read = y.shapedArray(of: Float.self).scalars
            _ = (bad .> 0).cast(to: Int32.self).scalars(of: Int32.self)
            _ = MLTensor(stacking: [bad, matrix]).materialized()
        }
        #expect(message == "[reshape] cannot reshape [2, 3] (6 scalars) to [5]")
        #expect(read.count == 6)
    }

    @Test("an integer division by a placeholder does not crash")
    func integerDivisionByPlaceholder() {
        let message = thrownMessage {
            let divisor = MLTensor([1, 2, 3] as [Int32]).reshaped(to: [2])
            _ = (MLTensor([7, 8, 9] as [Int32]) / divisor.reshaped(to: [3])).scalars(of: Int32.self)
        }
        #expect(message == "[reshape] cannot reshape [3] (3 scalars) to [2]")
    }

    @Test("nested scopes: the innermost scope gets the error, the outer one only its own")
    func nestedScopes() throws {
        let outer = thrownMessage {
            let inner = thrownMessage { _ = matrix.softmax(alongAxis: 3) }
            #expect(inner == "[softmax] axis 3 is out of range for a tensor of shape [2, 3]")
            _ = matrix.reshaped(to: [1])
        }
        #expect(outer == "[reshape] cannot reshape [2, 3] (6 scalars) to [1]")
        let clean = try MLTensor.withShapeChecks {
            _ = thrownMessage { _ = matrix.reshaped(to: [1]) }
            return matrix.reshaped(to: [3, 2]).shape
        }
        #expect(clean == [3, 2])
    }

    @Test("an error the body throws propagates; a broken rule before it wins")
    func bodyErrors() {
        struct Stop: Error {}
        #expect(throws: Stop.self) { try MLTensor.withShapeChecks { throw Stop() } }
        #expect(throws: MLTensorShapeError(message: "[reshape] cannot reshape [2, 3] (6 scalars) to [1]")) {
            try MLTensor.withShapeChecks {
                _ = matrix.reshaped(to: [1])
                throw Stop()
            }
        }
    }

    @Test("scopes in concurrent tasks do not see each other's errors")
    func concurrentScopes() async {
        let results = await withTaskGroup(of: (Int, String?).self) { group in
            for task in 0..<16 {
                group.addTask {
                    let x = MLTensor(zeros: [task + 1], scalarType: Float.self)
                    do {
                        try MLTensor.withShapeChecks {
                            for _ in 0..<50 { _ = (x + x).sum() }
                            // Even tasks break a rule that names their own shape; odd ones do not.
                            if task % 2 == 0 { _ = x.reshaped(to: [task + 2]) }
                            for _ in 0..<50 { _ = (x * x).sum() }
                        }
                        return (task, nil)
                    } catch {
                        return (task, (error as? MLTensorShapeError)?.message ?? "\(error)")
                    }
                }
            }
            var results: [Int: String?] = [:]
            for await (task, message) in group { results[task] = message }
            return results
        }
        for task in 0..<16 {
            let expected =
                task % 2 == 0 ? "[reshape] cannot reshape [\(task + 1)] (\(task + 1) scalars) to [\(task + 2)]" : nil
            #expect(results[task] == .some(expected), "task \(task)")
        }
    }

    @Test("the asynchronous scope covers awaited work")
    func asyncScope() async {
        do {
            _ = try await MLTensor.withShapeChecks {
                let y = matrix.softmax(alongAxis: -3)
                return await y.shapedArray(of: Float.self).scalars
            }
            Issue.record("no error thrown")
        } catch {
            #expect(
                error as? MLTensorShapeError
                    == MLTensorShapeError(message: "[softmax] axis -3 is out of range for a tensor of shape [2, 3]"))
        }
        let values = try? await MLTensor.withShapeChecks {
            await matrix.sum(alongAxes: 1).shapedArray(of: Float.self).scalars
        }
        #expect(values == [6, 15])
    }

    @Test("the scope throws exactly what the trap prints, and does not change the trap outside it")
    func sameMessageAsTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = MLTensor(zeros: [2, 2, 3], scalarType: Float.self)
            let b = MLTensor(zeros: [3, 3, 4], scalarType: Float.self)
            do {
                try MLTensor.withShapeChecks { _ = a.matmul(b) }
            } catch {
                FileHandle.standardError.write(Data("thrown: \(error)\n".utf8))
            }
            _ = a.matmul(b)  // traps: outside the scope nothing is recorded
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let message = "[matmul] batch dimensions of [2, 2, 3] and [3, 3, 4] are not broadcastable"
        #expect(output.contains("thrown: \(message)\n"), "\(output)")
        #expect(output.components(separatedBy: message).count == 3, "\(output)")
    }
}
