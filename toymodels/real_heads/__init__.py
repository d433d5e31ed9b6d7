"""Chapter "Real heads": a pretrained model's exported attention maps, head labels, and the
numbers the prose quotes. The model it runs on the reader's sentence (forward, WordPiece,
compact weights) is toymodels/models/minilm/."""
