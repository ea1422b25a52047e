#!/usr/bin/env bash
# Puts the wheels of TorchRL's peer in bench/gpu_vs_cudnn.py (TorchRL
# 0.14.1's recurrent_backend="triton") into DIR, for a GPU machine that has
# PyTorch but no package registry (gpu/make-bundle.sh calls it; gpu/unpack.sh
# puts them on PYTHONPATH there):
#
#   gpu/fetch-wheels.sh DIR
#
# * torchrl 0.14.1, one wheel (about 3.4 MB): its Python files are the same
#   for every Python; unpack.sh leaves out its C++ extension (replay
#   buffers; the recurrent modules do not use it);
# * tensordict 0.14.3 (the version torchrl 0.14.1 asks for), one wheel per
#   CPython 3.10 to 3.14 (0.6 MB each: it has a compiled part);
# * pyvers, cloudpickle, packaging (pure Python, small), which torchrl and
#   tensordict import and a machine with PyTorch may lack.
# Downloaded with `pip download --no-deps` into a cache
# ($RNNC_WHEEL_CACHE, default build/gpu-wheels), so that a second bundle
# needs no network. Exit 0 with DIR filled; otherwise (no pip, no index in
# reach: at the first download that fails, within a minute) a warning on
# stderr, no wheel in DIR, and exit 1 (make-bundle.sh then packs without
# them).
set -uo pipefail
DIR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${RNNC_WHEEL_CACHE:-$HERE/../build/gpu-wheels}
mkdir -p "$DIR" "$CACHE"
rm -f "$DIR"/*.whl

TORCHRL=torchrl==0.14.1
TENSORDICT=tensordict==0.14.3
PURE=(pyvers==0.2.3 cloudpickle packaging)
PYTHONS=(3.10 3.11 3.12 3.13 3.14)
PLATFORM=manylinux_2_28_x86_64

warn() { echo "gpu/fetch-wheels.sh: warning: $*" >&2; }

# Into the cache unless it holds it: the wheel of distribution $1 (a
# pattern: NAME-VERSION) for wheel tag $2 (cp311, py3), by pip download
# with the remaining arguments. A failure ends the script: with no index in
# reach, each further try would only wait again.
need() {
  local name=$1 tag=$2
  shift 2
  [ -n "$(cached "$name" "$tag")" ] && return 0
  local err
  if ! err=$(timeout 60 python3 -m pip download -q --no-deps \
      --disable-pip-version-check --timeout 15 --retries 0 -d "$CACHE" \
      "$@" 2>&1 >/dev/null) || [ -z "$(cached "$name" "$tag")" ]; then
    warn "pip download ${*: -1} failed ($(echo "$err" | grep -v '^ *$' |
      tail -1 | cut -c1-200)); the bundle goes without the TorchRL wheels" \
      "and bench/gpu_vs_cudnn.py runs without its triton peer. Put the" \
      "wheels into $CACHE (gpu/fetch-wheels.sh on a machine with network," \
      "RNNC_WHEEL_CACHE=DIR) to bundle them offline."
    rm -f "$DIR"/*.whl
    exit 1
  fi
}

# The cache's wheel of distribution $1 (NAME-VERSION or NAME) for wheel tag
# $2, if any.
cached() {
  ls "$CACHE"/$1-*-$2-*.whl 2>/dev/null | head -1
}

if ! python3 -m pip --version >/dev/null 2>&1; then
  warn "no pip for python3: the bundle goes without the TorchRL wheels"
  exit 1
fi
# torchrl: the wheel for CPython 3.11 (any would do; see above).
need torchrl-0.14.1 cp311 --only-binary=:all: --platform $PLATFORM \
  --python-version 3.11 "$TORCHRL"
for v in "${PYTHONS[@]}"; do
  need tensordict-0.14.3 "cp${v/./}" --only-binary=:all: \
    --platform $PLATFORM --python-version "$v" "$TENSORDICT"
done
for p in "${PURE[@]}"; do
  need "${p%%=*}" py3 "$p"
done
cp "$(cached torchrl-0.14.1 cp311)" "$DIR/"
for v in "${PYTHONS[@]}"; do
  cp "$(cached tensordict-0.14.3 "cp${v/./}")" "$DIR/"
done
for p in "${PURE[@]}"; do
  cp "$(cached "${p%%=*}" py3)" "$DIR/"
done
echo "gpu/fetch-wheels.sh: $(ls "$DIR"/*.whl | wc -l) wheels," \
  "$(du -sk "$DIR" | cut -f1) KiB in $DIR"
