"""Chapter "What a head does": what each head of SmolLM2-135M adds to the model's
choice between two next tokens, read from the same forward the page runs
(toymodels/models/smollm2/llama.py).

    attribution.py  direct logit attribution: each head's output carried straight to the
                    difference of two logits through the final norm (its scale frozen),
                    the embedding's and the MLPs' share beside it; the rank correlation the
                    chapter compares it and attention with

The export (toymodels/data/what_a_head_does/, written by `python -m toymodels.export patching`)
holds curated pairs of texts and, for every head, what patching it from one into the other
recovers (toymodels/export/patching.py, build-only).
"""
