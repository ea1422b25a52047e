"""A library for every sequence length and batch size (`rnn-compile
--dynamic`, manifest ABI version 2) at one shape. Its entry points take
(T, B) before the buffers, and each has a sizes entry point that gives
every argument's bytes at a shape (the arena and the saved region
included):

    int32_t rnnc_<f>(int64_t T, int64_t B, void *const *buffers, void *stream);
    int32_t rnnc_<f>_sizes(int64_t T, int64_t B, int64_t *bytes);

`Library.at(T, B)` (library.py) gives a `ShapedLibrary`: the library's
entry points with their arguments' shapes and sizes at (T, B), called as
a library of that static shape is called."""

import ctypes

from ._errors import RNNCError


def _resolve(spec, shape):
    """An argument's manifest entry with "T" and "B" replaced by the call's
    sizes."""
    return dict(spec, shape=[shape[d] if isinstance(d, str) else d
                             for d in spec["shape"]])


class ShapedEntry:
    """One entry point of a dynamic library at (T, B)."""

    def __init__(self, entry, T, B):
        from .library import Arg
        self._entry = entry
        self.kind = entry.kind
        self.symbol = entry.symbol
        bytes_ = entry.sizes(T, B)
        self.args = []
        for spec, nbytes in zip(entry.specs, bytes_):
            # The sizes entry point alone sizes the arena and the saved
            # region (no shape): byte buffers.
            if spec["shape"] is None:
                spec = dict(spec, shape=[nbytes], dtype="uint8")
            arg = Arg(_resolve(spec, {"T": T, "B": B}))
            if arg.nbytes != nbytes:
                raise RNNCError(f"{entry.sizes_symbol}: {arg.name} has "
                                f"{nbytes} bytes at T={T}, B={B}, its shape "
                                f"{list(arg.shape)} {arg.nbytes}")
            self.args.append(arg)
        by_name = {a.name: a.nbytes for a in self.args}
        self.arena_bytes = by_name.get("arena", 0)
        self.saved_bytes = by_name.get("saved", 0)
        self.predicted_peak_bytes = None
        self.shape = (T, B)

    def call(self, pointers, stream=None):
        self._entry.call_at(self.shape, pointers, stream)


class ShapedLibrary:
    """A dynamic library at (T, B): what rnnc.torch reads of a library of
    that static shape (its entry points by kind, the saved region's size,
    the states), and the library's own settings (target, threads, scratch
    arenas)."""

    def __init__(self, library, T, B):
        self._library = library
        self.shape = (T, B)
        self.entries = {kind: ShapedEntry(entry, T, B)
                        for kind, entry in library.entries.items()}
        self.saved_bytes = self.entries["fwd"].saved_bytes \
            if "fwd" in self.entries else 0
        # The saved values' offsets are computed per call: the whole
        # region counts as padding that nothing else writes, so that a
        # region the forward returns is a function of its inputs.
        self.saved_gaps = [(0, self.saved_bytes)] if self.saved_bytes else []

    def __getitem__(self, kind):
        return self.entries[kind]

    def __getattr__(self, name):
        # target, states, directory, manifest, set_blas_threads, _local ...
        return getattr(self._library, name)


def check_shape(library, T, B):
    """Refuses a shape the sizes entry point cannot take, naming it and
    the library."""
    for name, value in (("T", T), ("B", B)):
        if isinstance(value, bool) or not isinstance(value, int) or \
                not 1 <= value < 2 ** 63:
            raise RNNCError(f"{library}: {name} must be a positive integer, "
                            f"got {value!r}")


def sizes_function(lib_function, count):
    """`(T, B) -> [bytes per argument]` through a sizes entry point."""
    array = ctypes.c_int64 * count

    def sizes(T, B):
        out = array()
        if lib_function(T, B, out) != 0:
            raise RNNCError(f"the library cannot run T={T}, B={B}: a size "
                            f"does not fit in 63 bits")
        return list(out)
    return sizes
