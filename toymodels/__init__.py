"""Small numpy models behind every figure: run by the build and, unchanged, in the browser.

One package per chapter over a small shared kernel; dependencies run one way:

    page/           the kernel: HTML helpers, the figure contract, data files, live cells
    models/         models chapters share, one package each over the kernel: the real
                    ones (SmolLM2, MiniLM) and the character model (charmodel/)
    one_head/       chapter "One head, from scratch": one hand-made head, every number shown
    many_heads/     chapter "Many heads looking at once": three hand-made heads
    split_attend/   chapter "Split, attend, concatenate, mix" (may use many_heads)
    real_heads/     chapter "Real heads": a pretrained model's exported maps
    one_character/  chapter "One character at a time": the trained character model's chapter
    heads_that_copy/ chapter "Heads that copy": SmolLM2-135M's exported heads and measures
    what_a_head_does/ chapter "What a head does": each head's direct share of a logit
                    difference, and the export's patching of every head
    why_a_head_looks/ chapter "Why a head looks there" (not on the path yet): a head's score
                    split into what earlier parts wrote, knockouts, composition scores
    guide/          the author guide's worked example
    training/       build-only: the character model's corpus, trainer and evaluation
    export/         build-only: exporting attention maps from pretrained models (MiniLM,
                    GPT-2, SmolLM2), and patching SmolLM2's heads
    data/           data the shipped modules read (checkpoints, exported maps)

Chapter packages import the kernel, models/ and earlier chapters' toy models (never a real
model from another chapter); models/ imports the kernel alone; nothing shipped imports a
BUILD_ONLY package (tests/test_layout.py holds these rules).
"""

BUILD_ONLY = ("training", "export")  # never copied into the site, never imported by shipped code
