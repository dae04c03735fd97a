#!/usr/bin/env python3
"""Summarizes a NeuralNetwork harvest run for Docs/NeuralNetwork.md.

Reads the `outcomes.csv` files that `NeuralNetworkHarvestTests` writes in each harvest root
(one line per case: its folder, outcome, layer types, detail) and prints the totals per
source and the cases that pass, are wrong, refused or fail to load / run per layer type, in
Markdown. A case counts for every layer type in its network.

    python3 tools/summarize_nn_harvest.py mil=ROOT/mil/outcomes.csv nn=ROOT/nn/outcomes.csv
"""

import collections
import csv
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
        for row in csv.DictReader(open(path)):
            counter[row["outcome"]] += 1
            for layer in row["layers"].split():
                layers[layer][row["outcome"]] += 1
        totals[source] = counter
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
