"""numpy's OpenBLAS held to one thread, for the tests that run a real model on the CPU."""

from pathlib import Path


def one_blas_thread():
    """numpy's OpenBLAS held to one thread (for a test module) -> a function that gives the
    threads back. Writing on is a long series of one-token products: on a busy machine,
    OpenBLAS's threads waiting on each other made them ten times slower (45 s against 10 s
    for this module at a load of 6). Does nothing where numpy's OpenBLAS is not found."""
    import ctypes
    import glob

    import numpy as np

    found = glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "*openblas*.so*"))
    try:
        lib = ctypes.CDLL(found[0])
        get, put = lib.scipy_openblas_get_num_threads64_, lib.scipy_openblas_set_num_threads64_
    except (IndexError, OSError, AttributeError):
        return lambda: None
    before = get()
    put(1)
    return lambda: put(before)
