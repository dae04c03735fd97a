import TesseraKernels
import Testing

/// `Array.checkedElementCount`, the overflow-checked product every reader of outside shapes uses.
@Suite("Element counts of shapes")
struct ElementCountTests {
    @Test("the product of the sizes, 1 for a scalar, nil when it overflows an Int")
    func products() {
        #expect([2, 3, 4].checkedElementCount == 24)
        #expect([Int]().checkedElementCount == 1)
        #expect([7, 0, 1 << 62].checkedElementCount == 0)
        #expect([Int.max].checkedElementCount == Int.max)
        #expect([1 << 31, 1 << 31].checkedElementCount == 1 << 62)
        #expect([1 << 31, 1 << 31, 2].checkedElementCount == nil)
        #expect([1 << 32, 1 << 31].checkedElementCount == nil)
        #expect([1 << 40, 1 << 40].checkedElementCount == nil)
        #expect([Int.max, 2].checkedElementCount == nil)
        // Sizes are not checked for sign: the callers check outside shapes first.
        #expect([-2, 3].checkedElementCount == -6)
    }
}
