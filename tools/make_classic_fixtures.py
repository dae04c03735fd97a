"""Writes the classic-model fixtures under Tests/Fixtures/classic/.

Each case is a Core ML `.mlmodel` converted by coremltools from a scikit-learn, XGBoost or
LibSVM model trained on a bundled data set, and a JSON file with input rows and the outputs
the *source library* gives for them (`predict`, `predict_proba`, libsvm's `svm_predict`).
Bad-input cases are converted models with one part broken on purpose, and the words the
load error must contain.

Run with a venv holding coremltools 9.0, scikit-learn 1.5.1, xgboost 1.7.6 and
libsvm-official (coremltools' converters refuse newer scikit-learn):

    python3 -m venv --system-site-packages /work/venv-classic
    /work/venv-classic/bin/pip install coremltools==9.0 scikit-learn==1.5.1 xgboost==1.7.6 libsvm-official
    /work/venv-classic/bin/python tools/make_classic_fixtures.py

Value encoding in the JSON: {"double": x}, {"int64": n}, {"string": s},
{"array": [...], "shape": [...]} (float64 multi-array), {"dict": {k: v}, "keyType": "string"|"int64"}.
"""

import json
import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")

import coremltools as ct  # noqa: E402
from sklearn import datasets, ensemble, linear_model, neighbors, pipeline, preprocessing, svm, tree  # noqa: E402
from sklearn.feature_extraction import DictVectorizer  # noqa: E402
from sklearn.impute import SimpleImputer  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "classic")
ROWS = 12
RNG = np.random.default_rng(7)


def arr(values):
    values = np.asarray(values, dtype=np.float64)
    elements = ["nan" if np.isnan(v) else float(v) for v in values.ravel()]  # JSON has no NaN
    return {"array": elements, "shape": list(values.shape)}


def label(value):
    if isinstance(value, (str, np.str_)):
        return {"string": str(value)}
    return {"int64": int(value)}


def probs(classes, row):
    key_type = "string" if isinstance(classes[0], (str, np.str_)) else "int64"
    return {"dict": {str(c): float(p) for c, p in zip(classes, row)}, "keyType": key_type}


def save(name, model, rows, expected, source, tolerance=1e-9, note=""):
    spec = model.get_spec() if hasattr(model, "get_spec") else model
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


def pick(X, n=ROWS):
    index = RNG.choice(len(X), size=min(n, len(X)), replace=False)
    return X[index]


def array_rows(X, name="input"):
    return [{name: arr(x)} for x in X]


def regressor_case(name, model, X, y, source, tolerance=1e-9, target="prediction"):
    model.fit(X, y)
    rows = pick(X)
    if isinstance(model, ensemble.ExtraTreesRegressor):
        # coremltools' sklearn front end does not list extra trees; its tree-ensemble converter
        # (the one random forests use) handles them.
        from coremltools.converters.sklearn._tree_ensemble import convert_tree_ensemble

        ml = ct.models.MLModel(
            convert_tree_ensemble(model, [("input", ct.models.datatypes.Array(X.shape[1]))], target)
        )
    else:
        predictions = model.predict(rows)
        steps = model.steps if hasattr(model, "steps") else [("model", model)]
        last = steps[-1][1]
        if isinstance(last, ensemble.GradientBoostingRegressor):
            # coremltools reads init_.constant_ as a scalar; sklearn >= 1.1 stores it as (1, 1).
            last.init_.constant_ = float(np.asarray(last.init_.constant_).ravel()[0])
        ml = ct.converters.sklearn.convert(model, [("input", ct.models.datatypes.Array(X.shape[1]))], target)
    predictions = model.predict(rows)
    save(name, ml, array_rows(rows), [{target: {"double": float(p)}} for p in predictions], source, tolerance)


def classifier_case(name, model, X, y, source, tolerance=1e-9, proba=True, class_names=None):
    if class_names is not None:
        y = np.asarray(class_names)[y]
    model.fit(X, y)
    rows = pick(X)
    ml = ct.converters.sklearn.convert(model, "input", "classLabel")
    labels = model.predict(rows)
    expected = []
    probabilities = model.predict_proba(rows) if proba else None
    for i, lab in enumerate(labels):
        out = {"classLabel": label(lab)}
        if proba:
            out["classProbability"] = probs(model.classes_, probabilities[i])
        expected.append(out)
    save(name, ml, array_rows(rows), expected, source, tolerance)


