"""Chapter "One character at a time": the trained character model, its figure, pictures, prose
values and the KV cache."""
