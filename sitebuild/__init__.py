"""The pieces of build.py: fetching Pyodide, reading chapters, rendering pages, serving."""
