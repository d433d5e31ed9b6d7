"""Training the character model (toymodels/charmodel.py): corpus, hand-written backward pass, evaluation.

Not shipped to the browser (the build copies only top-level toymodels/*.py). Run from the
repository root: `python -m toymodels.training.corpus`, `… .train`, `… .evaluate`.
"""
