"""Checks the cell table (python/rnnc/_cells.py, generated from RNNCells.td)
against the tools: each cell is an rnn-run preset whose model is rnn.<cell>
with the table's gates (weight_ih_l0 of G*H rows) and states (h0, c0, ...
in the table's order). Usage: check-cell-table.py TABLE.py; prints the
number of cells checked, or the first mismatch and exits 1."""
import re
import runpy
import subprocess
import sys

CELLS = runpy.run_path(sys.argv[1])["CELLS"]
H, I = 5, 3
for cell in CELLS:
    out = subprocess.run(
        ["rnn-run", f"--preset={cell.name}", "--emit=mlir", "--layers=1",
         "--seq-len=2", "--batch=1", f"--input-size={I}",
         f"--hidden-size={H}"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"rnn-run --preset={cell.name}: {out.stderr.strip()}")
    if not re.search(rf"= rnn\.{cell.name} ", out.stdout):
        sys.exit(f"{cell.name}: no rnn.{cell.name} in its model")
    rows = re.search(r"tensor<(\d+)x\d+xf32> \{rnn.name = \"weight_ih_l0\"",
                     out.stdout)
    if not rows or int(rows.group(1)) != cell.gates * H:
        sys.exit(f"{cell.name}: weight_ih_l0 is not {cell.gates}*H rows")
    states = re.findall(r"rnn.layer = 0 : i64, rnn.name = \"(\w+)0\"",
                        out.stdout)
    if tuple(states) != cell.states:
        sys.exit(f"{cell.name}: states {states}, table {cell.states}")
print(f"cells checked: {len(CELLS)}")