def sklearn_cases():
    Xd, yd = datasets.load_diabetes(return_X_y=True)
    Xi, yi = datasets.load_iris(return_X_y=True)
    Xb, yb = datasets.load_breast_cancer(return_X_y=True)
    Xw, yw = datasets.load_wine(return_X_y=True)
    iris_names = ["setosa", "versicolor", "virginica"]

    regressor_case("sk_linear_regression", linear_model.LinearRegression(), Xd, yd, "sklearn LinearRegression")
    regressor_case("sk_ridge", linear_model.Ridge(alpha=0.5), Xd, yd, "sklearn Ridge")
    regressor_case("sk_linear_svr", svm.LinearSVR(max_iter=20000, dual="auto"), Xd, yd, "sklearn LinearSVR")
    classifier_case(
        "sk_logistic_binary", linear_model.LogisticRegression(max_iter=5000, multi_class="ovr"), Xb, yb, "sklearn LogisticRegression"
    )
    classifier_case(
        "sk_logistic_ovr",
        linear_model.LogisticRegression(max_iter=5000, multi_class="ovr"),
        Xi,
        yi,
        "sklearn LogisticRegression one-vs-rest, string labels",
        class_names=iris_names,
    )
    classifier_case("sk_linear_svc", svm.LinearSVC(dual="auto"), Xi, yi, "sklearn LinearSVC", proba=False)
    for kernel in ["linear", "rbf", "poly", "sigmoid"]:
        gamma = "scale" if kernel != "sigmoid" else 0.001
        classifier_case(
            f"sk_svc_{kernel}", svm.SVC(kernel=kernel, gamma=gamma, coef0=0.5), Xi, yi, f"sklearn SVC {kernel}",
            proba=False,
        )
    classifier_case("sk_nusvc_rbf", svm.NuSVC(nu=0.3), Xw, yw, "sklearn NuSVC rbf", proba=False)
    # Probabilities: libsvm's Platt scaling with pairwise coupling; sklearn's predict votes,
    # libsvm's probability prediction takes the most probable label, as Core ML does.
    # For two classes scikit-learn's fork of libsvm still runs the pairwise coupling, which
    # stops at libsvm's tolerance; libsvm itself (and Core ML) take the pair's sigmoid. They
    # differ by up to ~1e-3 (coremltools warns "usually less than 0.5%").
    for name, model, X, y, tolerance in [
        ("sk_svc_rbf_proba", svm.SVC(probability=True, random_state=0), Xi, yi, 1e-9),
        ("sk_svc_binary_proba", svm.SVC(probability=True, random_state=0, kernel="linear"), Xb[:, :6], yb, 1e-3),
    ]:
        model.fit(X, y)
        rows = pick(X)
        ml = ct.converters.sklearn.convert(model, "input", "classLabel")
        p = model.predict_proba(rows)
        expected = [
            {"classLabel": label(model.classes_[int(np.argmax(r))]), "classProbability": probs(model.classes_, r)}
            for r in p
        ]
        save(name, ml, array_rows(rows), expected, "sklearn SVC predict_proba (label: most probable)", tolerance)
    regressor_case("sk_svr_rbf", svm.SVR(C=50.0), Xd, yd, "sklearn SVR rbf")
    regressor_case("sk_nusvr_poly", svm.NuSVR(kernel="poly", degree=2, coef0=1.0), Xd, yd, "sklearn NuSVR poly")

    regressor_case("sk_decision_tree_regressor", tree.DecisionTreeRegressor(max_depth=6), Xd, yd, "sklearn")
    classifier_case(
        "sk_decision_tree_classifier", tree.DecisionTreeClassifier(max_depth=4), Xi, yi, "sklearn", proba=True
    )
    regressor_case(
        "sk_random_forest_regressor", ensemble.RandomForestRegressor(n_estimators=20, random_state=0), Xd, yd, "sklearn"
    )
    classifier_case(
        "sk_random_forest_classifier",
        ensemble.RandomForestClassifier(n_estimators=15, random_state=0),
        Xw,
        yw,
        "sklearn",
    )
    classifier_case(
        "sk_random_forest_binary",
        ensemble.RandomForestClassifier(n_estimators=15, random_state=0, max_depth=5),
        Xb,
        yb,
        "sklearn",
    )
    regressor_case(
        "sk_extra_trees_regressor", ensemble.ExtraTreesRegressor(n_estimators=15, random_state=0), Xd, yd, "sklearn"
    )
    regressor_case(
        "sk_gradient_boosting_regressor",
        ensemble.GradientBoostingRegressor(n_estimators=60, random_state=0),
        Xd,
        yd,
        "sklearn",
    )
    classifier_case(
        "sk_gradient_boosting_binary",
        ensemble.GradientBoostingClassifier(n_estimators=40, random_state=0),
        Xb,
        yb,
        "sklearn",
    )
    classifier_case(
        "sk_gradient_boosting_multiclass",
        ensemble.GradientBoostingClassifier(n_estimators=30, random_state=0),
        Xi,
        yi,
        "sklearn, string labels",
        class_names=iris_names,
    )

    # k-NN: one label per stored sample; neighbour votes.
    for name, model in [
        ("sk_knn_uniform", neighbors.KNeighborsClassifier(n_neighbors=5, algorithm="brute")),
        ("sk_knn_kdtree", neighbors.KNeighborsClassifier(n_neighbors=3, algorithm="kd_tree", leaf_size=10)),
    ]:
        X = Xi + RNG.normal(0, 1e-3, Xi.shape)  # no exact duplicate samples, so no distance ties
        model.fit(X, yi)
        rows = X[RNG.choice(len(X), ROWS, replace=False)] + 0.05
        ml = ct.converters.sklearn.convert(model, "input", "classLabel")
        save(name, ml, array_rows(rows), [{"classLabel": label(v)} for v in model.predict(rows)], "sklearn k-NN")

    # Pipelines.
    scaled = pipeline.Pipeline(
        [("scale", preprocessing.StandardScaler()), ("model", linear_model.LogisticRegression(max_iter=2000, multi_class="ovr"))]
    )
    classifier_case("sk_pipeline_scaler_logistic", scaled, Xb, yb, "sklearn Pipeline(StandardScaler, Logistic)")
    Xm = Xd.copy()
    Xm[RNG.random(Xm.shape) < 0.1] = np.nan
    imputed = pipeline.Pipeline(
        [
            ("impute", SimpleImputer(strategy="mean")),
            ("scale", preprocessing.StandardScaler()),
            ("model", linear_model.LinearRegression()),
        ]
    )
    regressor_case("sk_pipeline_imputer_scaler_linear", imputed, Xm, yd, "sklearn Pipeline(Imputer, Scaler, Linear)")
    for norm in ["l1", "l2", "max"]:
        normed = pipeline.Pipeline([("norm", preprocessing.Normalizer(norm=norm)), ("model", svm.SVR())])
        regressor_case(f"sk_pipeline_normalizer_{norm}_svr", normed, Xd, yd, f"sklearn Pipeline(Normalizer {norm}, SVR)")

    # One-hot encoding of integer categories, then a linear model.
    Xc = RNG.integers(0, 4, size=(80, 3)).astype(np.float64)
    yc = Xc @ np.array([1.5, -2.0, 0.25]) + RNG.normal(0, 0.1, 80)
    onehot = pipeline.Pipeline(
        [("onehot", preprocessing.OneHotEncoder()), ("model", linear_model.LinearRegression())]
    )
    regressor_case("sk_pipeline_onehot_linear", onehot, Xc, yc, "sklearn Pipeline(OneHotEncoder, Linear)")

    # A bag of words: DictVectorizer over word counts, then a logistic regression.
    words = ["good", "bad", "great", "awful", "fine", "meh", "love", "hate"]
    weights = np.array([1.0, -1.0, 2.0, -2.0, 0.5, -0.3, 1.5, -1.5])
    docs, ys = [], []
    for _ in range(120):
        counts = {w: int(c) for w, c in zip(words, RNG.poisson(0.6, len(words))) if c > 0}
        score = sum(weights[words.index(w)] * c for w, c in counts.items())
        docs.append(counts)
        ys.append("positive" if score > 0 else "negative")
    bag = pipeline.Pipeline(
        [("vectorize", DictVectorizer(sparse=False)), ("model", linear_model.LogisticRegression(max_iter=2000, multi_class="ovr"))]
    )
    bag.fit(docs, ys)
    sample = [docs[i] for i in RNG.choice(len(docs), ROWS, replace=False)]
    ml = ct.converters.sklearn.convert(bag, "words", "sentiment")
    p = bag.predict_proba(sample)
    expected = [
        {"sentiment": label(lab), "classProbability": probs(bag.classes_, p[i])}
        for i, lab in enumerate(bag.predict(sample))
    ]
    rows = [{"words": {"dict": {k: float(v) for k, v in d.items()}, "keyType": "string"}} for d in sample]
    save("sk_pipeline_dictvectorizer_logistic", ml, rows, expected, "sklearn Pipeline(DictVectorizer, Logistic)")
    return ml


