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

The model itself, one forward for the build's export and the reader's own text:

    llama.py   SmolLM2's forward (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied
               logits), every head's attention, a KV cache for writing on
    quants.py  the GGUF's Q4_1, Q8_0 and F32 blocks as float32, in numpy alone
    bpe.py     the byte-level BPE tokenizer
    weights.py the site's repacked weight and tokenizer files, read as the page reads them
"""
