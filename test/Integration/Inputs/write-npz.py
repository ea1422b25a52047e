"""Writes an .npz archive of one-dimensional arrays given on the command line
(standard library only), for the rnn-npz-compare tests: every expected
verdict there follows from values written here, not from an earlier run.

Usage: write-npz.py OUT NAME:DESCR=V,V,... [NAME:DESCR=...]...

DESCR is a NumPy type string: <f4, <f8, |b1, |u1, <i4, <i8 or <u8. Values are
Python literals (nan, inf and -inf as well), so 2**62+1 is exact in an int64.
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from npzlite import DTYPES, write_npz  # noqa: E402

# npzlite's table has the dtypes of rnn-run's files; the comparison of
# integers in their own type also needs these.
DTYPES.setdefault("<i4", ("i", 4))
DTYPES.setdefault("<u8", ("Q", 8))


def main(argv):
    arrays = {}
    for spec in argv[1:]:
        head, values = spec.split("=", 1)
        name, descr = head.split(":")
        env = {"nan": math.nan, "inf": math.inf, "__builtins__": {}}
        parsed = [eval(v, env) for v in values.split(",")] if values else []
        if descr == "|b1":
            parsed = [bool(v) for v in parsed]
        arrays[name] = (descr, (len(parsed),), parsed)
    write_npz(argv[0], arrays)


if __name__ == "__main__":
    main(sys.argv[1:])
