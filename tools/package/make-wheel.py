#!/usr/bin/env python3
"""Builds rnnc's self-contained wheel from a built tree.

    tools/package/make-wheel.py BUILD_DIR OUT_DIR

The wheel holds the `rnnc` Python package and, in `rnnc/_native`, what it
needs to compile and run libraries on a machine with nothing but glibc
(2.35 or newer) and Python:

    bin/rnn-compile     linked statically against LLVM/MLIR/LLD
                        (tools/package/link-static.sh)
    lib/                the rnnc runtime archives (CPU and CUDA)
    link/               rnn-compile's link kit (C runtime objects, static
                        C++ runtime, the shims) and OpenBLAS with its
                        Fortran runtime, which the package loads before a
                        library
    cuda/nvvm/libdevice the CUDA math library the cuda target links

rnn-compile links a library with LLD in its own process from the kit and
the running glibc, so no C/C++ toolchain is needed at run time. The wheel
is tagged py3-none-manylinux_2_35_x86_64: it holds no Python extension, and
glibc 2.35 is the floor of both rnn-compile and the libraries it links
(the kit's libgcc_eh calls _dl_find_object). Prints the wheel's path and
size.
"""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

PLATFORM = "manylinux_2_35_x86_64"
CUDA = os.environ.get("CUDA_TOOLKIT_ROOT", "/usr/local/cuda")
MULTIARCH = "/usr/lib/x86_64-linux-gnu"
# OpenBLAS and what it needs, in load order.
BLAS = ("libquadmath.so.0", "libgfortran.so.5", "libopenblas.so.0")


def stage(build, repo, root):
    """The package source with its native files, under `root`."""
    src = os.path.join(root, "src")
    shutil.copytree(os.path.join(repo, "python"), src,
                    ignore=shutil.ignore_patterns(
                        "build", "*.egg-info", "__pycache__", "tests"))
    native = os.path.join(src, "rnnc", "_native")
    for sub in ("bin", "lib", "link", "cuda/nvvm/libdevice"):
        os.makedirs(os.path.join(native, sub))
    subprocess.run([os.path.join(repo, "tools", "package", "link-static.sh"),
                    build, os.path.join(native, "bin"), "rnn-compile"],
                   check=True)
    for archive in ("librnn_library_runtime.a",
                    "librnn_library_cuda_runtime.a"):
        shutil.copy(os.path.join(build, "runtime", archive),
                    os.path.join(native, "lib"))
    kit = os.path.join(build, "lib", "rnnc-link")
    for name in sorted(os.listdir(kit)):
        if name not in BLAS:
            shutil.copy(os.path.join(kit, name), os.path.join(native, "link"))
    for name in BLAS:
        copy = os.path.join(native, "link", name)
        shutil.copy(os.path.join(MULTIARCH, name), copy)
        # Each finds the others beside it.
        subprocess.run(["patchelf", "--set-rpath", "$ORIGIN", copy],
                       check=True)
    shutil.copy(os.path.join(CUDA, "nvvm", "libdevice", "libdevice.10.bc"),
                os.path.join(native, "cuda", "nvvm", "libdevice"))
    # rnnc.jax's FFI handler, where the build found a jaxlib to build it
    # against (without it rnnc.jax names the missing library).
    handler = os.path.join(build, "lib", "librnnc_jax.so")
    if os.path.exists(handler):
        shutil.copy(handler, os.path.join(native, "lib"))
    else:
        print(f"make-wheel.py: no {handler}: the wheel's rnnc.jax will "
              f"refuse to run", file=sys.stderr)
    return src


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "sha256=" + digest.rstrip(b"=").decode()


def retag(wheel, out_dir):
    """A copy of the pure-Python `wheel` tagged for the platform (not pure:
    it carries native files), written into out_dir; returns its path."""
    name, version = os.path.basename(wheel).split("-")[:2]
    tag = f"py3-none-{PLATFORM}"
    target = os.path.join(out_dir, f"{name}-{version}-{tag}.whl")
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zin, \
            zipfile.ZipFile(target + ".tmp", "w", zipfile.ZIP_DEFLATED) as zout:
        records = []
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == f"{info}/WHEEL":
                lines = [line for line in data.decode().splitlines()
                         if not line.startswith(("Tag:", "Root-Is-Purelib:"))]
                lines += ["Root-Is-Purelib: false", f"Tag: {tag}"]
                data = ("\n".join(lines) + "\n").encode()
            if item.filename == f"{info}/RECORD":
                continue
            zout.writestr(item, data)
            records.append(f"{item.filename},{record_hash(data)},{len(data)}")
        records.append(f"{info}/RECORD,,")
        zout.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    os.replace(target + ".tmp", target)
    return target


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make-wheel.py BUILD_DIR OUT_DIR")
    build, out = (os.path.abspath(p) for p in sys.argv[1:])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as root:
        src = stage(build, repo, root)
        pure = os.path.join(root, "pure")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q",
                        "--no-deps", "--no-build-isolation", "-w", pure, src],
                       check=True)
        built, = os.listdir(pure)
        wheel = retag(os.path.join(pure, built), out)
    print(f"{wheel}: {os.path.getsize(wheel) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