def xgboost_cases():
    import xgboost as xgb

    Xd, yd = datasets.load_diabetes(return_X_y=True)
    Xb, yb = datasets.load_breast_cancer(return_X_y=True)
    Xi, yi = datasets.load_iris(return_X_y=True)
    Xd32 = Xd.astype(np.float32).astype(np.float64)  # XGBoost reads float32; so does the fixture
    Xb32 = Xb.astype(np.float32).astype(np.float64)
    Xi32 = Xi.astype(np.float32).astype(np.float64)

    reg = xgb.XGBRegressor(n_estimators=40, max_depth=4, random_state=0).fit(Xd32, yd)
    rows = pick(Xd32)
    rows[0, 2] = np.nan  # a missing value follows each node's default direction
    names = [f"f{i}" for i in range(Xd.shape[1])]
    ml = ct.converters.xgboost.convert(reg.get_booster(), feature_names=names, target="target")
    pred = reg.predict(rows)
    feature_rows = [{n: {"double": float(v)} for n, v in zip(names, r)} for r in rows]
    for r in feature_rows:
        for n in names:
            if np.isnan(r[n]["double"]):
                r[n] = {"double": "nan"}
    save("xgb_regressor", ml, feature_rows, [{"target": {"double": float(p)}} for p in pred], "xgboost", 2e-5)

    clf = xgb.XGBClassifier(n_estimators=30, max_depth=3, random_state=0).fit(Xb32, yb)
    rows = pick(Xb32)
    names = [f"f{i}" for i in range(Xb.shape[1])]
    ml = ct.converters.xgboost.convert(
        clf.get_booster(), feature_names=names, target="label", mode="classifier", class_labels=[0, 1]
    )
    p = clf.predict_proba(rows)
    expected = [{"label": label(v), "classProbability": probs([0, 1], p[i])} for i, v in enumerate(clf.predict(rows))]
    save("xgb_binary", ml, [{n: {"double": float(v)} for n, v in zip(names, r)} for r in rows], expected, "xgboost", 2e-5)

    clf = xgb.XGBClassifier(n_estimators=20, max_depth=3, random_state=0).fit(Xi32, yi)
    rows = pick(Xi32)
    names = [f"f{i}" for i in range(4)]
    ml = ct.converters.xgboost.convert(
        clf.get_booster(), feature_names=names, target="label", mode="classifier", class_labels=[0, 1, 2]
    )
    p = clf.predict_proba(rows)
    expected = [
        {"label": label(v), "classProbability": probs([0, 1, 2], p[i])} for i, v in enumerate(clf.predict(rows))
    ]
    save(
        "xgb_multiclass", ml, [{n: {"double": float(v)} for n, v in zip(names, r)} for r in rows], expected,
        "xgboost", 2e-5,
    )


