import Testing

@testable import TesseraModels

@Suite("MILNamedValues")
struct MILNamedValuesTests {
    @Test("set, replace and remove keep file order; lookups find the last value set")
    func setReplaceRemove() {
        var values: MILNamedValues<Int> = ["x": 1, "weight": 2]
        values["bias"] = 3
        values["x"] = 4
        #expect(values.keys == ["x", "weight", "bias"])
        #expect(values.values == [4, 2, 3])
        #expect(values["x"] == 4 && values["bias"] == 3 && values["pad"] == nil)
        values["weight"] = nil
        values["pad"] = nil
        #expect(values.keys == ["x", "bias"] && values.count == 2 && !values.isEmpty)
        #expect(Array(values.map(\.key)) == ["x", "bias"])
        values["x"] = nil
        values["bias"] = nil
        #expect(values.isEmpty && values == MILNamedValues())
    }

    @Test("a repeated name in a literal keeps its last value, as a repeated protobuf map key does")
    func repeatedKey() {
        let values: MILNamedValues<String> = ["name": "a", "val": "b", "name": "c"]
        #expect(values.keys == ["name", "val"])
        #expect(values["name"] == "c")
    }

    @Test("equality ignores order but not names, values or counts")
    func equality() {
        let values: MILNamedValues<Int> = ["x": 1, "y": 2]
        #expect(values == ["y": 2, "x": 1])
        #expect(values != ["x": 1, "y": 3])
        #expect(values != ["x": 1, "z": 2])
        #expect(values != ["x": 1])
        #expect(values != ["x": 1, "y": 2, "z": 3])
    }
}
