import TesseraProtobuf

extension CoreMLSpec {
    /// `KNearestNeighborsClassifier`: stored samples with one label each, `k`, and the
    /// weighting of the neighbours' votes.
    package struct NearestNeighborsClassifier: Sendable, Equatable {
        package var dimensions: Int32 = 0
        /// The stored samples (`NearestNeighborsIndex.floatSamples`).
        package var samples: [[Float]] = []
        /// One label per sample.
        package var sampleLabels: ClassLabels = .strings([])
        /// `numberOfNeighbors.defaultValue`.
        package var k: Int64 = 0
        /// Whether votes are weighted by inverse distance (`inverseDistanceWeighting`).
        package var inverseDistance = false
        /// The label when there are no samples (`defaultStringLabel` / `defaultInt64Label`).
        package var defaultLabel: ClassLabels?

        /// The distinct labels, in order of first appearance.
        var distinctLabels: ClassLabels {
            switch sampleLabels {
            case .strings(let labels):
                var seen = Set<String>()
                return .strings(labels.filter { seen.insert($0).inserted })
            case .int64s(let labels):
                var seen = Set<Int64>()
                return .int64s(labels.filter { seen.insert($0).inserted })
            }
        }

        /// An empty model, filled in by the decoder.
        init() {}

        /// Decodes `KNearestNeighborsClassifier { nearestNeighborsIndex = 1; numberOfNeighbors =
        /// 3; stringClassLabels = 100; int64ClassLabels = 101; defaultStringLabel = 110;
        /// defaultInt64Label = 111; uniformWeighting = 200; inverseDistanceWeighting = 210 }`.
        init(from reader: inout ProtobufReader) throws {
            self = try decodingMessage("KNearestNeighborsClassifier") {
                var model = NearestNeighborsClassifier()
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1:
                        var index = try reader.readMessage()
                        try model.decodeIndex(&index)
                    case 3:
                        var parameter = try reader.readMessage()
                        while let field = try parameter.nextField() {
                            if field.fieldNumber == 1 {
                                model.k = try parameter.readInt64()
                            } else {
                                try parameter.skipField()
                            }
                        }
                    case 100, 101: model.sampleLabels = try reader.readClassLabels(tag.fieldNumber)
                    case 110: model.defaultLabel = .strings([try reader.readString()])
                    case 111: model.defaultLabel = .int64s([try reader.readInt64()])
                    case 200:
                        model.inverseDistance = false
                        try reader.skipField()
                    case 210:
                        model.inverseDistance = true
                        try reader.skipField()
                    default: try reader.skipField()
                    }
                }
                return model
            }
        }

        /// Decodes `NearestNeighborsIndex { numberOfDimensions = 1; floatSamples = 2; … }`; the
        /// index kind (linear or k-d tree) and the distance (squared Euclidean) change only
        /// how neighbours are found, not which.
        private mutating func decodeIndex(_ reader: inout ProtobufReader) throws {
            try decodingMessage("NearestNeighborsIndex") {
                while let tag = try reader.nextField() {
                    switch tag.fieldNumber {
                    case 1: dimensions = try reader.readInt32()
                    case 2: samples.append(try reader.readFloatVector())
                    default: try reader.skipField()
                    }
                }
            }
        }
    }
}
