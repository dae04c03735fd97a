"""The classic-model benchmark: a 1000-tree gradient-boosted ensemble predicting 10,000 rows,
in XGBoost, scikit-learn and Tessera, in one invocation.

    .build/classic-venv/bin/python Benchmarks/peers/classic_trees.py DIR --make-models
    .build/classic-venv/bin/python Benchmarks/peers/classic_trees.py DIR [--tessera BIN]

`--make-models` trains an XGBoost regressor (1000 trees, depth 6) and a scikit-learn
GradientBoostingRegressor (1000 trees, depth 3) on a synthetic regression problem, converts
both with coremltools (`classic_xgb_1000.mlmodel`, `classic_sklearn_gbr_1000.mlmodel`) and
saves the benchmark rows (`classic_rows.npy`, float64) and the trained models (pickled).
The second form times each library's own `predict` on the rows (median of 7, after a warm-up)
and `TesseraBenchmarks classic --models-dir DIR` (release build), at each of `--threads`
(XGBoost's `nthread`, Tessera's `TESSERA_NUM_THREADS`; scikit-learn's predict is
single-threaded), `--rounds` times interleaved, and prints the medians and ratios.
The venv needs coremltools 9.0, scikit-learn 1.5.1 and xgboost 1.7.6 (see
tools/make_classic_fixtures.py): `python3 -m venv .build/classic-venv` and pip install them.
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


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if len(values) % 2 else (values[len(values) // 2 - 1] + values[len(values) // 2]) / 2


def run(directory, tessera, rounds, thread_counts):
    """Times every library at each thread count, `rounds` times, the libraries interleaved
    within a round (so a change in the machine's load hits them alike); reports the median
    over rounds of each round's median of 7."""
    with open(os.path.join(directory, "classic_models.pkl"), "rb") as f:
        models = pickle.load(f)
    rows = np.load(os.path.join(directory, "classic_rows.npy"))
    rows32 = rows.astype(np.float32)
    booster = models["xgb"].get_booster()
    command = [tessera, "classic", "--models-dir", directory] if tessera else [
        "swift", "run", "-c", "release", "TesseraBenchmarks", "classic", "--models-dir", directory]
    names = [
        "xgboost XGBRegressor.predict",
        "xgboost Booster.inplace_predict",
        "scikit-learn GradientBoostingRegressor.predict",
        "Tessera, XGBoost model",
        "Tessera, scikit-learn model",
    ]
    samples = {(name, n): [] for name in names for n in thread_counts}
    loads = []
    for round_ in range(rounds):
        for n in thread_counts:
            # XGBoost predicts with the booster's `nthread`; scikit-learn's predict has no
            # threads (one core at any setting); Tessera's kernel loops take TESSERA_NUM_THREADS.
            models["xgb"].set_params(n_jobs=n)
            booster.set_param({"nthread": n})
            samples[(names[0], n)].append(median_ms(lambda: models["xgb"].predict(rows32)))
            samples[(names[1], n)].append(median_ms(lambda: booster.inplace_predict(rows32)))
            samples[(names[2], n)].append(median_ms(lambda: models["gbr"].predict(rows)))
            environment = dict(os.environ, TESSERA_NUM_THREADS=str(n))
            subprocess.run(command, check=True, env=environment, stdout=subprocess.DEVNULL)
            with open(os.path.join(directory, "classic_tessera.json")) as f:
                ours = json.load(f)
            samples[(names[3], n)].append(ours["classic_xgb_1000"]["ms"])
            samples[(names[4], n)].append(ours["classic_sklearn_gbr_1000"]["ms"])
            loads.append(os.getloadavg()[0])
            print(f"round {round_ + 1}/{rounds}, {n} thread(s) done; 1-min load {loads[-1]:.1f}", flush=True)
    table = {key: median(values) for key, values in samples.items()}
    print(f"\n{ROWS} rows x {COLUMNS} columns, 1000 trees; median over {rounds} interleaved rounds of each")
    print(f"round's median of 7 batches; {os.cpu_count()} cores; 1-min load average during the rounds: "
          f"{min(loads):.1f} to {max(loads):.1f} (median {median(loads):.1f})")
    print(f"\n| {'ms per 10,000-row batch':48s} | " + " | ".join(f"{n} thread{'s' if n > 1 else ''}" for n in thread_counts) + " |")
    print("|" + "-" * 50 + "|" + "|".join("-" * 11 for _ in thread_counts) + "|")
    for name in names:
        print(f"| {name:48s} | " + " | ".join(f"{table[(name, n)]:9.2f}" for n in thread_counts) + " |")
    for n in thread_counts:
        best_xgb = min(table[(names[0], n)], table[(names[1], n)])
        print(f"\n{n} thread(s): XGBoost (faster of its two calls) / Tessera = {best_xgb / table[(names[3], n)]:.2f}x; "
              f"scikit-learn / Tessera = {table[(names[2], n)] / table[(names[4], n)]:.2f}x  (> 1: Tessera faster)")
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--make-models", action="store_true")
    parser.add_argument("--tessera", help="a built TesseraBenchmarks binary (default: swift run -c release)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--threads", default="1,2", help="thread counts to compare at (default 1,2)")
    args = parser.parse_args()
    if args.make_models:
        make_models(args.directory)
    else:
        run(args.directory, args.tessera, args.rounds, [int(n) for n in args.threads.split(",")])


if __name__ == "__main__":
    sys.exit(main())
