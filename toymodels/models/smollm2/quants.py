"""SmolLM2's GGUF blocks as float32: its file holds F32 norms, a Q8_0 embedding and Q4_1
layers, which the one shipped dequantisation of GGUF's block types reads
(toymodels/models/quants.py, bit for bit gguf-py's); this name stays so the forward, the
repack and the exporter keep theirs."""

from ..quants import TYPES, dequantize, nbytes, rows

__all__ = ["TYPES", "dequantize", "nbytes", "rows"]
