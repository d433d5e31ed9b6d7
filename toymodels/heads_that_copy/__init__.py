"""Chapter "Heads that copy": every head of SmolLM2-135M, a real causal language model, read
from its export (toymodels/data/smollm2/, written by `python -m toymodels.export smollm2`).

    heads.py   reads the export (numpy + stdlib, so it runs unchanged under Pyodide) and
               measures every head: induction, previous token, first-token sink, self;
               copying accuracy with chosen heads pulled out
"""