def libsvm_cases():
    from libsvm import svm as libsvm_module
    from libsvm import svmutil

    # coremltools' converter reads the enum constants from the module; libsvm-official 3.3x
    # keeps them in classes.
    for holder in ("svm_forms", "kernel_names"):
        for key, value in vars(getattr(libsvm_module, holder, object)).items():
            if key.isupper():
                setattr(libsvm_module, key, value)
    import libsvm

    libsvm.__version__ = getattr(libsvm, "__version__", "3.37.0")  # the converter records it

    Xi, yi = datasets.load_iris(return_X_y=True)
    Xs = Xi / Xi.max(axis=0)
    y = (yi + 1).tolist()
    x = [{j + 1: float(v) for j, v in enumerate(row) if v != 0} for row in Xs]
    for name, options in [
        ("libsvm_csvc_rbf", "-s 0 -t 2 -c 4 -q"),
        ("libsvm_csvc_poly_proba", "-s 0 -t 1 -d 3 -g 0.5 -r 1 -b 1 -q"),
        ("libsvm_csvc_linear", "-s 0 -t 0 -c 2 -q"),
        ("libsvm_csvc_binary_proba", "-s 0 -t 2 -g 2 -b 1 -q"),
    ]:
        if "binary" in name:  # setosa against the rest
            y = [1 if label == 1 else 2 for label in (yi + 1)]
        model = svmutil.svm_train(y, x, options)
        index = RNG.choice(len(x), ROWS, replace=False)
        sample_x = [x[i] for i in index]
        proba = "-b 1" in options
        labels, _, values = svmutil.svm_predict([0] * ROWS, sample_x, model, "-b 1 -q" if proba else "-q")
        ml = ct.converters.libsvm.convert(model, [f"x{j}" for j in range(4)], "target")
        spec = ml.get_spec()
        rows = [{f"x{j}": {"double": float(Xs[i, j])} for j in range(4)} for i in index]
        order = model.get_labels()
        expected = []
        for lab, prob in zip(labels, values):
            out = {"target": label(int(lab))}
            if proba:
                out["classProbability"] = probs(order, prob)
            expected.append(out)
        save(name, spec, rows, expected, f"libsvm svm_predict {options}")
    yr = datasets.load_diabetes(return_X_y=True)
    Xr = yr[0] / np.abs(yr[0]).max(axis=0)
    xr = [{j + 1: float(v) for j, v in enumerate(row)} for row in Xr]
    model = svmutil.svm_train(yr[1].tolist(), xr, "-s 3 -t 2 -c 100 -q")
    index = RNG.choice(len(xr), ROWS, replace=False)
    _, _, values = svmutil.svm_predict([0] * ROWS, [xr[i] for i in index], model, "-q")
    ml = ct.converters.libsvm.convert(model, [f"x{j}" for j in range(10)], "target")
    rows = [{f"x{j}": {"double": float(Xr[i, j])} for j in range(10)} for i in index]
    save("libsvm_epsilon_svr", ml.get_spec(), rows, [{"target": {"double": v[0]}} for v in values], "libsvm")


