# Sourced on the GPU machine from the repository root, with the bundle
# carried as .gpu (gpu/make-bundle.sh BUILD .gpu):
#
#   source .gpu/unpack.sh
#
# Expands rnn-run and rnn-compile into /tmp/rnnc (not into the carried tree),
# puts the tools on PATH and the bundle's libraries on LD_LIBRARY_PATH, and points rnn-run at
# the bundle's libdevice when the machine's toolkit has none. rnn-run finds
# cuBLAS itself (the loader's, the toolkit's, or an installed PyTorch's
# NVIDIA wheels).
G=$(pwd)/.gpu
D=/tmp/rnnc
rm -rf $D
mkdir -p $D/bin $D/lib
cp "$G/bin/rnn-npz-compare" "$G"/bin/*.xz $D/bin/
cp "$G"/lib/*.so* "$G"/lib/*.a $D/lib/
python3 - "$D" <<'PY'
import glob, lzma, os, shutil, sys
for packed in glob.glob(os.path.join(sys.argv[1], '*', '*.xz')):
    with lzma.open(packed) as f, open(packed[:-3], 'wb') as o:
        shutil.copyfileobj(f, o)
    os.remove(packed)
PY
chmod +x $D/bin/* "$G"/unittests/*
export PATH=$D/bin:$PATH
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# rnn-compile links libraries from the bundle's runtime archives, and a cpu
# library against the bundle's OpenBLAS (found through LIBRARY_PATH).
ln -sf libopenblas.so.0 $D/lib/libopenblas.so
export LIBRARY_PATH=$D/lib${LIBRARY_PATH:+:$LIBRARY_PATH}
export RNNC_RUNTIME_LIB=$D/lib/librnn_library_runtime.a
export RNNC_CUDA_RUNTIME_LIB=$D/lib/librnn_library_cuda_runtime.a
export RNNC_COMPILE=$D/bin/rnn-compile
if [ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc ]; then
  export RNNC_CUDA_TOOLKIT=$G/cuda
fi
echo "rnnc bundle: $(command -v rnn-run); toolkit ${RNNC_CUDA_TOOLKIT:-/usr/local/cuda}"
