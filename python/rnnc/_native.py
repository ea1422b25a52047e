"""The native files a self-contained wheel carries (tools/package/
make-wheel.py): `rnn-compile` linked statically, the runtime archives, its
link kit, OpenBLAS and libdevice, under `rnnc/_native`. A source install
has none of them.
"""

import ctypes
import os
import stat
import threading

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")
_COMPILER = os.path.join(ROOT, "bin", "rnn-compile")
# OpenBLAS and its Fortran runtime, in load order.
_BLAS = ("libquadmath.so.0", "libgfortran.so.5", "libopenblas.so.0")
_loaded = []
_lock = threading.Lock()


def compiler():
    """The wheel's `rnn-compile`, or None in a source install."""
    if not os.path.isfile(_COMPILER):
        return None
    mode = os.stat(_COMPILER).st_mode
    if not mode & stat.S_IXUSR:
        # An installer that dropped the executable bit.
        try:
            os.chmod(_COMPILER, mode | stat.S_IXUSR | stat.S_IXGRP |
                     stat.S_IXOTH)
        except OSError:
            return None
    return _COMPILER


def environment():
    """What the wheel's `rnn-compile` is run with: its runtime archives,
    link kit and libdevice (empty in a source install)."""
    if compiler() is None:
        return {}
    return {
        "RNNC_LINK_KIT": os.path.join(ROOT, "link"),
        "RNNC_RUNTIME_LIB": os.path.join(ROOT, "lib",
                                         "librnn_library_runtime.a"),
        "RNNC_CUDA_RUNTIME_LIB": os.path.join(
            ROOT, "lib", "librnn_library_cuda_runtime.a"),
        "RNNC_CUDA_TOOLKIT": os.path.join(ROOT, "cuda"),
    }


def load_blas():
    """Loads the wheel's OpenBLAS (globally, once) so that a library, which
    needs `libopenblas.so.0`, finds it already loaded; a no-op in a source
    install, where the system's is found by the loader."""
    if compiler() is None or _loaded:
        return
    with _lock:
        if _loaded:
            return
        for name in _BLAS:
            _loaded.append(ctypes.CDLL(os.path.join(ROOT, "link", name),
                                       mode=ctypes.RTLD_GLOBAL))
