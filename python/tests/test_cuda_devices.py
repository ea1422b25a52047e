"""rnnc.library with a library compiled for the cuda target, on the null
CUDA device of the build tree (test/lib/NullCuda, `lib/libnullcuda.so`
beside `bin/rnn-compile`), standing in for two GPUs: one loaded library
serves both, through an object and a context per device.

The device is the CUDA driver of a child process (a process loads one
driver), which prints what it saw; the null device reports, on exit, the
kernels and GEMMs it ran per device and every use of a kernel, cuBLAS
handle, stream or buffer with another device's context current."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from rnnc import library
from rnnc._errors import RNNCError

CHILD = r"""
import ctypes, json, sys
from rnnc import library
from rnnc._errors import RNNCError

directory, nullcuda = sys.argv[1:]
cu = ctypes.CDLL(nullcuda)
assert cu.cuInit(0) == 0


def on_device(ordinal):
    # The device's primary context made current; a stream and buffers of
    # its own for `infer` (inputs 0x3f, about 0.75).
    device, context = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuDeviceGet(ctypes.byref(device), ordinal) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
    assert cu.cuCtxSetCurrent(context) == 0
    stream = ctypes.c_void_p()
    assert cu.cuStreamCreate(ctypes.byref(stream), 1) == 0
    lib = library.load(directory, ordinal)
    pointers = []
    for arg in lib["infer"].args:
        p = ctypes.c_uint64()
        assert cu.cuMemAlloc_v2(ctypes.byref(p), arg.nbytes) == 0
        ctypes.memset(p.value, 0x3F, arg.nbytes)
        pointers.append(p.value)
    return lib, stream.value, pointers


out = {}
first, second = on_device(0), on_device(1)
out["devices"] = [first[0].device, second[0].device]
out["same_library"] = first[0]._lib._handle == second[0]._lib._handle
out["distinct_objects"] = first[0] is not second[0]
for lib, stream, pointers in (first, second):
    lib["infer"].call(pointers, stream)
out["outputs_equal"] = all(
    ctypes.string_at(a, arg.nbytes) == ctypes.string_at(b, arg.nbytes)
    for arg, a, b in zip(first[0]["infer"].args, first[2], second[2]))
try:
    first[0]["infer"].call(first[2], second[1])
    out["mixed"] = "no error"
except RNNCError as e:
    out["mixed"] = str(e)
print(json.dumps(out))
"""


def null_cuda():
    """The build tree's null CUDA device."""
    path = os.path.join(os.path.dirname(library.find_compiler()), "..",
                        "lib", "libnullcuda.so")
    if not os.path.exists(path):
        pytest.skip("no null CUDA device (a build tree's lib/libnullcuda.so "
                    "beside bin/rnn-compile)")
    return os.path.realpath(path)


@pytest.fixture(scope="module")
def cuda_library():
    return library.compile_model("gru", 5, 3, 4, 6, 2, target="cuda",
                                 chip="sm_90")


def test_one_library_serves_two_devices(cuda_library, tmp_path):
    nullcuda = null_cuda()
    report = tmp_path / "report.json"
    env = dict(os.environ, RNNRT_LIBCUDA=nullcuda, RNNRT_LIBCUBLAS=nullcuda,
               NULLCUDA_DEVICES="2", NULLCUDA_REPORT=str(report))
    r = subprocess.run([sys.executable, "-c", CHILD, cuda_library.directory,
                        nullcuda], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    did = json.loads(r.stdout)
    seen = json.loads(report.read_text())
    assert did["devices"] == [0, 1]
    assert did["same_library"] and did["distinct_objects"]
    assert did["outputs_equal"]
    # The same work on each device, none of it with another's objects.
    assert seen["violations"] == 0 and seen["errors"] == 0, r.stderr
    for counts in ("launches_by_device", "gemms_by_device"):
        assert seen[counts]["0"] == seen[counts]["1"] > 0, seen
    # Device 0's object with a stream of device 1: refused, naming both.
    assert "belongs to another CUDA context than the rnnc context's " \
           "device (the primary context of device 0)" in did["mixed"]


def test_a_cuda_library_without_contexts_is_refused(cuda_library, tmp_path):
    """A cuda library whose manifest names no rnnc_context_create (one of
    an rnn-compile from before contexts, whose entry points take none, and
    which holds no copy of its manifest) is one clear error, not a call
    with the wrong arguments."""
    old = tmp_path / "old"
    shutil.copytree(cuda_library.directory, old)
    manifest = json.loads((old / "manifest.json").read_text())
    functions = manifest["functions"]
    del functions["context_create"], functions["context_destroy"]
    functions["set_device"] = "rnnc_set_device"
    (old / "manifest.json").write_text(json.dumps(manifest))
    so = old / "librnnc_model.so"
    so.write_bytes(so.read_bytes().replace(b"rnnc_manifest\0",
                                           b"rnnc_manifesX\0"))
    with pytest.raises(RNNCError, match=r"holds no manifest "
                       r"\(rnnc_manifest\): a library of an older "
                       r"rnn-compile; compile it again"):
        library.load(str(old))
