# Sourced on the GPU machine from the repository root, with the bundle
# carried as .gpu (gpu/make-bundle.sh BUILD .gpu):
#
#   source .gpu/unpack.sh
#
# Expands rnn-run and rnn-compile into /tmp/rnnc (not into the carried tree),
# puts the tools on PATH and the bundle's libraries on LD_LIBRARY_PATH, and points rnn-run at
# the bundle's libdevice when the machine's toolkit has none. rnn-run finds
# cuBLAS itself (the loader's, the toolkit's, or an installed PyTorch's
# NVIDIA wheels). The bundle's wheels (TorchRL and tensordict, for the
# triton peer of bench/gpu_vs_cudnn.py) are unzipped into /tmp/rnnc/py,
# which goes on PYTHONPATH: torchrl without its C++ extension (built for
# one Python and one PyTorch; its recurrent modules do not use it),
# tensordict's wheel for this Python, and pyvers, cloudpickle, packaging
# only where this Python lacks them. Nothing is installed into the
# machine's Python.
G=$(pwd)/.gpu
D=/tmp/rnnc
rm -rf $D
mkdir -p $D/bin $D/lib/zip $D/link
cp "$G/bin/rnn-npz-compare" "$G"/bin/*.xz $D/bin/
cp "$G"/lib/*.so* "$G"/lib/*.a $D/lib/
cp "$G"/lib/zip/* $D/lib/zip/
cp "$G"/link/*.xz $D/link/
python3 - "$D" <<'PY'
import glob, lzma, os, shutil, sys
for packed in glob.glob(os.path.join(sys.argv[1], '**', '*.xz'),
                        recursive=True):
    with lzma.open(packed) as f, open(packed[:-3], 'wb') as o:
        shutil.copyfileobj(f, o)
    os.remove(packed)
PY
chmod +x $D/bin/* "$G"/unittests/*
export PATH=$D/bin:$PATH
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# rnn-compile links libraries in process from the bundle's runtime archives
# and link kit, a cpu library against the bundle's OpenBLAS.
ln -sf ../lib/libopenblas.so.0 $D/link/libopenblas.so.0
export RNNC_LINK_KIT=$D/link
export RNNC_RUNTIME_LIB=$D/lib/librnn_library_runtime.a
export RNNC_CUDA_RUNTIME_LIB=$D/lib/librnn_library_cuda_runtime.a
export RNNC_COMPILE=$D/bin/rnn-compile
if ls "$G"/wheels/*.whl >/dev/null 2>&1; then
  python3 - "$G/wheels" "$D/py" <<'PY' || true
import glob, importlib.util, os, sys, zipfile
src, dst = sys.argv[1:]
tag = "cp%d%d" % sys.version_info[:2]
wheels = glob.glob(os.path.join(src, "*.whl"))


def wheel(name, tag=None):
    found = [w for w in wheels if os.path.basename(w).startswith(name + "-")
             and (tag is None or "-%s-" % tag in os.path.basename(w))]
    return found[0] if found else None


def unzip(path, package=None, skip_so=False):
    """The wheel's files (only those of `package` and its dist-info, if
    given; no .so with skip_so) into dst."""
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            top = n.split("/")[0]
            if package and top != package and \
                    not top.startswith(package + "-"):
                continue
            if not (skip_so and n.endswith(".so")):
                z.extract(n, dst)


trl, td = wheel("torchrl"), wheel("tensordict", tag)
if trl is None or td is None:
    print("unpack.sh: warning: no %s wheel for this Python (%s) in %s: "
          "bench/gpu_vs_cudnn.py runs without its triton peer"
          % ("torchrl" if trl is None else "tensordict", tag, src))
    sys.exit(0)
os.makedirs(dst, exist_ok=True)
unzip(trl, "torchrl", skip_so=True)
unzip(td, "tensordict")
added = [os.path.basename(trl), os.path.basename(td)]
for name in ("pyvers", "cloudpickle", "packaging"):
    w = wheel(name)
    if w is not None and importlib.util.find_spec(name) is None:
        unzip(w)
        added.append(os.path.basename(w))
print("unpack.sh: on PYTHONPATH from %s: %s" % (dst, ", ".join(added)))
PY
  if [ -d $D/py ]; then
    export PYTHONPATH=$D/py${PYTHONPATH:+:$PYTHONPATH}
  fi
fi
if [ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then
  export RNNC_CUDA_TOOLKIT=$G/cuda
fi
echo "rnnc bundle: $(command -v rnn-run); toolkit ${RNNC_CUDA_TOOLKIT:-/usr/local/cuda}"
