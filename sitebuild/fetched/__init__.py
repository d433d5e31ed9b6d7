"""What the build fetches and makes once per machine, outside git: the pinned downloads from
npm and PyPI (assets.py) and the reader's standard library and numpy compiled ahead inside
the pinned Pyodide (bytecode.py)."""
