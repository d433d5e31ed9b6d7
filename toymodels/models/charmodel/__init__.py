"""The character model (2 layers of 4 heads, trained on Jane Austen), shared by the chapters
"One character at a time" and "Why a head looks there".

    model.py        the forward pass, checkpoints and their loading (nanoGPT-style numpy)
    copy_test.py    the copying test's repeated nonsense, and which heads are induction heads
"""
