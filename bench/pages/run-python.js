// CODE run in a Python of its own on the page: the value of its last expression, as repr
async ([code]) => runCell(await readyPython(), code)
