# The cells of the rnn dialect, generated from their records in
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
    Cell('lstm', 4, ('h', 'c'),
         "the LSTM cell (PyTorch's gate order i, f, g, o)"),
    Cell('gru', 3, ('h',),
         "the GRU cell (PyTorch's gate order r, z, n)"),
    Cell('mgu', 2, ('h',),
         'the minimal gated unit (gate order f, n; see rnn.mgu)'),
    Cell('cifg', 3, ('h', 'c'),
         'the LSTM with coupled input and forget gates (f, g, o)'),
)

NAMES = tuple(c.name for c in CELLS)
BY_NAME = {c.name: c for c in CELLS}
