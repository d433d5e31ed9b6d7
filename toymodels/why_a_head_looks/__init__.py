"""Chapter "Why a head looks there": why a head puts its weight where it
does, split exactly into what earlier parts of the model wrote, and checked by taking one part
out.

    split.py     the split any model shares (a residual stream as a sum of components, one
                 head's score split exactly into (query component, key component) pairs,
                 the knockout of one component from the keys or the queries), the character
                 model's, and the K-, Q- and V-composition scores of Elhage et al. (2021)
                 from the weights alone
    smollm2.py   the same split on SmolLM2's forward: RMSNorm, RoPE, grouped-query attention
                 (and a reader's llama or qwen2 file: qwen2's query and key biases)
    gpt2.py      the same split on a reader's GPT-2 file: LayerNorm, learned positions, biases
    measure.py   the induction circuit measured with them on repeated nonsense
    figure.py    Figure 1: one score of the character model split, and a component taken out
    exported.py  SmolLM2's heads as the export measured them (toymodels/export/why_look.py)
    circuit.py   Figure 2: their knockout tables and top components
    own.py       Figure 3: the reader's own text in SmolLM2 or their own model file, split live
    composition.py  Figure 4: K-composition from the weights beside the measured lift
    values.py    the prose's numbers; checks.py the exercises' checks
"""
