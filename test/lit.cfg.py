# -*- Python -*-
# lit configuration of the rnnc tests: FileCheck tests of the passes
# (Dialect, Transforms, Conversion), the pipelines (Pipelines; GPU for the
# cuda target, whose PTX is assembled with ptxas), rnn-run integration tests
# against reference arrays (Integration), and the GoogleTest unit tests
# (Unit).

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "RNNC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "data", "Unit", "lit.cfg.py", "lit.site.cfg.py",
                   "CMakeLists.txt", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rnn_obj_root, "test")

llvm_config.with_system_environment(
    ["HOME", "TMP", "TEMP", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.rnn_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["rnn-opt", "rnn-run", "rnn-npz-compare", "rnn-compile"], [config.rnn_tools_dir])

# ptxas assembles emitted PTX without a GPU; `cuda` marks tests that run
# kernels and need a GPU with a driver.
ptxas = os.path.join(config.cuda_toolkit_root, "bin", "ptxas")
config.substitutions.append(
    ("%cuda_stub",
     os.path.join(config.cuda_toolkit_root, "lib64", "stubs", "libcuda.so")))
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
# The null CUDA device (test/lib/NullCuda): the driver and cuBLAS without a
# GPU, for the host path of --target=cuda.
nullcuda = os.path.join(config.rnn_obj_root, "lib", "libnullcuda.so")
if os.path.exists(nullcuda):
    config.available_features.add("nullcuda")
    config.substitutions.append(("%nullcuda", nullcuda))
config.substitutions.append(
    ("%rnn_unittests", os.path.join(config.rnn_obj_root, "unittests")))
# The cell table the build generates from RNNCells.td (tools/cells), and
# the include directories of the dialect's TableGen files.
config.substitutions.append(
    ("%rnn_cell_table", os.path.join(config.rnn_obj_root, "cells", "_cells.py")))
config.substitutions.append(
    ("%rnn_td_includes",
     "-I%s -I%s" % (os.path.join(config.test_source_root, "..", "include"),
                    os.path.join(config.llvm_tools_dir, "..", "include"))))
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi and subprocess.run([nvidia_smi, "-L"], capture_output=True).returncode == 0:
    config.available_features.add("cuda")

# The AddressSanitizer + UBSan build (RNN_SANITIZE).
if config.rnn_sanitize:
    config.available_features.add("sanitize")

# CPU features for the BLAS kernels the bitwise tests force with
# OPENBLAS_CORETYPE (Haswell needs AVX2 and FMA; SkylakeX AVX-512).
try:
    with open("/proc/cpuinfo") as f:
        cpu_flags = set(next((line.split(":", 1)[1].split() for line in f
                              if line.startswith("flags")), []))
except OSError:
    cpu_flags = set()
if {"avx2", "fma"} <= cpu_flags:
    config.available_features.add("cpu-avx2")
if {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"} <= cpu_flags:
    config.available_features.add("cpu-avx512")
