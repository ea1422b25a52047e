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
import re

from ._errors import RNNCError


# A term of a size in T and B as the compiler prints it (SizeExpr): an
# integer, the symbols, or an integer times the symbols ("256*T*B").
_TERM = re.compile(r"(?:\d+|[TB])(?:\*[TB])*")


class Size:
    """A polynomial in T and B with integer coefficients, parsed from the
    manifest ("704*T*B + 64*B"); evaluated on ints, or on torch.SymInts
    while a graph is traced."""

    def __init__(self, text):
        self.text = text
        self.terms = []
        for sign, term in re.findall(r"(^|[+-]) *([^+-]+?) *(?=[+-]|$)",
                                     text.strip()):
            if not _TERM.fullmatch(term):
                raise ValueError(text)
            factors = term.split("*")
            coefficient = int(factors[0]) if factors[0].isdigit() else 1
            symbols = [f for f in factors if not f.isdigit()]
            self.terms.append((-coefficient if sign == "-" else coefficient,
                               symbols.count("T"), symbols.count("B")))
        if not self.terms:
            raise ValueError(text)

    def __call__(self, T, B):
        total = 0
        for coefficient, t, b in self.terms:
            value = coefficient
            for _ in range(t):
                value = value * T
            for _ in range(b):
                value = value * B
            total = total + value
        return total


def saved_sizes(spec, symbol):
    """A forward entry point's saved values as [(role, Size)] and their
    alignment (each starts where the one before it ends, rounded up to
    it); None where the manifest gives no layout in T and B."""
    layout, alignment = spec.get("saved"), spec.get("saved_alignment")
    if layout is None or any("P" in str(value.get("size"))
                             for value in layout if isinstance(value, dict)):
        # A size in the GEMM block's steps is not a polynomial in T and B.
        return None
    try:
        if isinstance(alignment, bool) or not isinstance(alignment, int) or \
                alignment < 1:
            raise ValueError(alignment)
        return [(value["role"], Size(value["size"])) for value in layout], \
            alignment
    except (KeyError, TypeError, ValueError) as e:
        raise RNNCError(f"manifest: {symbol}'s saved layout is not sizes in "
                        f"T and B with an alignment ({e!r})") from None


def saved_layout(entry, T, B):
    """The saved values' (offset, bytes) at (T, B) and the region's bytes
    (ints or SymInts, as T and B)."""
    sizes, alignment = entry.saved_sizes
    layout, offset = [], 0
    for _, size in sizes:
        nbytes = size(T, B)
        layout.append((offset, nbytes))
        offset = offset + (nbytes + alignment - 1) // alignment * alignment
    return layout, offset


def _resolve(spec, shape):
    """An argument's manifest entry with "T" and "B" replaced by the call's
    sizes."""
    return dict(spec, shape=[shape[d] if isinstance(d, str) else d
                             for d in spec["shape"]])


class ShapedEntry:
    """One entry point of a dynamic library at (T, B)."""

    def __init__(self, entry, T, B):
        from .library import Arg
        self.entry = entry
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
        self.entry.call_at(self.shape, pointers, stream)


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
        forward = self.entries.get("fwd")
        self.saved_bytes = forward.saved_bytes if forward else 0
        self.saved_gaps = _saved_gaps(library, forward, T, B)

    def __getitem__(self, kind):
        return self.entries[kind]

    def __getattr__(self, name):
        # target, states, directory, manifest, set_blas_threads, _local ...
        return getattr(self._library, name)


def _saved_gaps(library, forward, T, B):
    """The byte ranges of the saved region that no saved value covers
    (alignment padding, which nothing writes), after checking the layout
    against the sizes entry point's bytes."""
    if not forward or not forward.saved_bytes:
        return []
    if forward.entry.saved_sizes is None:
        # No layout: the whole region counts as padding, so that the
        # region the forward returns is a function of its inputs.
        return [(0, forward.saved_bytes)]
    from .library import saved_gaps
    layout, total = saved_layout(forward.entry, T, B)
    if total != forward.saved_bytes:
        raise RNNCError(f"{library.directory}: the manifest's saved layout "
                        f"has {total} bytes at T={T}, B={B}, "
                        f"{forward.entry.sizes_symbol} {forward.saved_bytes}")
    return saved_gaps(layout, total)


def bind(entry, lib, spec, last_error):
    """Binds `entry` (library.Entry) to the entry point of a dynamic
    library and its sizes entry point; it has no argument shapes of its
    own."""
    from .library import _function
    entry.args = None
    entry.arena_bytes = entry.saved_bytes = None
    entry.predicted_peak_bytes = None
    entry.saved_layout = []
    entry.sizes_symbol = spec.get("sizes_symbol")
    try:
        entry._fn = _function(lib, entry.symbol, ctypes.c_int32,
                              ctypes.c_int64, ctypes.c_int64,
                              ctypes.c_void_p, ctypes.c_void_p)
        sizes = _function(lib, entry.sizes_symbol or "", ctypes.c_int32,
                          ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
    except AttributeError:
        raise RNNCError(f"library has no entry point {entry.symbol} with "
                        f"its sizes entry point {entry.sizes_symbol}")
    count = len(entry.specs)
    entry.sizes = sizes_function(sizes, count)
    entry.saved_sizes = saved_sizes(spec, entry.symbol)
    entry._array = ctypes.c_void_p * count
    entry._last_error = last_error


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
