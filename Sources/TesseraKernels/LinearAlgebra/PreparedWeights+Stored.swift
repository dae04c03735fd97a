import CTesseraSIMD
import Synchronization

extension PreparedWeights {
    /// One prepared form as a compiled model stores it: the weight it was made from (by its
    /// place in the file), its shape and form, and the packed bytes.
    package struct StoredForm: Equatable {
        /// The form's kind, as stored.
        package enum Kind: UInt32 {
            /// ``PackedGEMMOperand`` of a `rows × depth` row-major left operand.
            case left = 0
            /// ``PackedGEMMRightOperand`` of a `depth × rows` operand stored row-major.
            case right = 1
            /// ``PackedGEMMRightOperand`` of a `depth × rows` operand stored as its transpose.
            case rightTransposed = 2
            /// ``WinogradFilter`` of an `[rows, depth, 3, 3]` weight.
            case winograd = 3
        }

        /// The form's kind.
        package var kind: Kind
        /// Byte offset of the weight's first element from the start of the memory it lies in.
        package var weightOffset: Int
        /// The rows (a right operand's columns, a filter's output channels).
        package var rows: Int
        /// The inner dimension (a filter's input channels).
        package var depth: Int
        /// A right operand's row stride, a Winograd filter's tile side; 0 for a left operand.
        package var parameter: Int

        /// Creates a description of a stored form.
        package init(kind: Kind, weightOffset: Int, rows: Int, depth: Int, parameter: Int) {
            self.kind = kind
            self.weightOffset = weightOffset
            self.rows = rows
            self.depth = depth
            self.parameter = parameter
        }

        /// The bytes the packed form takes; `nil` for shapes no kernel prepares (negative or
        /// overflowing sizes, a tile other than 2 or 4, a row stride shorter than a row).
        package var byteCount: Int? {
            let limit = 1 << 40
            guard rows >= 0, depth >= 0, rows < limit, depth < limit,
                rows.multipliedReportingOverflow(by: depth)
                    .partialValue < limit, weightOffset >= 0
            else { return nil }
            switch kind {
            case .left:
                return parameter == 0 ? PackedGEMMOperand.byteCount(rows: rows, depth: depth) : nil
            case .right:
                return parameter >= rows ? PackedGEMMRightOperand.byteCount(depth: depth, columns: rows) : nil
            case .rightTransposed:
                return parameter >= depth ? PackedGEMMRightOperand.byteCount(depth: depth, columns: rows) : nil
            case .winograd:
                return parameter == 2 || parameter == 4
                    ? WinogradFilter.byteCount(outputChannels: rows, inputChannels: depth, tile: parameter) : nil
            }
        }

        var form: Form {
            switch kind {
            case .left: .left
            case .right: .right(transposed: false, rowStride: parameter)
            case .rightTransposed: .right(transposed: true, rowStride: parameter)
            case .winograd: .winograd(tile: parameter)
            }
        }
    }

    /// What the stored forms' layout and choice depend on, for this CPU: the micro-kernels'
    /// panel rows and strip columns, and which bodies run (AVX2 + FMA, AVX-512, the vectorized
    /// right-packed kernel), which decide the forms a model prepares. A compiled model's stored
    /// forms are used only when their tag equals this one.
    package static let layoutTag: UInt64 = {
        var tag: UInt64 = 1 << 32  // layout version 1
        tag |= UInt64(PackedGEMMOperand.panelRows) | UInt64(PackedGEMMRightOperand.stripColumns) << 8
        if PackedGEMM.isAvailable { tag |= 1 << 16 }
        if tessera_sgemm_has_avx512() != 0 { tag |= 1 << 17 }
        if PackedGEMM.rightPackedIsPreferred { tag |= 1 << 18 }
        return tag
    }()

    /// A stored form registered for memory that lives while its keep-alive does. It holds the
    /// keep-alive weakly and makes the borrowing operand (which holds it strongly) only when a
    /// lookup finds it, so a registration alone never keeps a model's mapping alive.
    struct Registered {
        weak var keepAlive: (any AnyObject & Sendable)?
        let form: StoredForm
        /// The packed bytes' address.
        let packed: UInt
    }

    /// Where a registered form's weight is: its first element's address, shape and form.
    struct AddressKey: Hashable {
        let address: UInt
        let rows: Int
        let depth: Int
        let form: Form
    }

    static let registered = Mutex<[AddressKey: Registered]>([:])

