"""The shared kernel of every figure: HTML helpers, the figure contract, data files, live cells."""
