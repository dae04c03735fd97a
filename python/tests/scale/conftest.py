"""Paths for the scale tests (run on their own by `make test-scale`)."""

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
RESOURCES = os.path.join(ROOT, "Sources", "tessera", "Resources")
