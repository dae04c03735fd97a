"""The classic-model benchmark: a 1000-tree gradient-boosted ensemble predicting 10,000 rows,
in XGBoost, scikit-learn and Tessera, in one invocation.

    /work/venv-classic/bin/python Benchmarks/peers/classic_trees.py DIR --make-models
    /work/venv-classic/bin/python Benchmarks/peers/classic_trees.py DIR [--tessera BIN]

`--make-models` trains an XGBoost regressor (1000 trees, depth 6) and a scikit-learn
GradientBoostingRegressor (1000 trees, depth 3) on a synthetic regression problem, converts
both with coremltools (`classic_xgb_1000.mlmodel`, `classic_sklearn_gbr_1000.mlmodel`) and
saves the benchmark rows (`classic_rows.npy`, float64) and the trained models (pickled).
The second form times each library's own `predict` on the rows (median of 7, after a warm-up),
runs `TesseraBenchmarks classic --models-dir DIR` (release build) and prints the ratios.
Needs coremltools 9.0, scikit-learn 1.5.1 and xgboost 1.7.6 (see tools/make_classic_fixtures.py).
"""

import argparse
import json
import os
import pickle
import subprocess
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

ROWS = 10_000
COLUMNS = 20


def make_models(directory):
    import coremltools as ct
    import xgboost as xgb
    from sklearn.datasets import make_regression
    from sklearn.ensemble import GradientBoostingRegressor

    os.makedirs(directory, exist_ok=True)
    X, y = make_regression(n_samples=20_000, n_features=COLUMNS, noise=5.0, random_state=0)
    X = X.astype(np.float32).astype(np.float64)  # XGBoost reads float32: give every library the same rows
    booster = xgb.XGBRegressor(n_estimators=1000, max_depth=6, learning_rate=0.05, random_state=0).fit(X, y)
    names = [f"f{i}" for i in range(COLUMNS)]
    spec = ct.converters.xgboost.convert(booster.get_booster(), feature_names=names, target="target").get_spec()
    with open(os.path.join(directory, "classic_xgb_1000.mlmodel"), "wb") as f:
        f.write(spec.SerializeToString())
    gbr = GradientBoostingRegressor(n_estimators=1000, max_depth=3, random_state=0).fit(X[:4000], y[:4000])
    gbr.init_.constant_ = float(np.asarray(gbr.init_.constant_).ravel()[0])  # coremltools reads a scalar
    spec = ct.converters.sklearn.convert(gbr, [("input", ct.models.datatypes.Array(COLUMNS))], "target").get_spec()
    with open(os.path.join(directory, "classic_sklearn_gbr_1000.mlmodel"), "wb") as f:
        f.write(spec.SerializeToString())
    rows = np.random.default_rng(1).normal(size=(ROWS, COLUMNS)).astype(np.float32).astype(np.float64)
    np.save(os.path.join(directory, "classic_rows.npy"), rows)
    with open(os.path.join(directory, "classic_models.pkl"), "wb") as f:
        pickle.dump({"xgb": booster, "gbr": gbr}, f)
    print(f"wrote the classic benchmark models and {ROWS} rows to {directory}")


def median_ms(fn, iterations=7):
    fn()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return sorted(samples)[len(samples) // 2]


def run(directory, tessera):
    with open(os.path.join(directory, "classic_models.pkl"), "rb") as f:
        models = pickle.load(f)
    rows = np.load(os.path.join(directory, "classic_rows.npy"))
    rows32 = rows.astype(np.float32)
    booster = models["xgb"].get_booster()
    peers = {
        "xgboost predict (XGBRegressor.predict)": median_ms(lambda: models["xgb"].predict(rows32)),
        "xgboost inplace_predict": median_ms(lambda: booster.inplace_predict(rows32)),
        "scikit-learn GradientBoostingRegressor.predict": median_ms(lambda: models["gbr"].predict(rows)),
    }
    command = [tessera, "classic", "--models-dir", directory] if tessera else [
        "swift", "run", "-c", "release", "TesseraBenchmarks", "classic", "--models-dir", directory]
    subprocess.run(command, check=True)
    with open(os.path.join(directory, "classic_tessera.json")) as f:
        ours = json.load(f)
    xgb_ms = ours["classic_xgb_1000"]["ms"]
    gbr_ms = ours["classic_sklearn_gbr_1000"]["ms"]
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"\n{ROWS} rows, 1000 trees; threads: XGBoost's default (all cores), Tessera's kernel threads")
    print(f"load average at the end (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    for name, ms in peers.items():
        print(f"  {name:50s} {ms:9.2f} ms")
    print(f"  {'Tessera, XGBoost model (predictions(fromBatch:))':50s} {xgb_ms:9.2f} ms")
    print(f"  {'Tessera, scikit-learn model (predictions(fromBatch:))':50s} {gbr_ms:9.2f} ms")
    best_xgb = min(peers["xgboost predict (XGBRegressor.predict)"], peers["xgboost inplace_predict"])
    print(f"\nratio XGBoost / Tessera (XGBoost model): {best_xgb / xgb_ms:.2f}x  (> 1: Tessera faster)")
    print(
        f"ratio scikit-learn / Tessera (scikit-learn model): "
        f"{peers['scikit-learn GradientBoostingRegressor.predict'] / gbr_ms:.2f}x"
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--make-models", action="store_true")
    parser.add_argument("--tessera", help="a built TesseraBenchmarks binary (default: swift run -c release)")
    args = parser.parse_args()
    if args.make_models:
        make_models(args.directory)
    else:
        run(args.directory, args.tessera)


if __name__ == "__main__":
    sys.exit(main())
