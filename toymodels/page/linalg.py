"""One matrix product for every model that runs in the browser.

Pyodide's numpy has no BLAS: there `a @ b` on the models' shapes is several times slower
than `np.einsum` on the same operands (measured in Chromium, Pyodide 0.27.7, float64,
24 x 384 by 384 x 1536: @ 36.5 ms, einsum 7.7 ms, einsum with the weight stored out x in
6.1 ms at a load average of 5; `python bench/run.py live` measures it again, with the
weight out x in: @ on its transpose 9.2 ms, einsum 6.0 ms at a load of 2.3). The results are
identical. CPython keeps BLAS's `@`.
Small batched products (a head's 24 x 32 by 32 x 24) stay `@` everywhere: einsum is slower
there.
"""

import sys

import numpy as np

IN_BROWSER = sys.platform == "emscripten"


def matmul(a, b, transposed=False):
    """a @ b (a @ b.T when TRANSPOSED, for weights stored out x in, as torch's Linear does),
    for a 2-D or (…, n, k) `a` and a 2-D `b`."""
    if IN_BROWSER and np.ndim(b) == 2:
        return np.einsum("...ik,jk->...ij" if transposed else "...ik,kj->...ij", a, b)
    return a @ (b.T if transposed else b)
