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
import operator
import re

from ._errors import RNNCError


# A term of a size as the compiler prints it (SizeExpr): an integer, the
# symbols, or an integer times the symbols ("256*T*B"). T and B are the
# call's; P, K and N follow from them (`call_symbols`).
_TERM = re.compile(r"(?:\d+|[TBPKN])(?:\*[TBPKN])*")


class Size:
    """A polynomial in T, B, P, K and N with integer coefficients, parsed
    from the manifest ("704*T*B + 64*B"); evaluated on ints, or, in T and
    B alone, on torch.SymInts while a graph is traced."""

    def __init__(self, text):
        self.text = text
        self.terms = []
        for sign, term in re.findall(r"(^|[+-]) *([^+-]+?) *(?=[+-]|$)",
                                     text.strip()):
            if not _TERM.fullmatch(term):
                raise ValueError(text)
            factors = term.split("*")
            coefficient = int(factors[0]) if factors[0].isdigit() else 1
            symbols = tuple(f for f in factors if not f.isdigit())
            self.terms.append((-coefficient if sign == "-" else coefficient,
                               symbols))
        if not self.terms:
            raise ValueError(text)
        self.symbols = {s for _, symbols in self.terms for s in symbols}

    def __call__(self, values):
        """The size at `values`, each symbol's value by name."""
        total = 0
        for coefficient, symbols in self.terms:
            value = coefficient
            for symbol in symbols:
                value = value * values[symbol]
            total = total + value
        return total


