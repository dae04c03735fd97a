"""Writes the classic-model fixtures that no coremltools converter emits, under Tests/Fixtures/classic/.

coremltools has no converter that writes `nonMaximumSuppression`, `classConfidenceThresholding`,
`categoricalMapping`, a k-NN classifier with inverse-distance weighting, or a `glmClassifier`
with K-1 weight vectors (`ReferenceClass`). These cases build the spec with coremltools'
protobuf classes (`coremltools.proto`) or edit a converted one, and take the expected outputs
from the source library where there is one:

- k-NN, inverse distance: scikit-learn's `KNeighborsClassifier(weights="distance")`;
- GLM, reference class: scikit-learn's multinomial `LogisticRegression` (its K weight vectors
  minus class 0's are the K-1 of the reference-class form, with the same probabilities);
- categorical mapping: scikit-learn's `LabelEncoder` (`transform` / `inverse_transform`);

and otherwise from the semantics the spec's `.proto` comments define, computed here in NumPy:

- non-maximum suppression (`NonMaximumSuppression.proto`): boxes below the confidence
  threshold dropped, the rest by descending top-class confidence, a box kept unless its IoU
  with a kept box (of the same top class, `perClass`) exceeds the IoU threshold; an output
  shape that fixes or bounds the box count pads with zeros or keeps the first boxes;
- class confidence thresholding (`ClassConfidenceThresholding.proto`): `[C]` in, `[2, C]` out,
  row 0 the confidences, row 1 all ones (every class present).

Run with the classic venv (coremltools 9.0, scikit-learn 1.5.1):

    /work/venv-classic/bin/python tools/make_classic_spec_fixtures.py

The JSON value encoding is the one `tools/make_classic_fixtures.py` documents.
"""

import json
import os
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import coremltools as ct  # noqa: E402
from coremltools.proto import FeatureTypes_pb2, Model_pb2  # noqa: E402
from sklearn import datasets, linear_model, neighbors, preprocessing  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "classic")
RNG = np.random.default_rng(11)
DOUBLE = FeatureTypes_pb2.ArrayFeatureType.DOUBLE


def arr(values):
    values = np.asarray(values, dtype=np.float64)
    return {"array": [float(v) for v in values.ravel()], "shape": list(values.shape)}


def save(name, spec, rows, expected, source, tolerance=1e-9, note=""):
    with open(os.path.join(OUT, name + ".mlmodel"), "wb") as f:
        f.write(spec.SerializeToString())
    case = {
        "model": name + ".mlmodel",
        "source": source,
        "tolerance": tolerance,
        "note": note,
        "rows": rows,
        "expected": expected,
    }
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(case, f, indent=1)
    print(f"{name}: {spec.WhichOneof('Type')}, {len(rows)} rows")


def array_feature(features, name, shape=None, optional=False, ranges=None):
    feature = features.add()
    feature.name = name
    feature.type.isOptional = optional
    array = feature.type.multiArrayType
    array.dataType = DOUBLE
    for size in shape or []:
        array.shape.append(size)
    if ranges:
        for low, high in ranges:
            size_range = array.shapeRange.sizeRanges.add()
            size_range.lowerBound = low
            size_range.upperBound = high
    return feature


def double_feature(features, name, optional=False):
    feature = features.add()
    feature.name = name
    feature.type.doubleType.SetInParent()
    feature.type.isOptional = optional
    return feature


# Non-maximum suppression ---------------------------------------------------------------------


def iou(a, b):
    """IoU of two (centerX, centerY, width, height) boxes."""
    ax0, ay0, ax1, ay1 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    bx0, by0, bx1, by1 = b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2
    inter = max(0.0, min(ax1, bx1) - max(ax0, bx0)) * max(0.0, min(ay1, by1) - max(ay0, by0))
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def reference_nms(confidence, coordinates, iou_threshold, confidence_threshold, per_class, rows_range=None):
    """PickTop as NonMaximumSuppression.proto defines it."""
    scores = confidence.max(axis=1)
    labels = confidence.argmax(axis=1)
    order = [i for i in np.argsort(-scores, kind="stable") if scores[i] >= confidence_threshold]
    kept = []
    for i in order:
        if all(
            (per_class and labels[k] != labels[i]) or iou(coordinates[k], coordinates[i]) <= iou_threshold
            for k in kept
        ):
            kept.append(i)
    out_conf = confidence[kept]
    out_coord = coordinates[kept]
    if rows_range is not None:
        low, high = rows_range
        out_conf, out_coord = out_conf[:high], out_coord[:high]
        if len(kept) < low:
            pad = low - len(kept)
            out_conf = np.vstack([out_conf, np.zeros((pad, confidence.shape[1]))])
            out_coord = np.vstack([out_coord, np.zeros((pad, 4))])
    return out_conf.reshape(-1, confidence.shape[1]), out_coord.reshape(-1, 4)


