import Synchronization

/// Numbers the operations and layers of one structure as it is built, and collects what a
/// compute plan needs to know about each: its relative cost, and whether it runs at all.
struct StructureNumbering: Sendable {
    /// Hands out a distinct id to every structure loaded in this process.
    private static let counter = Atomic<Int>(0)

    /// This structure's id.
    let structure: Int
    /// How many elements have been numbered.
    private(set) var count = 0
    /// Relative cost weight per operation (summing to 1 within each function).
    var costWeights: [StructureKey: Double] = [:]
    /// Operations that are constants: they exist before any prediction and run nowhere.
    var constants: Set<StructureKey> = []

    /// Starts numbering a new structure.
    init() {
        structure = Self.counter.add(1, ordering: .relaxed).newValue
    }

    /// The key of the next element.
    mutating func next() -> StructureKey {
        defer { count += 1 }
        return StructureKey(structure: structure, index: count)
    }

    /// Whether `key` was handed out by this numbering.
    func contains(_ key: StructureKey) -> Bool {
        key.structure == structure && key.index < count
    }
}
