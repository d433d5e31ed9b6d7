"""Small numpy models behind every figure: run by the build and, unchanged, in the browser."""
