import Testing

@testable import TesseraModels

/// Lists whose `elem_shape` is computed by the program or symbolic, on the programs
/// `tools/make_list_shape_fixtures.py` writes to `Tests/Fixtures/list-shapes/` (NumPy values).
@Suite("lists with an element shape known at run time")
struct ListElementShapeTests {
    static let all = LoweringFixture.load("list-shapes")

    @Test(
        "a computed size, a symbolic size fixed by the first write, a symbolic list grown in a loop",
        arguments: all)
    func matchesNumPy(_ fixture: LoweringFixture) throws {
        try fixture.check()
    }

    @Test("the cases cover both kinds of size")
    func coverage() {
        #expect(
            Set(Self.all.map(\.name)).isSuperset(of: ["list_computed_element_shape", "list_symbolic_element_shape"]))
    }
}