def detections(boxes, classes):
    """Boxes in clusters (so that suppression has work), each with class confidences."""
    centers = RNG.uniform(0.2, 0.8, size=(3, 2))
    cluster = RNG.integers(0, 3, size=boxes)
    xy = centers[cluster] + RNG.normal(0, 0.03, size=(boxes, 2))
    wh = RNG.uniform(0.15, 0.3, size=(boxes, 2))
    confidence = RNG.dirichlet(np.ones(classes + 1), size=boxes)[:, :classes]  # leaves room for "no object"
    return confidence, np.hstack([xy, wh])


def nms_spec(boxes, classes, per_class, iou_threshold, confidence_threshold, threshold_inputs, output_rows):
    spec = Model_pb2.Model()
    spec.specificationVersion = 3
    description = spec.description
    array_feature(description.input, "confidence", [boxes, classes])
    array_feature(description.input, "coordinates", [boxes, 4])
    if threshold_inputs:
        double_feature(description.input, "iouThreshold", optional=True)
        double_feature(description.input, "confidenceThreshold", optional=True)
    if output_rows is None:
        array_feature(description.output, "keptConfidence")
        array_feature(description.output, "keptCoordinates")
    elif output_rows[0] == output_rows[1]:
        array_feature(description.output, "keptConfidence", [output_rows[0], classes])
        array_feature(description.output, "keptCoordinates")
    else:
        array_feature(description.output, "keptConfidence", ranges=[output_rows, (classes, classes)])
        array_feature(description.output, "keptCoordinates", ranges=[output_rows, (4, 4)])
    nms = spec.nonMaximumSuppression
    nms.pickTop.perClass = per_class
    nms.iouThreshold = iou_threshold
    nms.confidenceThreshold = confidence_threshold
    nms.confidenceInputFeatureName = "confidence"
    nms.coordinatesInputFeatureName = "coordinates"
    if threshold_inputs:
        nms.iouThresholdInputFeatureName = "iouThreshold"
        nms.confidenceThresholdInputFeatureName = "confidenceThreshold"
    nms.confidenceOutputFeatureName = "keptConfidence"
    nms.coordinatesOutputFeatureName = "keptCoordinates"
    return spec


