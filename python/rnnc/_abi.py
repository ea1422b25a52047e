"""The compiled library's entry points called on PyTorch tensors: each
argument the manifest lists bound to its tensor (its dtype, shape, layout
and device checked), a scratch arena per library, kind and device, the
CUDA graph replay setting, and the call through ctypes on the current
stream. rnnc.torch's operators (_ops.py) call the library through here."""

import weakref

import torch

from .library import RNNCError

_TORCH_DTYPES = {"bool": torch.bool, "uint8": torch.uint8,
                 "int64": torch.int64, "float32": torch.float32,
                 "float64": torch.float64}
_FLOATS = {torch.float32: "float32", torch.float64: "float64"}

# The loaded libraries by key (a JSON object of compile_model's arguments:
# _ops.py), held weakly so that rnnc.library's bound on loaded libraries
# holds.
_LIBRARIES = weakref.WeakValueDictionary()   # key -> Library


def _buffer(tensor, arg, layer_count, device):
    """The part of `tensor` that is `arg` (a layer of a `[L, ...]` stack for
    per-layer arguments), after checking dtype, shape, layout and device."""
    if arg.layer is not None:
        if tensor.dim() != len(arg.shape) + 1 or tensor.shape[0] != layer_count:
            raise RNNCError(f"{arg.name} must have shape "
                            f"{[layer_count, *arg.shape]}, got "
                            f"{list(tensor.shape)}")
        part = tensor[arg.layer]
    else:
        part = tensor
    want = _TORCH_DTYPES[arg.dtype]
    if part.dtype != want:
        raise RNNCError(f"{arg.name} must be {want}, got {part.dtype}")
    if tuple(part.shape) != arg.shape:
        raise RNNCError(f"{arg.name} must have shape {list(arg.shape)}, got "
                        f"{list(part.shape)}")
    if part.layout != torch.strided:
        raise RNNCError(f"{arg.name} must be a dense (strided) tensor, got "
                        f"{part.layout}")
    if not part.is_contiguous():
        raise RNNCError(f"{arg.name} is not contiguous; rnnc reads tensors "
                        f"in place (call .contiguous() if a copy is meant)")
    if part.is_neg():
        raise RNNCError(f"{arg.name} is a negative view, whose memory holds "
                        f"the values' negations; rnnc reads tensors in "
                        f"place (call .resolve_neg() for its values)")
    if part.device != device:
        raise RNNCError(f"{arg.name} is on {part.device}, the input on "
                        f"{device}; rnnc needs every tensor on one device")
    return part


# The cuda library's kernels access 16-byte vectors: every buffer it is
# given must start at a multiple of 16 bytes (its entry points refuse
# others).
_CUDA_ALIGNMENT = 16
# The roles of the arguments an entry point writes.
_WRITTEN = ("output", "gradient", "saved", "scratch")


def _scratch(library, kind, device):
    """The library's scratch arena for `kind`, one per thread. On a GPU it
    is reused by later calls, which PyTorch's current stream orders after
    this one. A library of every shape keeps the largest arena its calls
    needed and passes its first bytes."""
    local = library._local
    arenas = getattr(local, "arenas", None)
    if arenas is None:
        arenas = local.arenas = {}
    size = library[kind].arena_bytes
    arena = arenas.get(kind)
    if arena is None or arena.numel() < size:
        arena = arenas[kind] = torch.empty(size, dtype=torch.uint8,
                                           device=device)
    return arena if arena.numel() == size else arena[:size]


# How many pointer sets each cuda library keeps graphs for
# (set_graph_replay); 0: off.
_GRAPH_REPLAY = 0


def set_graph_replay(calls):
    """Replays captured CUDA graphs of the calls of every cuda library
    rnnc.torch runs, now and later: each keeps the last `calls` sets of
    buffer addresses its entry points were called with. The second call
    with a kept set is captured into a CUDA graph and launched; later calls
    with it replay the graph, one launch in place of a few per time step,
    on a stream of the library's ordered after the current stream's
    earlier work and before its later work. Results are those of the call
    (the graph reads the buffers' current contents; dropout masks are drawn
    anew), and a call made while PyTorch captures a graph is captured as
    without replay. It pays off where the addresses repeat: static inputs
    and a caching allocator in a steady loop. 0 turns it off (the default)
    and drops the graphs. CPU tensors are not affected."""
    global _GRAPH_REPLAY
    if isinstance(calls, bool) or not isinstance(calls, int) or \
            not 0 <= calls < 2 ** 31:
        raise RNNCError(f"set_graph_replay takes a count of pointer sets "
                        f"from 0 (off) to 2**31 - 1, got {calls!r}")
    _GRAPH_REPLAY = calls
    for library in list(_LIBRARIES.values()):
        if library.target == "cuda" and library.graph_replay != calls:
            library.set_graph_replay(calls)


def _call(library, kind, tensors, layers, device):
    """Runs entry point `kind` with the buffers named in `tensors`, all on
    `device`."""
    entry = library[kind]
    pointers = []
    # Parts not aligned for the cuda kernels (a layer of a stack whose
    # layers are not multiples of 16 bytes, a view at an odd offset) run
    # through aligned copies, kept alive until the call is enqueued; those
    # the call writes are copied back.
    copies, write_back = [], []
    for arg in entry.args:
        if arg.name == "arena":
            tensor = _scratch(library, kind, device)
        else:
            tensor = tensors.get(arg.name)
            if tensor is None:
                raise RNNCError(f"internal: no buffer for {arg.name} of "
                                f"{entry.symbol}")
        part = _buffer(tensor, arg, layers, device)
        if device.type == "cuda" and part.data_ptr() % _CUDA_ALIGNMENT:
            aligned = part.clone()
            if arg.role in _WRITTEN:
                write_back.append((part, aligned))
            part = aligned
            copies.append(aligned)
        pointers.append(part.data_ptr())
    stream = None
    if device.type == "cuda":
        stream = torch.cuda.current_stream(device).cuda_stream
        if library.graph_replay != _GRAPH_REPLAY:
            library.set_graph_replay(_GRAPH_REPLAY)
    else:
        # The GEMMs use as many threads as PyTorch's CPU operators.
        library.set_blas_threads(torch.get_num_threads())
    entry.call(pointers, stream)
    # On the same stream, after the call's work.
    for part, aligned in write_back:
        part.copy_(aligned)
