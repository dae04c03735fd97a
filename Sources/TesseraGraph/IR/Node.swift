import Synchronization
import TesseraKernels

/// One value in the lazy graph: an op, its inferred shape and scalar type, and — until it is
/// materialized — its inputs; afterwards, its elements.
///
/// The identity fields are immutable and set when the node is built, after the op has checked
/// its inputs (a mistake traps here, where the user wrote it). The only mutable part sits
/// behind a `Mutex`: a pending node holds its inputs; a materialized node holds a
/// ``TensorValue`` and has dropped its inputs, so long-lived tensors do not pin their history;
/// a node made from a small folded op owns its elements until its value is first asked for.
/// Releasing a long chain of pending nodes is iterative, so a 100,000-node chain frees without
/// deep recursion.
public final class Node: Sendable {
    enum State {
        case pending([Node])
        case materialized(TensorValue)
        /// Computed elements the node allocated itself and has not handed out: row-major from
        /// the pointer, `byteCount` bytes. The first request for the node's ``value`` wraps
        /// them in a ``TensorStorage`` (the state becomes `.materialized`); until then nothing
        /// else can reach them, so a uniquely referenced node may overwrite them (see
        /// ``ownsItsElements``).
        case owned(OwnedElements)
    }

    /// Elements a node allocated and owns (see `State.owned`).
    struct OwnedElements: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        let byteCount: Int
    }

    /// What the node computes.
    public let op: GraphOp
    /// The result's shape.
    public let shape: [Int]
    /// The result's scalar type.
    public let type: KernelScalarType
    let state: Mutex<State>
    /// The value of a node made with its elements (``init(value:)``): immutable, so it is
    /// read without the lock, and such a node's `state` stays an empty `.pending` that is never
    /// touched. (Build-time folded ops make nodes that own their elements instead; see
    /// ``init(ownedElements:shape:count:type:)``.)
    package let leafValue: TensorValue?
    /// For a node born with its elements — a leaf whose elements are row-major without gaps
    /// (or a single element), or a node that owns its computed elements — the address of its
    /// first element; `nil` otherwise. Hot paths read it without copying a value (and touching
    /// three reference counts); it stays valid for the node's life.
    nonisolated(unsafe) package let leafElements: UnsafeRawPointer?
    /// Which collection last visited this node (`epoch`) and the entry it got (`index`);
    /// written only under the executor's lock, so relaxed atomics suffice. A dictionary from
    /// node identity to index cost more than the rest of collecting a small graph.
    let visitEpoch = Atomic<UInt64>(0)
    let visitIndex = Atomic<Int>(0)

    /// A node for `op` applied to `inputs`; checks the inputs and infers shape and type.
    ///
    /// Traps with a message naming the op and the shapes when the inputs do not fit the op;
    /// inside a checking scope (``ShapeChecks/withRecording(_:)``) it records the message
    /// instead and makes a ``placeholder(shape:type:)`` shaped like the first input.
    public convenience init(_ op: GraphOp, inputs: [Node]) {
        let signature: ([Int], KernelScalarType)
        do throws(OpError) {
            signature = try op.inferShapeAndType(inputs)
        } catch {
            ShapeChecks.report(error)
            self.init(
                value: Node.placeholderValue(shape: inputs.first?.shape ?? [], type: inputs.first?.type ?? .float32))
            return
        }
        self.init(checked: op, shape: signature.0, type: signature.1, inputs: inputs)
    }

    /// A pending node for `op` on `inputs`, whose rule gave `shape` and `type`.
    private init(checked op: GraphOp, shape: [Int], type: KernelScalarType, inputs: [Node]) {
        self.op = op
        self.shape = shape
        self.type = type
        state = Mutex(.pending(inputs))
        leafValue = nil
        leafElements = nil
    }

    /// A node whose value exists already.
    ///
    /// - Precondition: `value.layout`'s element positions lie inside the storage.
    public init(value: TensorValue) {
        if let range = value.layout.elementRange {
            kernelPrecondition(
                range.lowerBound >= 0 && (range.upperBound + 1) * value.type.byteCount <= value.storage.byteCount,
                "[MLTensor] layout \(value.layout) reaches outside its \(value.storage.byteCount)-byte storage")
        }
        op = .constant
        shape = value.layout.shape
        type = value.type
        state = Mutex(.pending([]))
        leafValue = value
        leafElements =
            value.layout.count == 1 || value.layout.isContiguous
            ? value.pointer + value.layout.offset * value.type.byteCount : nil
    }

    /// A materialized leaf of zeros standing in for the result of an op whose rule failed
    /// inside a checking scope (see ``ShapeChecks``): `shape` (negative sizes read as 0) and
    /// `type`, over a single stored zero (every stride is 0), so a placeholder of any shape
    /// costs one element. Ops on it check their rules as usual, and materializing it is safe.
    package static func placeholder(shape: [Int], type: KernelScalarType) -> Node {
        Node(value: placeholderValue(shape: shape, type: type))
    }

    private static func placeholderValue(shape: [Int], type: KernelScalarType) -> TensorValue {
        let shape = shape.map { Swift.max($0, 0) }
        let zero = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)
        zero.initializeMemory(as: UInt8.self, repeating: 0, count: 8)
        return TensorValue(
            storage: TensorStorage(takingOwnershipOf: zero, byteCount: 8),
            layout: StridedLayout(shape: shape, strides: [Int](repeating: 0, count: shape.count)), type: type)
    }

    /// A node over elements a kernel just wrote into `elements` (allocated with
    /// `UnsafeMutableRawPointer.allocate`, `count` elements of `type` row-major): the node
    /// owns and frees them, and builds a ``TensorStorage`` over them only if its value is
    /// asked for. Small-op folding makes thousands of these; skipping the storage object and
    /// the layout check is most of what they cost.
    package init(ownedElements elements: UnsafeMutableRawPointer, shape: [Int], count: Int, type: KernelScalarType) {
        op = .constant
        self.shape = shape
        self.type = type
        state = Mutex(.owned(OwnedElements(pointer: elements, byteCount: count * type.byteCount)))
        leafValue = nil
        leafElements = UnsafeRawPointer(elements)
    }

    /// Whether the node still owns elements nothing else has seen (made by
    /// ``init(ownedElements:shape:count:type:)``, its value never asked for). A caller holding
    /// the only reference to such a node may overwrite its elements.
    package var ownsItsElements: Bool {
        state.withLock { state in
            if case .owned = state { return true }
            return false
        }
    }

    /// The value of a node in the `.owned` state, which it takes on from now (under the lock).
    private func adoptOwned(_ state: inout State) -> TensorValue? {
        guard case .owned(let elements) = state else { return nil }
        let value = TensorValue(
            storage: TensorStorage(takingOwnershipOf: elements.pointer, byteCount: elements.byteCount),
            layout: StridedLayout(contiguous: shape), type: type)
        state = .materialized(value)
        return value
    }

    /// The node's elements, or `nil` while it is pending.
    public var value: TensorValue? {
        if let leafValue { return leafValue }
        return state.withLock { state in
            if case .materialized(let value) = state { return value }
            return adoptOwned(&state)
        }
    }

    /// The value of a materialized node, or the inputs of a pending one, in one look.
    var contents: (value: TensorValue?, inputs: [Node]) {
        if let leafValue { return (leafValue, []) }
        return state.withLock { state in
            switch state {
            case .materialized(let value): return (value, [])
            case .pending(let inputs): return (nil, inputs)
            case .owned: return (adoptOwned(&state), [])
            }
        }
    }

    /// The inputs of a pending node (empty once materialized).
    public var inputs: [Node] {
        state.withLock { state in
            if case .pending(let inputs) = state { return inputs }
            return []
        }
    }

    /// The number of elements.
    public var count: Int { shape.reduce(1, *) }

    /// Records the node's elements and drops its inputs.
    func materialize(_ value: TensorValue) {
        if leafValue != nil { return }
        var dropped: [Node] = state.withLock { state in
            if case .pending(let inputs) = state {
                state = .materialized(value)
                return inputs
            }
            return []
        }
        Node.releaseIteratively(&dropped)
    }

    deinit {
        if leafValue != nil { return }
        var inputs: [Node] = state.withLock { state in
            switch state {
            case .pending(let inputs):
                state = .pending([])
                return inputs
            case .owned(let elements):
                elements.pointer.deallocate()
                state = .pending([])
                return []
            case .materialized: return []
            }
        }
        Node.releaseIteratively(&inputs)
    }

    /// Releases nodes without recursing: a node this is the last reference to gives up its
    /// inputs to the work list before it is freed, so each deinit sees no inputs.
    ///
    /// `work` is taken by reference so no second copy of the list keeps the nodes alive.
    private static func releaseIteratively(_ work: inout [Node]) {
        while !work.isEmpty {
            var node = work.removeLast()
            if isKnownUniquelyReferenced(&node) {
                let inputs: [Node] = node.state.withLock { state in
                    if case .pending(let inputs) = state {
                        state = .pending([])
                        return inputs
                    }
                    return []
                }
                // Element by element: the generic `append(contentsOf:)` costs ten times more.
                for input in inputs { work.append(input) }
            }
        }
    }
}
