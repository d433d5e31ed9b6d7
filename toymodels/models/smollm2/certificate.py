"""SmolLM2's certificate for the page: how close the shipped numpy forward comes to
transformers' own model of the same GGUF file, as the exporter measured it at build time
(toymodels/export/certificate.py writes FILE; `make export` writes it again byte for byte).
Shipped, so the page's figure text beside "Load SmolLM2" says it: `sentence()`.
"""

import json

from ...page import data

FILE = "smollm2/certificate.json"


def read():
    """The certificate: {"texts": ids of the texts, "tokens": their tokens in all,
    "attention": the largest |Δ attention weight|, "logits": the largest |Δ logit| (each
    rounded up to two significant digits), "reference": "transformers VERSION"}."""
    return json.loads(data.read_bytes(FILE))


def number(x):
    """A small bound as a reader reads it: 2.1e-06 -> "0.0000021"."""
    text = f"{x:.12f}".rstrip("0")
    return text.rstrip(".") if text.endswith(".") else text


def sentence():
    """The certificate as one plain-text sentence (the caller escapes it, like any text)."""
    c = read()
    return (
        f"Checked when the site was built: on {len(c['texts'])} texts ({c['tokens']} tokens), "
        f"this model's attention weights are within {number(c['attention'])} of those of "
        f"{c['reference']} running the same GGUF file, and its logits within "
        f"{number(c['logits'])}."
    )
