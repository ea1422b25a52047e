#!/usr/bin/env python3
"""The cells of the rnn dialect as a table, from their TableGen records.

Every cell is defined once, as an RNN_Cell record in
include/rnn/Dialect/RNNCells.td. This script reads those records through
`llvm-tblgen --dump-json` (TableGen's own JSON backend: no backend of ours
to build) and writes what the rest of the project takes the cell set from:

  cell-table.py --tblgen=LLVM_TBLGEN -I DIR... RNNCells.td --python=OUT
      the Python module python/rnnc/_cells.py (the package, its tests, the
      fuzzers and the benchmarks import it); the build writes it into the
      build tree, test/Dialect/cell-table.test checks that the committed
      copy is the same, and `ninja update-cell-table` copies it over;
  cell-table.py ... --names
      the cell names, one per line (for shell loops and dictionaries).

Cells keep the order of their definitions in the file. Exit 0, or 1 with
one line naming what is wrong (llvm-tblgen failed, no cell, a record
without a field the table needs).
"""

import argparse
import json
import os
import subprocess
import sys


def die(msg):
    print(f"cell-table.py: {msg}", file=sys.stderr)
    sys.exit(1)


def read_cells(tblgen, includes, td):
    """[(name, gates, states, summary)] of the RNN_Cell records in `td`, in
    the order of their definitions."""
    cmd = [tblgen, "--dump-json"] + [f"-I{d}" for d in includes] + [td]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        die(f"cannot run {tblgen}: {e.strerror}")
    if out.returncode != 0:
        die(f"{' '.join(cmd)} failed: {out.stderr.strip()[:500]}")
    records = json.loads(out.stdout)
    defs = records.get("!instanceof", {}).get("RNN_Cell", [])
    if not defs:
        die(f"no RNN_Cell record in {td}")

    def position(name):
        # '!locs': ["RNNCells.td:178"], the definition's line.
        loc = records[name]["!locs"][0]
        return int(loc.rsplit(":", 1)[1])

    cells = []
    for d in sorted(defs, key=position):
        r = records[d]
        for field in ("mnemonic", "numGates", "states", "summary"):
            if r.get(field) is None:
                die(f"{d} has no field {field}")
        cells.append((r["mnemonic"], r["numGates"], tuple(r["states"]),
                      r["summary"]))
    return cells


def python_module(cells):
    rows = "\n".join(f"    Cell({name!r}, {gates}, {states!r},\n"
                     f"         {summary!r}),"
                     for name, gates, states, summary in cells)
    return f'''# The cells of the rnn dialect, generated from their records in
# include/rnn/Dialect/RNNCells.td by tools/cells/cell-table.py. Do not edit:
# `ninja -C build update-cell-table` writes it again, and the lit test
# test/Dialect/cell-table.test fails while it differs from the records.
"""The dialect's cells: name (rnn-run --preset, rnn.<name>), number of gate
blocks of width H, states (h first; two states: torch.nn.LSTM's interface,
one: torch.nn.GRU's) and a one-line summary, in the order of their
definitions."""

from collections import namedtuple

Cell = namedtuple("Cell", "name gates states summary")

CELLS = (
{rows}
)

NAMES = tuple(c.name for c in CELLS)
BY_NAME = {{c.name: c for c in CELLS}}
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("td", help="RNNCells.td")
    ap.add_argument("--tblgen", default="llvm-tblgen")
    ap.add_argument("-I", dest="includes", action="append", default=[],
                    help="include directory (repeatable)")
    out = ap.add_mutually_exclusive_group(required=True)
    out.add_argument("--python", metavar="FILE",
                     help="write the Python module to FILE")
    out.add_argument("--names", action="store_true",
                     help="print the cell names, one per line")
    args = ap.parse_args()
    cells = read_cells(args.tblgen, args.includes, args.td)
    if args.names:
        print("\n".join(c[0] for c in cells))
        return
    text = python_module(cells)
    # Written whole or not at all.
    tmp = args.python + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.python)


if __name__ == "__main__":
    main()
