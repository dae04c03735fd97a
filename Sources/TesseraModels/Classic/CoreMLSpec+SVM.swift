import TesseraProtobuf

extension CoreMLSpec {
    /// A support vector machine's kernel (`Kernel` in `SVM.proto`).
    package enum Kernel: Sendable, Equatable {
        /// `⟨x, y⟩`.
        case linear
        /// `exp(-γ‖x − y‖²)`.
        case rbf(gamma: Double)
        /// `(γ⟨x, y⟩ + c)^degree`.
        case polynomial(degree: Int32, c: Double, gamma: Double)
        /// `tanh(γ⟨x, y⟩ + c)`.
        case sigmoid(gamma: Double, c: Double)
    }

    /// Support vectors, dense rows or sparse `(index, value)` lists (indices 1-based, as
    /// libsvm writes them).
    package enum SupportVectors: Sendable, Equatable {
        /// Dense rows.
        case dense([[Double]])
        /// Sparse rows of `(1-based index, value)`.
        case sparse([[(index: Int32, value: Double)]])

        /// The number of support vectors.
        var count: Int {
            switch self {
            case .dense(let rows): rows.count
            case .sparse(let rows): rows.count
            }
        }

        package static func == (lhs: SupportVectors, rhs: SupportVectors) -> Bool {
            switch (lhs, rhs) {
            case (.dense(let a), .dense(let b)): a == b
            case (.sparse(let a), .sparse(let b)):
                a.count == b.count
                    && zip(a, b).allSatisfy { x, y in
                        x.count == y.count && zip(x, y).allSatisfy { $0.index == $1.index && $0.value == $1.value }
                    }
            default: false
            }
        }
    }

    /// `SupportVectorRegressor`: `Σ_i α_i K(x, sv_i) − ρ`.
    package struct SupportVectorRegressor: Sendable, Equatable {
        package var kernel: Kernel = .linear
        package var supportVectors: SupportVectors = .dense([])
        package var coefficients: [Double] = []
        package var rho: Double = 0

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `SupportVectorRegressor { kernel = 1; sparseSupportVectors = 2;
        /// denseSupportVectors = 3; coefficients = 4; rho = 5 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("SupportVectorRegressor") {
                var model = SupportVectorRegressor()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.kernel = try reader.readKernel()
                    case 2: model.supportVectors = try reader.readSparseSupportVectors()
                    case 3: model.supportVectors = try reader.readDenseSupportVectors()
                    case 4: model.coefficients = try reader.readDoubles("Coefficients")
                    case 5: model.rho = try reader.readDouble()
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }

    /// `SupportVectorClassifier`: libsvm's one-vs-one classifier, with optional Platt
    /// probabilities (`probA`, `probB`).
    package struct SupportVectorClassifier: Sendable, Equatable {
        package var kernel: Kernel = .linear
        package var supportVectorsPerClass: [Int32] = []
        package var supportVectors: SupportVectors = .dense([])
        /// `classes − 1` coefficient rows over all support vectors (libsvm's `sv_coef`).
        package var coefficients: [[Double]] = []
        /// One per class pair, in libsvm's pair order.
        package var rho: [Double] = []
        package var probA: [Double] = []
        package var probB: [Double] = []
        package var labels: ClassLabels = .strings([])

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `SupportVectorClassifier { kernel = 1; numberOfSupportVectorsPerClass = 2;
        /// sparseSupportVectors = 3; denseSupportVectors = 4; coefficients = 5; rho = 6;
        /// probA = 7; probB = 8; stringClassLabels = 100; int64ClassLabels = 101 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("SupportVectorClassifier") {
                var model = SupportVectorClassifier()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: model.kernel = try reader.readKernel()
                    case 2: try reader.readRepeatedInt32(into: &model.supportVectorsPerClass)
                    case 3: model.supportVectors = try reader.readSparseSupportVectors()
                    case 4: model.supportVectors = try reader.readDenseSupportVectors()
                    case 5: model.coefficients.append(try reader.readDoubles("Coefficients"))
                    case 6: try reader.readRepeatedDouble(into: &model.rho)
                    case 7: try reader.readRepeatedDouble(into: &model.probA)
                    case 8: try reader.readRepeatedDouble(into: &model.probB)
                    case 100, 101: model.labels = try reader.readClassLabels(tag.fieldNumber)
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }
    }
}

extension ProtobufReader {
    /// Decodes `Kernel { linearKernel = 1; rbfKernel = 2 { gamma = 1 }; polyKernel = 3
    /// { degree = 1; c = 2; gamma = 3 }; sigmoidKernel = 4 { gamma = 1; c = 2 } }`.
    mutating func readKernel() throws -> CoreMLSpec.Kernel {
        var reader = try readMessage()
        return try decodingMessage("Kernel") {
            var kernel = CoreMLSpec.Kernel.linear
            while let tag = try reader.nextField() {
                guard (1...4).contains(tag.fieldNumber) else {
                    try reader.skipField()
                    continue
                }
                var body = try reader.readMessage()
                var degree: Int32 = 0
                var c = 0.0
                var gamma = 0.0
                while let field = try body.nextField() {
                    switch (tag.fieldNumber, field.fieldNumber) {
                    case (2, 1), (3, 3), (4, 1): gamma = try body.readDouble()
                    case (3, 1): degree = try body.readInt32()
                    case (3, 2), (4, 2): c = try body.readDouble()
                    default: try body.skipField()
                    }
                }
                switch tag.fieldNumber {
                case 1: kernel = .linear
                case 2: kernel = .rbf(gamma: gamma)
                case 3: kernel = .polynomial(degree: degree, c: c, gamma: gamma)
                default: kernel = .sigmoid(gamma: gamma, c: c)
                }
            }
            return kernel
        }
    }

    /// Decodes `DenseSupportVectors { repeated DenseVector vectors = 1 }`.
    mutating func readDenseSupportVectors() throws -> CoreMLSpec.SupportVectors {
        var reader = try readMessage()
        return try decodingMessage("DenseSupportVectors") {
            var rows: [[Double]] = []
            while let tag = try reader.nextField() {
                if tag.fieldNumber == 1 {
                    rows.append(try reader.readDoubles("DenseVector"))
                } else {
                    try reader.skipField()
                }
            }
            return .dense(rows)
        }
    }

    /// Decodes `SparseSupportVectors { repeated SparseVector vectors = 1 { repeated SparseNode
    /// nodes = 1 { int32 index = 1; double value = 2 } } }`.
    mutating func readSparseSupportVectors() throws -> CoreMLSpec.SupportVectors {
        var reader = try readMessage()
        return try decodingMessage("SparseSupportVectors") {
            var rows: [[(index: Int32, value: Double)]] = []
            while let tag = try reader.nextField() {
                guard tag.fieldNumber == 1 else {
                    try reader.skipField()
                    continue
                }
                var vector = try reader.readMessage()
                var row: [(index: Int32, value: Double)] = []
                while let field = try vector.nextField() {
                    guard field.fieldNumber == 1 else {
                        try vector.skipField()
                        continue
                    }
                    var node = try vector.readMessage()
                    var entry: (index: Int32, value: Double) = (0, 0)
                    while let part = try node.nextField() {
                        switch part.fieldNumber {
                        case 1: entry.index = try node.readInt32()
                        case 2: entry.value = try node.readDouble()
                        default: try node.skipField()
                        }
                    }
                    row.append(entry)
                }
                rows.append(row)
            }
            return .sparse(rows)
        }
    }
}
