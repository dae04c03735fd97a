import Foundation

/// `nonMaximumSuppression` (the classic model, as object-detection pipelines end with):
/// boxes with confidences in, the boxes that survive suppression out.
///
/// Inputs: confidences `[boxes, classes]` and coordinates `[boxes, 4]` as
/// `(centerX, centerY, width, height)`; optional inputs override the IoU and confidence
/// thresholds. Each box scores its largest class confidence; boxes scoring below the
/// confidence threshold are dropped; the rest, highest score first, are kept unless their
/// IoU with a kept box (of the same top class, when `pickTop.perClass`) exceeds the IoU
/// threshold. Outputs hold the kept boxes' rows in that order. An output whose description
/// fixes its box count (a shape `[N, …]`) or bounds it (a range on dimension 0) keeps at most
/// that many boxes and pads with zero rows up to the least it allows, as the spec defines.
struct NonMaximumSuppressionModel: ClassicModel {
    let interface: ClassicInterface
    let spec: CoreMLSpec.NonMaximumSuppression
    let confidence: MLFeatureDescription
    let coordinates: MLFeatureDescription
    /// The fewest and most boxes the outputs allow, from their descriptions.
    let rows: ClosedRange<Int>

    init(_ spec: CoreMLSpec.NonMaximumSuppression, _ interface: ClassicInterface, file: String) throws {
        self.interface = interface
        self.spec = spec
        func input(_ name: String, _ role: String) throws -> MLFeatureDescription {
            guard let feature = interface.inputs.first(where: { $0.name == name }) else {
                throw interface.invalid("the \(role) input \"\(name)\" is not one of the model's inputs", file: file)
            }
            return feature
        }
        confidence = try input(spec.confidenceInput, "confidence")
        coordinates = try input(spec.coordinatesInput, "coordinates")
        var rows = 0...Int.max
        for name in [spec.confidenceOutput, spec.coordinatesOutput] {
            guard let output = interface.output(name) else {
                throw interface.invalid("output \"\(name)\" is not one of the model's outputs", file: file)
            }
            if let allowed = Self.boxCount(output), allowed != rows {
                guard rows == 0...Int.max else {
                    throw interface.invalid(
                        "the outputs' shapes disagree on the number of boxes (\(rows) and \(allowed))", file: file)
                }
                rows = allowed
            }
        }
        self.rows = rows
    }

    /// The box counts an output's description allows: its first dimension's range, or its
    /// fixed first dimension; `nil` when it leaves the count open.
    static func boxCount(_ output: MLFeatureDescription) -> ClosedRange<Int>? {
        guard let constraint = output.multiArrayConstraint else { return nil }
        if constraint.shapeConstraint.type == .range, let first = constraint.shapeConstraint.sizeRanges.first {
            return first
        }
        guard let first = constraint.shapeValues.first, constraint.shapeValues.count >= 2 else { return nil }
        return first...first
    }

    func predict(_ row: any MLFeatureProvider) throws -> [String: MLFeatureValue] {
        let (scores, classes) = try matrix(confidence, row)
        let (boxes, four) = try matrix(coordinates, row)
        guard four == 4, boxes.count / 4 == scores.count / max(classes, 1) else {
            throw interface.inputError(
                "coordinates must be [boxes, 4] for the \(scores.count / max(classes, 1)) boxes of the confidences")
        }
        let iou = try threshold(spec.iouThresholdInput, row) ?? spec.iouThreshold
        let minimum = try threshold(spec.confidenceThresholdInput, row) ?? spec.confidenceThreshold
        let count = boxes.count / 4
        var candidates: [(box: Int, score: Double, label: Int)] = []
        for box in 0..<count {
            var label = 0
            for c in 0..<classes where scores[box * classes + c] > scores[box * classes + label] { label = c }
            let score = scores[box * classes + label]
            if score >= minimum { candidates.append((box, score, label)) }
        }
        candidates.sort { $0.score > $1.score || ($0.score == $1.score && $0.box < $1.box) }
        var kept: [(box: Int, label: Int)] = []
        for candidate in candidates
        where !kept.contains(where: {
            (!spec.perClass || $0.label == candidate.label) && Self.iou(boxes, $0.box, candidate.box) > iou
        }) {
            kept.append((candidate.box, candidate.label))
        }
        kept = Array(kept.prefix(rows.upperBound))
        let padding = max(0, rows.lowerBound - kept.count)
        let keptScores =
            kept.flatMap { scores[$0.box * classes..<($0.box + 1) * classes] }
            + repeatElement(0, count: padding * classes)
        let keptBoxes = kept.flatMap { boxes[$0.box * 4..<($0.box + 1) * 4] } + repeatElement(0, count: padding * 4)
        let confidenceType = interface.output(spec.confidenceOutput)?.multiArrayConstraint?.dataType ?? .double
        let coordinatesType = interface.output(spec.coordinatesOutput)?.multiArrayConstraint?.dataType ?? .double
        return [
            spec.confidenceOutput: .array(
                keptScores, shape: [kept.count + padding, classes], dataType: confidenceType),
            spec.coordinatesOutput: .array(keptBoxes, shape: [kept.count + padding, 4], dataType: coordinatesType),
        ]
    }

    /// A `[rows, columns]` input's elements and column count.
    private func matrix(_ feature: MLFeatureDescription, _ row: any MLFeatureProvider) throws -> ([Double], Int) {
        guard let value = try interface.value(of: feature, in: row), case .multiArray(let array) = value.storage,
            array.shape.count >= 2
        else {
            throw interface.inputError("input \"\(feature.name)\" must be a multi-array [boxes, n]")
        }
        return (MLFeatureValue.doubles(of: array), array.shape.last!.intValue)
    }

    /// An optional threshold input's value.
    private func threshold(_ name: String, _ row: any MLFeatureProvider) throws -> Double? {
        guard !name.isEmpty, let value = row.featureValue(for: name), !value.isUndefined else { return nil }
        guard let number = value.numericValue else { throw interface.inputError("input \"\(name)\" is not a number") }
        return number
    }

    /// Intersection over union of two center-size boxes.
    static func iou(_ boxes: [Double], _ a: Int, _ b: Int) -> Double {
        func corners(_ i: Int) -> (Double, Double, Double, Double) {
            let (x, y, w, h) = (boxes[i * 4], boxes[i * 4 + 1], boxes[i * 4 + 2], boxes[i * 4 + 3])
            return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        }
        let (ax0, ay0, ax1, ay1) = corners(a)
        let (bx0, by0, bx1, by1) = corners(b)
        let inter = max(0, min(ax1, bx1) - max(ax0, bx0)) * max(0, min(ay1, by1) - max(ay0, by0))
        let union = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter
        return union > 0 ? inter / union : 0
    }
}
