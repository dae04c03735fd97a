import TesseraGraph
import TesseraKernels
import Testing

/// Bad graph construction traps where it is written, with the op and the shapes in the message.
@Suite("Graph traps")
struct GraphTrapTests {
    @Test("matmul with mismatched inner dimensions names the op and both shapes")
    func matmulMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Node(
                .matmul,
                inputs: [constant([1, 2, 3, 4, 5, 6], [2, 3]), constant([Float](repeating: 1, count: 20), [4, 5])])
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("[matmul] inner dimensions differ: [2, 3] vs [4, 5]"), "\(message)")
    }

    @Test("non-broadcastable shapes trap naming the op")
    func broadcastMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Node(.binary(.add), inputs: [constant([1, 2, 3], [3]), constant([1, 2], [2])])
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("[add] shapes [3] and [2] are not broadcastable"), "\(message)")
    }
}
