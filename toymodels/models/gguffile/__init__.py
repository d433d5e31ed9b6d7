"""A reader's own GGUF file: the model it holds, run by the site's numpy forward (numpy and the
stdlib alone, so the reader's browser runs it as the build's CPython does).

    model.py  the file's architecture and shape from its metadata, its tensors checked against
              what that architecture needs, and the model: `load(data)`; `llama` and `qwen2`
              run on SmolLM2's forward (toymodels/models/smollm2/llama.py), `gpt2` on gpt2.py
    gpt2.py   GPT-2's forward: LayerNorm, learned positions, one fused query-key-value matrix,
              GELU, every head's attention and a KV cache, as the llama forward gives them
    tokenizer.py  the file's vocabulary: byte-level BPE with the pre-tokenizer it names (GPT-2,
              Llama 3, Qwen2, SmolLM2), on SmolLM2's BPE (toymodels/models/smollm2/bpe.py), or
              SentencePiece (Llama 2, TinyLlama)
    gpt2check.py  a file of GPT-2 small's shape on the multi-head attention source's sentence:
              every head's previous-token, "it"->"cat" and first-token shares at its layer 4
              (from 0), and whether the source's three claims hold on the file

Blocks become float32 through toymodels/models/quants.py; the file is read by
toymodels/models/gguf.py, the site's one GGUF reader.
"""
