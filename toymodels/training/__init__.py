"""Training the character model (toymodels/models/charmodel/model.py): corpus, hand-written
backward pass, evaluation.

Build-only: never shipped to the browser, and no shipped module imports it (a test holds this).
Run from the repository root: `python -m toymodels.training.corpus`, `… .train`, `… .evaluate`.
"""

from toymodels.page import data

SHIP = data.HERE / "charmodel"  # where runs are published: toymodels/data/charmodel/
