"""What the tests share besides pytest's hooks and fixtures, one job a module. tests/conftest.py
keeps the hooks and fixtures and re-exports the helpers tests import (`from conftest import
open_ready`). waits.py waits for conditions in and out of the browser; watch.py holds what a
test's pages must not do; python.py opens a page with its Python ready or held back; shared.py
lends the pages with Python ready that a module's tests share; inner.py runs a pytest of its
own for tests of the fixtures; blas.py holds numpy to one thread."""
