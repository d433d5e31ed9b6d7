"""SmolLM2's certificate: how far the shipped numpy forward is from transformers' own model
of the same GGUF file, on fixed texts, written into toymodels/data/smollm2/certificate.json
for the page to show beside "Load SmolLM2" (toymodels/models/smollm2/certificate.py reads
it).

The texts are the export's curated ones (smollm2.curated_texts), read by the shipped
tokenizer. For each, both forwards give every head's attention and every logit; the file
holds the largest absolute difference of each over all the texts. The differences are float32
rounding (a few millionths), and the last digits of such a number change with the CPU's
float32 products, so each is stored rounded up to two significant digits: a bound the shipped
model keeps, and what `make export` writes again byte for byte.
"""

import json
import math
from pathlib import Path

import numpy as np

from ..models.smollm2.certificate import FILE
from .smollm2 import OUT as DATA
from .smollm2 import curated_texts

OUT = DATA / FILE.rsplit("/", 1)[-1]
DIGITS = 2  # significant digits kept, rounding up


def ceil_sig(x, digits=DIGITS):
    """X rounded up to DIGITS significant digits (0 stays 0): 2.0931e-06 -> 2.1e-06."""
    x = float(x)
    if x <= 0:
        return 0.0
    scale = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return float(f"{math.ceil(x / scale - 1e-9) * scale:.{digits - 1}e}")


def measure(model, bpe, reference, texts=None):
    """The certificate: MODEL (the shipped forward) and REFERENCE(ids) -> (attention (layers,
    heads, T, T), logits (T, V)), transformers' model, on TEXTS [(id, kind, text)] (default the
    curated texts), read by BPE -> a dict for certificate.json."""
    texts = curated_texts() if texts is None else texts
    worst_att = worst_logit = 0.0
    tokens = 0
    for _, _, text in texts:
        ids = bpe.encode(text)
        maps, logits = model.forward(ids)
        ref_maps, ref_logits = reference(ids)
        if maps.shape != ref_maps.shape or logits.shape != ref_logits.shape:
            raise ValueError(f"the two models disagree on the shapes for {text[:30]!r}")
        worst_att = max(worst_att, float(np.abs(maps - ref_maps).max()))
        worst_logit = max(worst_logit, float(np.abs(logits - ref_logits).max()))
        tokens += len(ids)
    return {
        "v": 1,
        "texts": [tid for tid, _, _ in texts],
        "tokens": tokens,
        "attention": ceil_sig(worst_att),
        "logits": ceil_sig(worst_logit),
    }


def transformers_reference(path):
    """transformers' SmolLM2 loaded from the GGUF file at PATH (eager attention, float32,
    one thread): the reference(ids) that `measure` takes, and transformers' version."""
    import torch
    import transformers

    torch.set_num_threads(1)
    path = Path(path)
    net = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    ).eval()

    def reference(ids):
        with torch.no_grad():
            out = net(torch.tensor([ids]), output_attentions=True)
        return torch.stack(out.attentions)[:, 0].numpy(), out.logits[0].numpy()

    return reference, transformers.__version__


def export(out=OUT, model=None):
    """Measure the shipped model against transformers and write certificate.json."""
    from .llama import Llama, tokenizer

    m = model or Llama()
    reference, version = transformers_reference(m.path)
    cert = measure(m, tokenizer(m.reader), reference)
    cert["reference"] = f"transformers {version}"
    write(cert, out)
    return cert


def write(cert, out=OUT):
    Path(out).write_text(json.dumps(cert, separators=(",", ":")) + "\n", encoding="utf-8")
