/// The named parameters (`inputs`) or attributes of a MIL operation: a protobuf map kept as
/// the entries in file order and looked up by comparing names.
///
/// An operation has a handful of entries (`const` has two attributes, `conv` eight inputs), so
/// a linear search costs less than hashing a `String`, and decoding appends to one array
/// instead of growing a hash table (with a dictionary per map, decoding MobileNetV2's 539
/// operations took about a sixth longer). Setting a name already present replaces its value, as a
/// repeated protobuf map key does; equality ignores order, as a map's does.
///
/// ```swift
/// var attributes: MILNamedValues<MILValue> = ["name": nameValue]
/// attributes["val"] = weight
/// attributes["val"]  // weight
/// ```
package struct MILNamedValues<Value: Sendable & Equatable>: Sendable, Equatable, Sequence,
    ExpressibleByDictionaryLiteral
{
    /// The entries, in the order they were first set.
    private var entries: [(key: String, value: Value)]

    /// No entries.
    package init() { entries = [] }

    /// The entries of a literal; a repeated name keeps its last value.
    package init(dictionaryLiteral elements: (String, Value)...) {
        entries = []
        entries.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
    }

    /// The value set for `key`, `nil` when there is none; setting `nil` removes the entry.
    package subscript(key: String) -> Value? {
        get {
            // By index: a `for entry in entries` loop copied every entry it passed (its name and
            // value, with their reference counts) before comparing the name.
            for index in entries.indices where entries[index].key == key { return entries[index].value }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                // Room for a typical op's entries at once, instead of growing 1, 2, 4, 8.
                if entries.capacity == 0 { entries.reserveCapacity(4) }
                entries.append((key, newValue))
            }
        }
    }

    /// The number of entries.
    package var count: Int { entries.count }
    /// Whether there are no entries.
    package var isEmpty: Bool { entries.isEmpty }
    /// The names, in order.
    package var keys: [String] { entries.map(\.key) }
    /// The values, in order.
    package var values: [Value] { entries.map(\.value) }

    /// Iterates over `(key, value)` pairs in order.
    package func makeIterator() -> IndexingIterator<[(key: String, value: Value)]> { entries.makeIterator() }

    /// Whether both hold the same names with equal values, in any order.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.count == rhs.count && lhs.entries.allSatisfy { rhs[$0.key] == $0.value }
    }
}