    /// Registers prepared forms made earlier and kept in memory nobody writes (a compiled
    /// model's stored forms, mapped): each `(form, packed)` pair is the form of the weight at
    /// `base + form.weightOffset`, its packed bytes at `packed` (64-byte aligned, of
    /// ``PreparedWeights/StoredForm/byteCount`` bytes). A weight whose storage qualifies (``isCacheable(_:)``)
    /// and starts at that address then finds the form, read in place, instead of packing it, for
    /// as long as `keepAlive` (which keeps both the weights and the packed bytes alive) lives;
    /// the registration holds `keepAlive` weakly, the forms a lookup finds hold it strongly.
    package static func register(
        _ forms: [(form: StoredForm, packed: UnsafeRawPointer)], base: UnsafeRawPointer,
        keepAlive: any AnyObject & Sendable
    ) {
        let made = forms.map { form, bytes in
            (
                AddressKey(
                    address: UInt(bitPattern: base + form.weightOffset), rows: form.rows, depth: form.depth,
                    form: form.form),
                Registered(keepAlive: keepAlive, form: form, packed: UInt(bitPattern: bytes))
            )
        }
        registered.withLock { table in
            if table.values.contains(where: { $0.keepAlive == nil }) {
                table = table.filter { $0.value.keepAlive != nil }
            }
            for (key, value) in made { table[key] = value }
        }
    }

    /// The registered form of the weight at `address`, borrowing the stored bytes, if its
    /// keep-alive still lives.
    static func storedForm(at address: UnsafeRawPointer, rows: Int, depth: Int, form: Form) -> (
        any AnyObject & Sendable
    )? {
        let key = AddressKey(address: UInt(bitPattern: address), rows: rows, depth: depth, form: form)
        guard
            let (found, keepAlive) = registered.withLock({ table -> (StoredForm, UInt, any AnyObject & Sendable)? in
                guard let entry = table[key], let keepAlive = entry.keepAlive else { return nil }
                return (entry.form, entry.packed, keepAlive)
            }).map({ ((form: $0.0, packed: $0.1), $0.2) }),
            let floats = UnsafePointer<Float>(bitPattern: found.packed)
        else { return nil }
        let stored = found.form
        switch stored.kind {
        case .left:
            return PackedGEMMOperand(borrowing: floats, rows: stored.rows, depth: stored.depth, keepAlive: keepAlive)
        case .right, .rightTransposed:
            return PackedGEMMRightOperand(
                borrowing: floats, depth: stored.depth, columns: stored.rows, keepAlive: keepAlive)
        case .winograd:
            return WinogradFilter(
                borrowing: floats, outputChannels: stored.rows, inputChannels: stored.depth, tile: stored.parameter,
                keepAlive: keepAlive)
        }
    }

    /// The prepared forms kept for weights that lie in `memory` (a compiled model's weights,
    /// while a model loaded from them lives), with their packed bytes: what
    /// `MLModel.compileModel(at:)` stores.
    package static func forms(in memory: UnsafeRawBufferPointer) -> [(form: StoredForm, bytes: UnsafeRawBufferPointer)]
    {
        guard let base = memory.baseAddress else { return [] }
        let start = UInt(bitPattern: base)
        let end = start + UInt(memory.count)
        var found: [(StoredForm, UnsafeRawBufferPointer)] = []
        entries.withLock { table in
            for (key, entry) in table.entries {
                guard let root = entry.storage else { continue }
                let address = UInt(bitPattern: root.pointer) + UInt(key.offset)
                guard address >= start, address < end else { continue }
                let offset = Int(address - start)
                let form: StoredForm
                let bytes: UnsafeRawBufferPointer
                switch (key.form, entry.packed) {
                case (.left, let packed as PackedGEMMOperand):
                    form = StoredForm(kind: .left, weightOffset: offset, rows: key.rows, depth: key.depth, parameter: 0)
                    bytes = UnsafeRawBufferPointer(start: packed.panels, count: packed.byteCount)
                case (.right(let transposed, let rowStride), let packed as PackedGEMMRightOperand):
                    form = StoredForm(
                        kind: transposed ? .rightTransposed : .right, weightOffset: offset, rows: key.rows,
                        depth: key.depth, parameter: rowStride)
                    bytes = UnsafeRawBufferPointer(start: packed.strips, count: packed.byteCount)
                case (.winograd(let tile), let packed as WinogradFilter):
                    form = StoredForm(
                        kind: .winograd, weightOffset: offset, rows: key.rows, depth: key.depth, parameter: tile)
                    bytes = UnsafeRawBufferPointer(start: packed.storage, count: packed.byteCount)
                default:
                    continue
                }
                found.append((form, bytes))
            }
        }
        return found.sorted {
            ($0.0.weightOffset, $0.0.kind.rawValue, $0.0.rows) < ($1.0.weightOffset, $1.0.kind.rawValue, $1.0.rows)
        }
    }
}
