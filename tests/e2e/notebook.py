"""Build a small notebook and run it headless with nbclient and an
ipykernel, as a Jupyter job does: prints each code cell's output text, one
"cell N: ..." line per cell, then "done"."""
import sys

import nbclient
import nbformat
from nbformat.v4 import new_code_cell, new_notebook

cells = [
    "print(6 * 7)",
    # under the home directory: the kernel's cwd and caches live there
    "import os\n"
    "p = os.path.join(os.path.expanduser('~'), 'nb-home.txt')\n"
    "open(p, 'w').write('home ok')\n"
    "print(open(p).read())",
    "import tempfile\n"
    "with tempfile.NamedTemporaryFile('w+', dir='/tmp') as f:\n"
    "    f.write('tmp ok'); f.flush(); f.seek(0); print(f.read())",
    "import json, statistics\n"
    "print(json.dumps({'mean': statistics.mean([1, 2, 3, 4])}))",
]
nb = new_notebook(cells=[new_code_cell(c) for c in cells])
client = nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                                 resources={"metadata": {"path": "/tmp"}})
client.execute()
for i, cell in enumerate(nb.cells):
    text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")
    errs = [o for o in cell.get("outputs", [])
            if o.get("output_type") == "error"]
    print(f"cell {i}: {text.strip()}" + (" ERROR" if errs else ""))
nbformat.write(nb, sys.argv[1] if len(sys.argv) > 1 else "/tmp/out.ipynb")
print("done")
