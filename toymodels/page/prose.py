"""What a chapter's prose may read: each module lists its values for prose in PROSE_VALUES.

A placeholder {{ toymodels.PACKAGE.MODULE.NAME }} reads NAME only if MODULE lists it, so a
chapter cannot call anything else (a trainer's `main`, say) by naming it. A value is a
constant, or a function without arguments and without side effects that the build calls.
"""

import inspect


def public_functions(namespace):
    """The names of the public functions a module defines itself: how a module whose every
    function is a value for prose (a values.py) declares them, at its end."""
    name = namespace["__name__"]
    return tuple(
        key
        for key, value in namespace.items()
        if inspect.isfunction(value) and value.__module__ == name and not key.startswith("_")
    )