def call_symbols(T, B, rows, chunk):
    """T and B, and what the compiler's sizes read besides: P, the GEMM
    block (the smallest power of two whose rows P * B reach `rows`, at
    most T), and under a chunk of `chunk` steps asked for, K, the chunk a
    call runs (rounded up to whole blocks, at most T), and N, the chunks
    of T."""
    P = 1
    while P < T and P * B < rows:
        P *= 2
    P = max(1, min(P, T))
    values = {"T": T, "B": B, "P": P, "K": T, "N": 1}
    if chunk:
        blocks = -(-chunk // P)
        values["K"] = T if blocks > T // P else blocks * P
        values["N"] = -(-T // values["K"])
    return values


def saved_sizes(spec, symbol):
    """A forward entry point's saved values as [(role, Size)] and their
    alignment (each starts where the one before it ends, rounded up to
    it); None where the manifest gives no layout."""
    layout, alignment = spec.get("saved"), spec.get("saved_alignment")
    if layout is None:
        return None
    if layout == []:
        # Nothing saved (a GRU layer's checkpoints under chunk:K are its
        # output y): an empty region, with no alignment to state.
        return [], 1
    try:
        if isinstance(alignment, bool) or not isinstance(alignment, int) or \
                alignment < 1:
            raise ValueError(alignment)
        return [(value["role"], Size(value["size"])) for value in layout], \
            alignment
    except (KeyError, TypeError, ValueError) as e:
        raise RNNCError(f"manifest: {symbol}'s saved layout is not sizes in "
                        f"T, B, P, K and N with an alignment ({e!r})") \
            from None


def saved_layout(entry, T, B):
    """The saved values' (offset, bytes) at (T, B) and the region's bytes
    (ints, or SymInts as T and B are); None for SymInts where a size reads
    the GEMM block or the chunk, which are no polynomials in T and B."""
    sizes, alignment = entry.saved_sizes
    if all(isinstance(n, int) for n in (T, B)):
        values = call_symbols(T, B, entry.gemm_rows, entry.chunk)
    elif any(size.symbols - {"T", "B"} for _, size in sizes):
        return None
    else:
        values = {"T": T, "B": B}
    layout, offset = [], 0
    for _, size in sizes:
        nbytes = size(values)
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
        self.entry.call_at(self.shape, pointers, stream, self.args)


class ShapedLibrary:
    """A dynamic library at (T, B): what rnnc.torch reads of a library of
    that static shape (its entry points by kind, the saved region's size,
    the states), and the library's own settings (target, threads, scratch
    arenas)."""

    def __init__(self, library, T, B):
        self._library = library
        self.shape = (T, B)
        # Under a budget no plan may fit a shape: its training entry
        # points refuse it when called, and inference runs.
        self.entries, self._refused = {}, {}
        for kind, entry in library.entries.items():
            try:
                self.entries[kind] = ShapedEntry(entry, T, B)
            except Unplanned as e:
                self._refused[kind] = e
        forward = self.entries.get("fwd")
        self.saved_bytes = forward.saved_bytes if forward else 0
        self.saved_gaps = _saved_gaps(library, forward, T, B)

    def __getitem__(self, kind):
        if kind in self._refused:
            raise self._refused[kind]
        from .library import entry_of
        return entry_of(self, kind)

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


def bind(entry, lib, spec, last_error, leading=()):
    """Binds `entry` (library.Entry) to the entry point of a dynamic
    library and its sizes entry point; it has no argument shapes of its
    own. `leading` are the ctypes of the arguments before T (a cuda
    library's context)."""
    from .library import _function
    entry.args = None
    entry.arena_bytes = entry.saved_bytes = None
    entry.predicted_peak_bytes = None
    entry.saved_layout = []
    entry.sizes_symbol = spec.get("sizes_symbol")
    try:
        entry._fn = _function(lib, entry.symbol, ctypes.c_int32, *leading,
                              ctypes.c_int64, ctypes.c_int64,
                              ctypes.c_void_p, ctypes.c_void_p)
        sizes = _function(lib, entry.sizes_symbol or "", ctypes.c_int32,
                          ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
    except AttributeError:
        raise RNNCError(f"library has no entry point {entry.symbol} with "
                        f"its sizes entry point {entry.sizes_symbol}")
    count = len(entry.specs)
    entry.unplanned = lambda T, B: (f"the library refuses T={T}, B={B} "
                                    f"(status 2)")
    entry.sizes = sizes_function(sizes, count,
                                 lambda T, B: entry.unplanned(T, B),
                                 entry.sizes_symbol)
    entry.saved_sizes = saved_sizes(spec, entry.symbol)
    entry._array = ctypes.c_void_p * count
    entry._last_error = last_error


def set_schedule(entries, manifest, directory):
    """Gives a dynamic library's entry points what their sizes in P, K and
    N follow from: the manifest's GEMM rows and chunk (remat_plan
    "chunk:K"), and under a budget (remat_plan "per call") what to say
    where no plan fits."""
    rows, plan = manifest.get("gemm_rows"), manifest.get("remat_plan", "")
    chunk = None
    if isinstance(plan, str) and plan.startswith("chunk:"):
        chunk = plan.split(":", 1)[1]
        chunk = int(chunk) if chunk.isdigit() else None
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1 or \
            (plan.startswith("chunk:") and not chunk):
        raise RNNCError(f"{directory}: the manifest's gemm_rows {rows!r} "
                        f"and remat_plan {plan!r} give no GEMM block or "
                        f"chunk")
    unplanned = None
    if plan == "per call":
        unplanned = unplanned_message(manifest, directory)
    for entry in entries:
        entry.gemm_rows, entry.chunk = rows, chunk
        if unplanned:
            entry.unplanned = unplanned


def check_shape(library, T, B):
    """(T, B) as Python integers (NumPy's included); a shape the sizes
    entry point cannot take is refused, naming it and the library."""
    shape = []
    for name, value in (("T", T), ("B", B)):
        try:
            number = None if isinstance(value, bool) else operator.index(value)
        except TypeError:
            number = None
        if number is None or not 1 <= number < 2 ** 63:
            raise RNNCError(f"{library}: {name} must be a positive integer, "
                            f"got {value!r}")
        shape.append(number)
    return tuple(shape)


class Unplanned(RNNCError):
    """No remat plan fits the library's budget at a shape."""


# Slots past the manifest's arguments that a sizes call gets, filled with
# _UNWRITTEN: a library that writes one (or leaves one of the arguments'
# unwritten) takes another argument list than its manifest describes.
_GUARD_SLOTS = 64
_UNWRITTEN = -1


def sizes_function(lib_function, count, unplanned, symbol="the sizes "
                   "entry point"):
    """`(T, B) -> [bytes per argument]` through a sizes entry point;
    `unplanned(T, B)` says why no remat plan fits a budget there (status
    2). An RNNCError where the entry point writes the sizes of more or
    fewer than the manifest's `count` arguments."""
    array = ctypes.c_int64 * (count + _GUARD_SLOTS)

    def sizes(T, B):
        out = array(*[_UNWRITTEN] * (count + _GUARD_SLOTS))
        status = lib_function(T, B, out)
        if status == 2:
            raise Unplanned(unplanned(T, B))
        if status != 0:
            raise RNNCError(f"the library cannot run T={T}, B={B}: a size "
                            f"does not fit in 63 bits")
        written = [i for i, n in enumerate(out) if n != _UNWRITTEN]
        if written != list(range(count)) or min(out[:count]) < 0:
            raise RNNCError(
                f"{symbol} gives {len(written)} sizes at T={T}, B={B}, not "
                f"those of the manifest's {count} arguments: the manifest "
                f"does not describe this library (compile it again)")
        return list(out[:count])
    return sizes


def unplanned_message(manifest, directory):
    """`(T, B) -> message` for a library that chooses its remat plan per
    call (remat_plan "per call"): the budget, and the smallest feasible
    budget at (T, B) from each plan's peak in the manifest."""
    policy, variants = manifest.get("remat", ""), manifest.get(
        "remat_variants")
    try:
        budget = int(policy.split(":", 1)[1])
        plans = [(v["plan"], [Size(c) for c in v["peak"]], v.get("rows"),
                  v.get("chunk")) for v in variants]
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        raise RNNCError(f"{directory}: the manifest chooses the remat plan "
                        f"per call, but gives no budget and plans with "
                        f"peaks (remat {policy!r})") from None

    def message(T, B):
        peaks = []
        for plan, candidates, rows, chunk in plans:
            values = call_symbols(T, B, rows or 1, chunk)
            peaks.append((max(size(values) for size in candidates), plan))
        peak, plan = min(peaks, key=lambda item: item[0])
        return (f"{directory}: no remat plan fits budget:{budget} at T={T}, "
                f"B={B}; the smallest feasible budget there is {peak} bytes "
                f"({plan})")
    return message
