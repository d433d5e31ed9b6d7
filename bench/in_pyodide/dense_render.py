"""Run in Pyodide by bench/allheads.py, as a live cell: `render` of the dense figures alone, on
the states the bench taps (TEXT: the character model's text), the median ms of 11 runs after
one."""

import json
import time

from toymodels.heads_that_copy import figure as hc
from toymodels.heads_that_copy import map as hm
from toymodels.one_character import figure as oc
from toymodels.real_heads import figure as rh


def median_ms(f, n=11):
    f(0)
    times = []
    for i in range(n):
        t = time.perf_counter()
        f(i)
        times.append(time.perf_counter() - t)
    return round(sorted(times)[n // 2] * 1000, 2)


def measure(text):
    def character(i):
        return oc.render({"text": text, "character": str(3 * i)})

    return json.dumps(
        {
            "real-heads model view": median_ms(
                lambda i: rh.render({"view": "model", "token": f"cat:{i % 9}"})
            ),
            "copy-layer": median_ms(lambda i: hc.render({"token": str(i % 9)})),
            "copy-map": median_ms(lambda i: hm.render({"head": f"L{i + 1}H{i % 9 + 1}"})),
            "one-character": median_ms(character),
        }
    )
