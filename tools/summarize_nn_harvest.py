#!/usr/bin/env python3
"""Summarizes a NeuralNetwork harvest run for Docs/NeuralNetwork.md.

Reads the `outcomes.csv` files that `NeuralNetworkHarvestTests` writes in each harvest root
(one line per case: its folder, outcome, layer types, detail) and prints the totals per
source and the cases that pass, are wrong, refused or fail to load / run per layer type, in
Markdown. A case counts for every layer type in its network. Cases that compare a random
layer's output element by element with NumPy's own draws (coremltools' random tests record
such a comparison after their moment check) depend on the stream, which Core ML does not
specify; they are counted apart and left out of the tables.

    python3 tools/summarize_nn_harvest.py mil=ROOT/mil/outcomes.csv nn=ROOT/nn/outcomes.csv
"""

import collections
import csv
import json
import os
import sys

OUTCOMES = ["pass", "wrong", "refused", "load error", "run error"]


def line(name, counter):
    total = sum(counter.values())
    rate = 100.0 * counter["pass"] / total if total else 0.0
    return f"| {name} | " + " | ".join(str(counter[o]) for o in OUTCOMES) + f" | {total} | {rate:.1f} % |"


def main():
    header = "| | " + " | ".join(OUTCOMES) + " | cases | pass |\n|---|" + "---:|" * (len(OUTCOMES) + 2)
    totals = collections.OrderedDict()
    layers = collections.defaultdict(collections.Counter)
    for argument in sys.argv[1:]:
        source, path = argument.split("=", 1)
        counter = collections.Counter()
        skipped = 0
        for row in csv.DictReader(open(path)):
            case = json.load(open(os.path.join(os.path.dirname(path), row["case"], "case.json")))
            random = any(l.startswith("random") or l == "categoricalDistribution" for l in case["layers"])
            if random and case["comparison"] != "moments":
                skipped += 1
                continue
            counter[row["outcome"]] += 1
            for layer in row["layers"].split():
                layers[layer][row["outcome"]] += 1
        totals[source] = counter
        if skipped:
            print(f"{source}: {skipped} stream-dependent random-layer comparisons left out\n")
    print("Totals per source:\n")
    print(header)
    overall = collections.Counter()
    for source, counter in totals.items():
        print(line(source, counter))
        overall.update(counter)
    print(line("all", overall))
    print("\nPer layer type (a case counts for every layer type in its network):\n")
    print(header)
    for layer in sorted(layers):
        print(line(f"`{layer}`", layers[layer]))


if __name__ == "__main__":
    main()