def bad_cases():
    """Converted models with one part broken on purpose, and what the error must name."""
    Xi, yi = datasets.load_iris(return_X_y=True)
    bad = []
    model = tree.DecisionTreeRegressor(max_depth=3).fit(Xi, yi)
    spec = ct.converters.sklearn.convert(model, "input", "y").get_spec()
    nodes = spec.treeEnsembleRegressor.treeEnsemble.nodes
    branch = next(n for n in nodes if n.nodeBehavior != 6)
    branch.trueChildNodeId = 999
    bad.append(("bad_tree_missing_node", spec, ["tree 0", "node 999"]))
    spec = ct.converters.sklearn.convert(model, "input", "y").get_spec()
    nodes = spec.treeEnsembleRegressor.treeEnsemble.nodes
    branches = [n for n in nodes if n.nodeBehavior != 6]
    branches[-1].falseChildNodeId = branches[0].nodeId
    bad.append(("bad_tree_cycle", spec, ["tree 0", "cycle"]))
    spec = ct.converters.sklearn.convert(model, "input", "y").get_spec()
    spec.treeEnsembleRegressor.treeEnsemble.nodes[0].branchFeatureIndex = 40
    bad.append(("bad_tree_feature_index", spec, ["feature index 40"]))
    svc = svm.SVC().fit(Xi, yi)
    spec = ct.converters.sklearn.convert(svc, "input", "classLabel").get_spec()
    spec.supportVectorClassifier.numberOfSupportVectorsPerClass[0] += 3
    bad.append(("bad_svc_counts", spec, ["supportVectorClassifier", "support vector"]))
    Xc = RNG.integers(0, 4, size=(40, 2)).astype(np.float64)
    onehot = pipeline.Pipeline(
        [("onehot", preprocessing.OneHotEncoder()), ("model", linear_model.LinearRegression())]
    ).fit(Xc, Xc[:, 0])
    spec = ct.converters.sklearn.convert(onehot, "input", "y").get_spec()
    bad.append(("bad_glm_weights", None, None))
    bad.pop()
    lin = linear_model.LinearRegression().fit(Xi, yi)
    spec = ct.converters.sklearn.convert(lin, "input", "y").get_spec()
    del spec.glmRegressor.weights[0].value[-1]
    bad.append(("bad_glm_weights", spec, ["glmRegressor", "weights"]))
    for name, spec, words in bad:
        with open(os.path.join(OUT, name + ".mlmodel"), "wb") as f:
            f.write(spec.SerializeToString())
        print(f"{name}: expects {words}")
    with open(os.path.join(OUT, "bad_models.json"), "w") as f:
        json.dump([{"model": n + ".mlmodel", "errorMentions": w} for n, _, w in bad], f, indent=1)


def main():
    os.makedirs(OUT, exist_ok=True)
    which = sys.argv[1:] or ["sklearn", "xgboost", "libsvm", "bad"]
    if "sklearn" in which:
        sklearn_cases()
    if "xgboost" in which:
        xgboost_cases()
    if "libsvm" in which:
        libsvm_cases()
    if "bad" in which:
        bad_cases()


if __name__ == "__main__":
    main()
