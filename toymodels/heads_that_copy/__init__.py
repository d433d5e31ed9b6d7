"""Chapter "Heads that copy": every head of SmolLM2-135M, a real causal language model, read
from its export (toymodels/data/smollm2/, written by `python -m toymodels.export smollm2`).

    heads.py   reads the export (numpy + stdlib, so it runs unchanged under Pyodide) and
               measures every head: induction, previous token, first-token sink, self;
               copying accuracy with chosen heads pulled out
    values.py  the numbers the chapter's prose quotes
    figure.py  Figure 1: one layer's heads, grouped by shared keys and values, a token's row
               marked in each, the first token shown or hidden
    map.py     Figure 2: all heads coloured by a score; a tap opens one
    gqa.py     Figure 3: which query heads share keys and values
    copying.py Figure 4: the second copy's guesses with stored sets of heads pulled out

The model itself (forward, quantisation, tokenizer, the reader's own text) is
toymodels/models/smollm2/, shared with "What a head does" and the exporter.
"""
