"""The models the site runs that chapters share: one package each, written once and used by the
chapters that read the model, by the build (sitebuild/models/, one recipe per real model) and by
the exporter (toymodels/export/). Shipped: numpy and the stdlib alone, so the same files run
in the build's CPython and in the reader's browser.

    gguf.py     the one reader of GGUF files (header, metadata, each tensor's blocks)
    quants.py   GGUF's block types (F32 to Q6_K) as float32, one tensor at a time
    card.py     a reader's own GGUF file's model card, from its header alone, or why the
                page cannot run it
    gguffile/   a reader's own GGUF file (llama, qwen2, gpt2): its model checked against its
                metadata, every head's attention, logits, a KV cache
    smollm2/    SmolLM2-135M-Instruct: forward, GGUF blocks as float32, BPE tokenizer, the
                site's repacked files, the reader's own text run in the page
    minilm/     all-MiniLM-L6-v2: forward, WordPiece tokenizer, compact weights, the reader's
                own sentence run in the page
    charmodel/  the character model: its forward pass, checkpoints and copying test

A model package imports only the kernel (toymodels/page/) and itself, never a chapter; a
chapter imports a model from here, never from another chapter (tests/test_layout.py).
docs/models.md says how to add a model.
"""
