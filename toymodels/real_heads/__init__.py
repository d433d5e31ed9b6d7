"""Chapter "Real heads": a pretrained model's exported attention maps, head labels, and the
numbers the prose quotes."""
