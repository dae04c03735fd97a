#!/usr/bin/env python3
"""Summarizes a harvest run for Docs/LoweringHarvestReport.md.

Reads the `outcomes.csv` that `LoweringHarvestTests` writes in the harvest root (one line per
case: its folder, outcome, op types) and prints, per family folder and per op type, the cases
that pass, fail or are refused, in Markdown. A family harvested with `HARVEST_SAMPLE=n`
(folder named `sample<n>_…` or `…_sample<n>`) holds every n-th parametrization, so its
cases are also counted n times in the estimated totals. Cases whose program holds a
recurrent op (`lstm`, `gru`, `rnn`) are reported apart, with and without. Cases of tests that
assert the prediction differs from their values (NEGATIVE_TESTS) are left out and counted apart.

    python3 tools/summarize_harvest.py Tests/Fixtures/harvested/outcomes.csv
"""

import collections
import csv
import json
import os
import re
import sys

PASS = {"pass", "pass (fp16 program)"}
# Tests that wrap compare_backend in pytest.raises: they assert the prediction differs from the
# values they pass (or fails), so a recorded case of theirs is no requirement. Read from each
# case's case.json next to outcomes.csv and counted apart.
NEGATIVE_TESTS = ("test_ios17_invalid_indices",)
RECURRENT = {"lstm", "gru", "rnn"}


def weight(folder):
    match = re.search(r"(?:^sample(\d+)_|_sample(\d+)$)", folder)
    return int(match.group(1) or match.group(2)) if match else 1


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    root = os.path.dirname(os.path.abspath(sys.argv[1]))
    negative = collections.Counter()
    kept = []
    for row in rows:
        test = json.load(open(os.path.join(root, row["case"], "case.json")))["test"]
        if any(name in test for name in NEGATIVE_TESTS):
            negative[row["outcome"]] += 1
        else:
            kept.append(row)
    rows = kept
    families = collections.defaultdict(collections.Counter)
    ops = collections.defaultdict(collections.Counter)
    totals = {key: collections.Counter() for key in ("all", "no_recurrent")}
    estimated = {key: collections.Counter() for key in ("all", "no_recurrent")}
    for row in rows:
        folder = row["case"].split("/")[0]
        outcome = "pass" if row["outcome"] in PASS else row["outcome"]
        case_ops = set(row["ops"].split())
        families[folder][outcome] += 1
        for op in case_ops:
            ops[op][outcome] += 1
        for key in ("all", "no_recurrent"):
            if key == "no_recurrent" and case_ops & RECURRENT:
                continue
            totals[key][outcome] += 1
            estimated[key][outcome] += weight(folder)
    outcomes = ["pass", "fail", "unsupported", "load error", "run error"]

    def line(name, counter):
        total = sum(counter.values())
        rate = 100.0 * counter["pass"] / total if total else 0.0
        return f"| {name} | " + " | ".join(str(counter[o]) for o in outcomes) + f" | {total} | {rate:.1f} % |"

    header = "| | " + " | ".join(outcomes) + " | cases | pass |\n|---|" + "---:|" * (len(outcomes) + 2)
    print("Totals (harvested cases; estimated = sampled families weighted by their sampling factor):\n")
    print(header)
    print(line("all, harvested", totals["all"]))
    print(line("all, estimated", estimated["all"]))
    print(line("without lstm/gru/rnn, harvested", totals["no_recurrent"]))
    print(line("without lstm/gru/rnn, estimated", estimated["no_recurrent"]))
    if negative:
        print(f"\nLeft out: {sum(negative.values())} cases of tests that expect the prediction to differ or fail"
              f" ({', '.join(NEGATIVE_TESTS)}): " + ", ".join(f"{n} {o}" for o, n in sorted(negative.items())))
    print("\nPer family (folder; `sampleN` = every N-th parametrization):\n")
    print(header)
    for folder in sorted(families):
        print(line(folder, families[folder]))
    print("\nPer op type (a case counts for every op in its program, nested blocks included):\n")
    print(header)
    for op in sorted(ops):
        print(line(f"`{op}`", ops[op]))


if __name__ == "__main__":
    main()
