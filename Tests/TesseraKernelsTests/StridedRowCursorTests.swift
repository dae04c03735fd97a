import Dispatch
import Synchronization
import Testing
import _TesseraTestSupport

@testable import TesseraKernels

/// The one strided walk (`StridedRowCursor`, `StridedLayout.forEachRow`, `elementOffsets`)
/// against `NaiveLayout`'s multi-index arithmetic.
@Suite("StridedRowCursor")
struct StridedRowCursorTests {
    /// Layouts every strided loop must walk: plain, transposed, reversed, broadcast, sliced,
    /// rank 0, rank 1 and empty.
    static let layouts: [StridedLayout] = [
        StridedLayout(contiguous: [2, 3, 4]),
        StridedLayout(contiguous: [2, 3, 4]).permuted([2, 0, 1]),
        StridedLayout(shape: [3, 4], strides: [-4, -1], offset: 11),
        StridedLayout(shape: [2, 3, 2], strides: [6, -2, 1], offset: 4),
        StridedLayout(contiguous: [3]).broadcast(to: [2, 4, 3]),
        StridedLayout(contiguous: [4, 1]).broadcast(to: [4, 5]),
        StridedLayout(shape: [2, 2, 3], strides: [40, 7, 2], offset: 5),
        StridedLayout(shape: [], strides: [], offset: 3),
        StridedLayout(shape: [5], strides: [-2], offset: 8),
        StridedLayout(shape: [1, 1, 1], strides: [9, 9, 9], offset: 2),
        StridedLayout(shape: [3, 0, 2], strides: [2, 2, 1]),
        StridedLayout(shape: [0], strides: [1]),
    ]

    @Test("elementOffsets visits every position in row-major order", arguments: layouts)
    func elementOffsetsMatchNaive(_ layout: StridedLayout) {
        let expected = NaiveLayout.indices(of: layout.shape).map { NaiveLayout.position(of: $0, in: layout) }
        #expect(layout.elementOffsets() == expected)
        #expect(layout.elementOffsets(limit: 5) == Array(expected.prefix(5)))
        #expect(layout.elementOffsets(limit: 0) == [])
    }

    @Test("forEachRow hands out rows whose elements are the naive positions", arguments: layouts)
    func forEachRowMatchesNaive(_ layout: StridedLayout) {
        let expected = NaiveLayout.indices(of: layout.shape).map { NaiveLayout.position(of: $0, in: layout) }
        var visited: [Int] = []
        var linears: [Int] = []
        layout.forEachRow { linear, offset, length, stride in
            #expect(length == (layout.shape.last ?? 1))
            linears.append(linear)
            for j in 0..<length { visited.append(offset + j * stride) }
        }
        #expect(visited == expected)
        let rowLength = layout.shape.last ?? 1
        #expect(linears == Array(stride(from: 0, to: expected.count, by: Swift.max(rowLength, 1))))
    }

    @Test("a two-operand cursor started at any row tracks both operands and stops after the last row")
    func twoOperandsFromEveryRow() {
        let source = StridedLayout(shape: [3, 2, 4], strides: [-8, 0, 2], offset: 17)
        let destination = StridedLayout(contiguous: [3, 2, 4]).permuted([0, 1, 2])
        let rows = 3 * 2
        let outer = NaiveLayout.indices(of: [3, 2])
        for first in 0..<rows {
            var seen: [(Int, Int)] = []
            let stopped = StridedRowCursor.withCursor(
                shape: source.shape, strides: source.strides, offset: source.offset,
                otherStrides: destination.strides, otherOffset: 1, row: first
            ) { cursor in
                #expect(cursor.rowLength == 4)
                #expect(cursor.rowStride == 2)
                #expect(cursor.otherRowStride == 1)
                repeat { seen.append((cursor.offset, cursor.otherOffset)) } while cursor.nextRow()
                return (cursor.offset, cursor.otherOffset)
            }
            let expected = outer[first...].map { index in
                (
                    NaiveLayout.position(of: index + [0], in: source),
                    NaiveLayout.position(of: index + [0], in: destination) + 1
                )
            }
            #expect(seen.map(\.0) == expected.map(\.0))
            #expect(seen.map(\.1) == expected.map(\.1))
            // After the last row the cursor is back at row 0.
            #expect(stopped.0 == source.offset && stopped.1 == 1)
        }
    }

    @Test("a rank-0 cursor is one contiguous row of one element")
    func rankZero() {
        StridedRowCursor.withCursor(shape: [], strides: [], offset: 6, otherStrides: [], otherOffset: 2) { cursor in
            #expect(cursor.rowLength == 1)
            #expect(cursor.rowStride == 1)
            #expect(cursor.offset == 6)
            #expect(cursor.otherOffset == 2)
            let more = cursor.nextRow()
            #expect(!more)
        }
    }

    /// Cursors on several threads at once over the same shape and stride arrays (as the chunks
    /// of one fused plan walk its shape): each walks its own rows. The cursor keeps no array
    /// (its outer sizes and strides are copied into its own temporary allocation), so under
    /// `make tsan-ci` ThreadSanitizer has no shared array to report; when `nextRow` read the
    /// plan's arrays from inside the `mutating` method, it reported each such pair of threads
    /// as a "Swift access race" on the array.
    @Test("cursors on many threads over one shape array walk independently")
    func concurrentCursorsOverSharedArrays() {
        let layout = StridedLayout(shape: [4, 3, 5], strides: [1, 20, 4], offset: 2)
        let shape = layout.shape
        let strides = layout.strides
        let expected = NaiveLayout.indices(of: [4, 3]).map { NaiveLayout.position(of: $0 + [0], in: layout) }
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { task in
            for repetition in 0..<200 {
                let first = (task + repetition) % expected.count
                let seen = StridedRowCursor.withCursor(shape: shape, strides: strides, offset: 2, row: first) {
                    cursor in
                    var offsets: [Int] = []
                    repeat { offsets.append(cursor.offset) } while cursor.nextRow()
                    return offsets
                }
                if seen != Array(expected[first...]) { mismatches.add(1, ordering: .relaxed) }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
    }
}
