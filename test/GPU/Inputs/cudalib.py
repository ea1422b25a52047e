"""A library from rnn-compile --target=cuda and the CUDA driver API it runs
on, called through ctypes the way a framework calls them, for
check-cuda-library.py's scenarios on the null CUDA device
(test/lib/NullCuda):

  * Device: the driver (cuInit, the primary context made current), its
    non-blocking streams, copies and allocations filled with a byte;
  * Library: a library directory's manifest and shared object, its
    entries' argument sizes (a library of every shape at the shape the
    CHECK_SHAPE environment variable gives, "T,B"), buffers for an entry's
    arguments, and its entry points and functions;
  * capture(): calls made while the caller captures a stream, the graph
    then launched once.

Uses the standard library only."""

import ctypes
import json
import math
import os

CU_STREAM_NON_BLOCKING = 1
CU_STREAM_CAPTURE_MODE_GLOBAL = 0
DTYPE_BYTES = {"float32": 4, "bool": 1, "uint8": 1}


class Device:
    """The null device's driver API, as a framework would use the driver."""

    def __init__(self, path, ordinal=0):
        """Device `ordinal`, its primary context made current."""
        self.cu = ctypes.CDLL(path)
        self.allocations = 0
        self.check(self.cu.cuInit(0), "cuInit")
        device = ctypes.c_int()
        self.check(self.cu.cuDeviceGet(ctypes.byref(device), ordinal),
                   "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(self.cu.cuDevicePrimaryCtxRetain(
            ctypes.byref(self.context), device), "cuDevicePrimaryCtxRetain")
        self.make_current()

    def make_current(self):
        """Makes the device's context current: streams and allocations are
        the current context's."""
        self.check(self.cu.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def current(self):
        """The context current on the calling thread."""
        current = ctypes.c_void_p()
        self.check(self.cu.cuCtxGetCurrent(ctypes.byref(current)),
                   "cuCtxGetCurrent")
        return current.value

    @staticmethod
    def check(result, what):
        if result != 0:
            raise SystemExit(f"{what} failed: CUresult {result}")

    def stream(self):
        stream = ctypes.c_void_p()
        self.check(self.cu.cuStreamCreate(ctypes.byref(stream),
                                          CU_STREAM_NON_BLOCKING),
                   "cuStreamCreate")
        return stream

    def copy(self, dst, src, nbytes, stream):
        self.check(self.cu.cuMemcpyAsync(ctypes.c_uint64(dst),
                                         ctypes.c_uint64(src),
                                         ctypes.c_size_t(nbytes), stream),
                   "cuMemcpyAsync")

    def alloc(self, nbytes, fill):
        """Device memory (host memory on the null device) of `nbytes`,
        every byte `fill`; null for zero bytes, as a framework passes an
        empty tensor."""
        if nbytes == 0:
            return None
        pointer = ctypes.c_uint64()
        self.check(self.cu.cuMemAlloc_v2(ctypes.byref(pointer), nbytes),
                   "cuMemAlloc")
        self.allocations += 1
        ctypes.memset(pointer.value, fill, nbytes)
        return pointer.value


class Library:
    def __init__(self, directory):
        with open(os.path.join(directory, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.lib = ctypes.CDLL(os.path.join(directory,
                                            self.manifest["library"]))
        # A library of every shape runs at the shape CHECK_SHAPE gives.
        self.dynamic = self.manifest.get("dynamic") is True
        self.shape = tuple(int(n) for n in
                           os.environ["CHECK_SHAPE"].split(",")) \
            if self.dynamic else None
        functions = self.manifest["functions"]
        self.last_error = getattr(self.lib, functions["last_error"])
        self.last_error.restype = ctypes.c_char_p
        self.context_create = getattr(self.lib, functions["context_create"])
        self.context_create.argtypes = [ctypes.c_int32]
        self.context_create.restype = ctypes.c_void_p
        self.context_destroy = getattr(self.lib,
                                       functions["context_destroy"])
        self.context_destroy.argtypes = [ctypes.c_void_p]
        self.context_destroy.restype = ctypes.c_int32
        self._set_graph_replay = getattr(self.lib,
                                         functions["set_graph_replay"])
        self._set_graph_replay.argtypes = [ctypes.c_void_p, ctypes.c_int32]
        self._set_graph_replay.restype = ctypes.c_int32
        # The context calls use unless given one: device 0's, made at the
        # first call (loading the library touches no GPU).
        self.context = None

    def default_context(self):
        if self.context is None:
            self.context = self.context_create(0)
        return self.context

    def set_graph_replay(self, calls, context=None):
        return self._set_graph_replay(context or self.default_context(),
                                      calls)

    def sizes(self, kind, shape=None):
        """The bytes of each argument of entry `kind` (at `shape`, or the
        library's, for a library of every shape: its sizes entry
        point's)."""
        entry = self.manifest["entries"][kind]
        if not self.dynamic:
            return [math.prod(arg["shape"]) * DTYPE_BYTES[arg["dtype"]]
                    for arg in entry["args"]]
        sizes = getattr(self.lib, entry["sizes_symbol"])
        sizes.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        sizes.restype = ctypes.c_int32
        out = (ctypes.c_int64 * len(entry["args"]))()
        if sizes(*(shape or self.shape), out) != 0:
            raise SystemExit(f"{entry['sizes_symbol']} refused {shape}")
        return list(out)

    def buffers(self, device, kind):
        """One device buffer per argument of entry `kind`: inputs 0x3f
        (about 0.75), everything the entry writes poisoned (NaN)."""
        pointers = []
        for arg, nbytes in zip(self.manifest["entries"][kind]["args"],
                               self.sizes(kind)):
            fill = 0x01 if arg["dtype"] == "bool" else 0x3F
            if arg["role"] in ("output", "gradient", "saved", "scratch") and \
                    not (kind == "bwd" and arg["role"] == "saved"):
                fill = 0xFF
            pointers.append(device.alloc(nbytes, fill))
        return (ctypes.c_void_p * len(pointers))(*pointers)

    def with_short_output(self, device, kind, buffers):
        """`buffers` with the first output of entry `kind` replaced by 16
        bytes: the launch that writes it fails."""
        args = self.manifest["entries"][kind]["args"]
        y = next(i for i, arg in enumerate(args) if arg["role"] == "output")
        short = list(buffers)
        short[y] = device.alloc(16, 0xFF)
        return (ctypes.c_void_p * len(short))(*short)

    def written(self, kind, buffers):
        """(pointer, bytes) of the first output of entry `kind`."""
        sizes = self.sizes(kind)
        for i, arg in enumerate(self.manifest["entries"][kind]["args"]):
            if arg["role"] in ("output", "gradient"):
                return (buffers[i], sizes[i])
        raise SystemExit(f"{kind} has no output")

    def call(self, kind, buffers, stream, shape=None, context=None):
        """Calls entry `kind` with `context` (default: device 0's)."""
        entry = getattr(self.lib, self.manifest["entries"][kind]["symbol"])
        entry.restype = ctypes.c_int32
        context = context or self.default_context()
        if not self.dynamic:
            entry.argtypes = [ctypes.c_void_p] * 3
            return entry(context, buffers, stream)
        entry.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_void_p, ctypes.c_void_p]
        return entry(context, *(shape or self.shape), buffers, stream)


def capture(device, stream, calls):
    """Runs `calls` while the caller captures `stream`; launches the graph
    once and waits for it. Returns the calls' return codes."""
    device.check(device.cu.cuStreamBeginCapture_v2(
        stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture")
    codes = [call() for call in calls]
    graph = ctypes.c_void_p()
    device.check(device.cu.cuStreamEndCapture(stream, ctypes.byref(graph)),
                 "cuStreamEndCapture")
    executable = ctypes.c_void_p()
    device.check(device.cu.cuGraphInstantiateWithFlags(
        ctypes.byref(executable), graph, ctypes.c_ulonglong(0)),
        "cuGraphInstantiate")
    device.check(device.cu.cuGraphLaunch(executable, stream), "cuGraphLaunch")
    device.check(device.cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
    return codes
