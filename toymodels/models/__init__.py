"""Models that more than one chapter runs, one package each, over the kernel (page/) alone: a
chapter imports a model from here, never from another chapter.

    charmodel/      the character model: its forward pass, checkpoints and copying test
"""