def nms_cases():
    boxes, classes = 10, 3
    for name, per_class, threshold_inputs, output_rows in [
        ("spec_nms_class_agnostic", False, False, None),
        ("spec_nms_per_class_threshold_inputs", True, True, None),
        ("spec_nms_fixed_rows", False, False, (4, 4)),
        ("spec_nms_row_range", True, False, (3, 5)),
    ]:
        iou_threshold, confidence_threshold = 0.4, 0.1
        spec = nms_spec(boxes, classes, per_class, iou_threshold, confidence_threshold, threshold_inputs, output_rows)
        rows, expected = [], []
        for case in range(6):
            confidence, coordinates = detections(boxes, classes)
            row = {"confidence": arr(confidence), "coordinates": arr(coordinates)}
            iou_t, conf_t = iou_threshold, confidence_threshold
            if threshold_inputs and case % 2 == 1:  # every other row overrides both thresholds
                iou_t, conf_t = [(0.2, 0.3), (0.7, 0.05), (1.0, 0.0)][case // 2]
                row["iouThreshold"] = {"double": iou_t}
                row["confidenceThreshold"] = {"double": conf_t}
            kept_conf, kept_coord = reference_nms(confidence, coordinates, iou_t, conf_t, per_class, output_rows)
            rows.append(row)
            expected.append({"keptConfidence": arr(kept_conf), "keptCoordinates": arr(kept_coord)})
        save(name, spec, rows, expected, "NonMaximumSuppression.proto PickTop, computed in NumPy")


# Class confidence thresholding ----------------------------------------------------------------


def thresholding_case():
    classes = 4
    spec = Model_pb2.Model()
    spec.specificationVersion = 7
    array_feature(spec.description.input, "classConfidences", [classes])
    array_feature(spec.description.output, "filteredClassConfidences", [2, classes])
    thresholding = spec.classConfidenceThresholding
    for _ in range(classes):  # curves are optional; when present, one per class
        curve = thresholding.precisionRecallCurves.add()
        curve.precisionValues.vector.extend([0.5, 0.9])
        curve.precisionConfidenceThresholds.vector.extend([0.1, 0.6])
        curve.recallValues.vector.extend([0.9, 0.4])
        curve.recallConfidenceThresholds.vector.extend([0.1, 0.6])
    rows, expected = [], []
    for _ in range(5):
        c = RNG.dirichlet(np.ones(classes))
        rows.append({"classConfidences": arr(c)})
        expected.append({"filteredClassConfidences": arr(np.vstack([c, np.ones(classes)]))})
    save(
        "spec_class_confidence_thresholding", spec, rows, expected,
        "ClassConfidenceThresholding.proto: [0, :] the confidences, [1, :] = 1",
    )


# Categorical mapping --------------------------------------------------------------------------


def categorical_cases():
    colors = ["red", "green", "blue", "violet", "amber"]
    encoder = preprocessing.LabelEncoder().fit(colors)
    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    spec.description.input.add(name="color").type.stringType.SetInParent()
    spec.description.output.add(name="code").type.int64Type.SetInParent()
    mapping = spec.categoricalMapping
    for color, code in zip(encoder.classes_, encoder.transform(encoder.classes_)):
        mapping.stringToInt64Map.map[str(color)] = int(code)
    mapping.int64Value = -1
    queries = ["blue", "amber", "red", "teal", "violet", "green", ""]
    rows = [{"color": {"string": q}} for q in queries]
    expected = [
        {"code": {"int64": int(encoder.transform([q])[0]) if q in encoder.classes_ else -1}} for q in queries
    ]
    save("spec_categorical_string_to_int64", spec, rows, expected, "sklearn LabelEncoder.transform; unknown -> -1")

    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    spec.description.input.add(name="code").type.int64Type.SetInParent()
    spec.description.output.add(name="color").type.stringType.SetInParent()
    mapping = spec.categoricalMapping
    for code, color in enumerate(encoder.inverse_transform(np.arange(len(colors)))):
        mapping.int64ToStringMap.map[code] = str(color)
    mapping.strValue = "unknown"
    codes = [0, 4, 2, 9, -3, 1, 3]
    rows = [{"code": {"int64": c}} for c in codes]
    expected = [
        {"color": {"string": str(encoder.inverse_transform([c])[0]) if 0 <= c < len(colors) else "unknown"}}
        for c in codes
    ]
    save(
        "spec_categorical_int64_to_string", spec, rows, expected,
        "sklearn LabelEncoder.inverse_transform; unknown -> 'unknown'",
    )


# k-NN with inverse-distance weighting ---------------------------------------------------------


def knn_distance_case():
    X, y = datasets.load_iris(return_X_y=True)
    X = X.astype(np.float32).astype(np.float64)  # the spec stores samples as float32: train on those
    # Integer labels: coremltools' k-NN converter writes the labels' indices as int64 labels.
    knn = neighbors.KNeighborsClassifier(n_neighbors=7, weights="distance", algorithm="brute").fit(X, y)
    knn.weights = "uniform"  # coremltools converts uniform weighting only; the spec is switched below
    spec = ct.converters.sklearn.convert(knn, "input", "classLabel").get_spec()
    knn.weights = "distance"
    params = spec.kNearestNeighborsClassifier
    params.inverseDistanceWeighting.SetInParent()
    if "classProbability" not in [o.name for o in spec.description.output]:  # the vote shares too
        probability = spec.description.output.add(name="classProbability")
        probability.type.dictionaryType.int64KeyType.SetInParent()
        spec.description.predictedProbabilitiesName = "classProbability"
    # Points whose neighbours disagree (so that the weights decide), none on a training sample;
    # first those where uniform voting would pick another label.
    candidates = X[50 + RNG.choice(100, 400)] + RNG.normal(0, 0.4, size=(400, 4))
    mixed = candidates[knn.predict_proba(candidates).max(axis=1) < 1]
    knn.weights = "uniform"
    uniform_labels = knn.predict(mixed)
    knn.weights = "distance"
    flips = uniform_labels != knn.predict(mixed)
    rows_x = np.vstack([mixed[flips][:6], mixed[~flips][: 12 - min(6, flips.sum())]])
    predicted = knn.predict(rows_x)
    output_names = [o.name for o in spec.description.output]
    expected = []
    for i, lab in enumerate(predicted):
        out = {"classLabel": {"int64": int(lab)}}
        if "classProbability" in output_names:
            p = knn.predict_proba(rows_x[i : i + 1])[0]
            out["classProbability"] = {
                "dict": {str(c): float(v) for c, v in zip(knn.classes_, p)}, "keyType": "int64"
            }
        expected.append(out)
    rows = [{"input": arr(x)} for x in rows_x]
    save("sk_knn_inverse_distance", spec, rows, expected, "sklearn KNeighborsClassifier(weights='distance')")


# GLM classifier with K-1 weight vectors -------------------------------------------------------


def glm_reference_class_case():
    X, y = datasets.load_wine(return_X_y=True)
    X = preprocessing.StandardScaler().fit_transform(X)
    names = np.array(["barolo", "grignolino", "barbera"])
    model = linear_model.LogisticRegression(max_iter=5000).fit(X, names[y])  # multinomial (lbfgs)
    assert model.coef_.shape[0] == 3
    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    array_feature(spec.description.input, "input", [X.shape[1]])
    spec.description.output.add(name="classLabel").type.stringType.SetInParent()
    probability = spec.description.output.add(name="classProbability")
    probability.type.dictionaryType.stringKeyType.SetInParent()
    spec.description.predictedFeatureName = "classLabel"
    spec.description.predictedProbabilitiesName = "classProbability"
    glm = spec.glmClassifier
    for k in range(1, 3):  # class 0 is the reference: w_k - w_0, b_k - b_0
        glm.weights.add().value.extend((model.coef_[k] - model.coef_[0]).tolist())
        glm.offset.append(float(model.intercept_[k] - model.intercept_[0]))
    glm.postEvaluationTransform = 0  # Logit
    glm.classEncoding = 0  # ReferenceClass
    glm.stringClassLabels.vector.extend([str(c) for c in model.classes_])
    rows_x = X[RNG.choice(len(X), 12, replace=False)]
    rows_x[:3] += RNG.normal(0, 1.5, size=(3, X.shape[1]))  # some rows the model is less sure of
    p = model.predict_proba(rows_x)
    expected = [
        {
            "classLabel": {"string": str(lab)},
            "classProbability": {"dict": {str(c): float(v) for c, v in zip(model.classes_, p[i])}, "keyType": "string"},
        }
        for i, lab in enumerate(model.predict(rows_x))
    ]
    save(
        "sk_glm_reference_class", spec, [{"input": arr(x)} for x in rows_x], expected,
        "sklearn multinomial LogisticRegression.predict_proba, as K-1 reference-class weight vectors",
    )


# Dictionary vectorizer over int64 keys ---------------------------------------------------------


def dict_vectorizer_int64_keys_case():
    from sklearn.feature_extraction import DictVectorizer

    documents = [{3: 1.0, 7: 2.0}, {1: 4.0}, {7: 1.5, 9: 0.5}, {3: 2.0, 1: 1.0, 9: 3.0}, {12: 1.0}]
    vectorizer = DictVectorizer(sparse=False).fit(documents)
    keys = [int(k) for k in vectorizer.feature_names_]
    spec = Model_pb2.Model()
    spec.specificationVersion = 1
    spec.description.input.add(name="counts").type.dictionaryType.int64KeyType.SetInParent()
    array_feature(spec.description.output, "vector", [len(keys)])
    spec.dictVectorizer.int64ToIndex.vector.extend(keys)
    queries = [{7: 3.0, 1: 0.5}, {9: 2.0, 5: 8.0}, {}, {12: -1.0, 3: 4.0}]  # 5: a key the model does not know
    rows = [{"counts": {"dict": {str(k): v for k, v in q.items()}, "keyType": "int64"}} for q in queries]
    expected = [{"vector": arr(v)} for v in vectorizer.transform(queries)]
    save("sk_dict_vectorizer_int64_keys", spec, rows, expected, "sklearn DictVectorizer.transform (int keys)")


def main():
    os.makedirs(OUT, exist_ok=True)
    nms_cases()
    thresholding_case()
    categorical_cases()
    knn_distance_case()
    glm_reference_class_case()
    dict_vectorizer_int64_keys_case()


if __name__ == "__main__":
    main()
