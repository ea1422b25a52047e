#!/usr/bin/env bash
# Checks rnnc's wheel (tools/package/make-wheel.py) the way a user without
# the project's build gets it:
#
#   tools/package/test-wheel.sh WHEEL
#
# * installed into a fresh virtual environment (PyTorch from the system's
#   site-packages, nothing from the source tree);
# * run in a mount namespace where LLVM/MLIR (/usr/lib/llvm-22) and GCC's
#   libraries (/usr/lib/gcc) are empty and PATH holds no C/C++ compiler, so
#   that rnn-compile and its libraries can use nothing but the wheel and
#   glibc (without namespaces, where `unshare` is refused, the run says so
#   and relies on PATH and ldd);
# * the README's training example compiles its library with the wheel's
#   rnn-compile, runs, and matches torch.nn (`check` below), first and
#   cached call timed;
# * rnnc.jax (JAX from the system's site-packages) runs the same model
#   through the wheel's FFI handler, jitted (and vmapped over two seeds'
#   weights, a grouped call), and matches rnnc.torch;
# * a second, unprivileged account (uid 65534, its own HOME) runs it again
#   from the same cache without compiling (the entries are unchanged), a
#   new sequence length from the same library, and a new model there, in
#   the shared cache it cannot write, compiles into its own fallback cache
#   with one warning.
set -euo pipefail
WHEEL=$(realpath "$1")
REPO=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"

python3 -m venv --system-site-packages "$W/venv"
"$W/venv/bin/python" -m pip install -q --no-deps --ignore-installed "$WHEEL"
NATIVE=$("$W/venv/bin/python" -c 'import os, rnnc; print(os.path.join(os.path.dirname(rnnc.__file__), "_native"))')
case $NATIVE in
  "$W"/venv/*) ;;
  *) echo "FAIL: rnnc imports from $NATIVE, not the wheel"; exit 1 ;;
esac
if ldd "$NATIVE/bin/rnn-compile" | grep -E 'llvm|MLIR|not found'; then
  echo "FAIL: the wheel's rnn-compile needs a library the wheel does not carry"
  exit 1
fi

# The README's example, then a check against torch.nn with the trained
# weights; prints the first and the cached call's time.
sed -n '/^```python$/,/^```$/p' "$REPO/README.md" |
  awk '/^```python$/{n++; if (found) exit} n && /^import torch, rnnc.torch$/{found=1} found && !/^```/' \
  > "$W/example.py"
cat >> "$W/example.py" <<'EOF'
import sys, time
x = torch.randn(T, B, 8)
reference = torch.nn.LSTM(8, 32, 2)
reference.load_state_dict(lstm.state_dict())
with torch.no_grad():
    err = (lstm(x)[0] - reference(x)[0]).abs().max().item()
assert err < 1e-5, err
start = time.perf_counter()
lstm(x)
print(f"example: trained, matches torch.nn to {err:.1e}; cached call "
      f"{1e3 * (time.perf_counter() - start):.2f} ms")
if len(sys.argv) > 1:
    # A sequence length not called before: the library serves every shape.
    start = time.perf_counter()
    lstm(torch.randn(int(sys.argv[1]), B, 8))
    print(f"new sequence length: ran in "
          f"{time.perf_counter() - start:.2f} s")
    # A model the cache does not hold yet.
    start = time.perf_counter()
    rnnc.torch.LSTM(8, 24, 2)(x)
    print(f"new model: compiled and ran in "
          f"{time.perf_counter() - start:.2f} s")
EOF
chmod 644 "$W/example.py"
# rnnc.jax through the wheel's FFI handler, against rnnc.torch on the
# same weights and resets.
cat > "$W/jax-example.py" <<'EOF'
import jax, jax.numpy as jnp, numpy as np, torch
import rnnc.jax, rnnc.torch
params = rnnc.jax.init_params(jax.random.PRNGKey(0), "lstm", 8, 32, 2)
x = jax.random.normal(jax.random.PRNGKey(1), (16, 4, 8))
is_init = jnp.zeros((16, 4), bool).at[5, 1].set(True)
state = (jnp.zeros((2, 4, 32)), jnp.zeros((2, 4, 32)))
y, _ = jax.jit(lambda *a: rnnc.jax.rnn(*a, cell="lstm"))(
    params, x, is_init, state)
lstm = rnnc.torch.LSTM(8, 32, 2)
lstm.load_state_dict({k: torch.tensor(np.asarray(v))
                      for k, v in params.items()})
with torch.no_grad():
    y_torch, _ = lstm(torch.tensor(np.asarray(x)),
                      is_init=torch.tensor(np.asarray(is_init)))
err = float(np.abs(np.asarray(y) - y_torch.numpy()).max())
assert err < 1e-6, err
# Two seeds' weights under vmap, one grouped call: the first is y.
two = jax.tree_util.tree_map(lambda a: jnp.stack([a, 2 * a]), (params, x))
y2 = jax.jit(jax.vmap(lambda p, x: rnnc.jax.rnn(
    p, x, is_init, state, cell="lstm")[0]))(*two)
assert np.array_equal(np.asarray(y2[0]), np.asarray(y))
print(f"jax example: the wheel's FFI handler runs, matches rnnc.torch to "
      f"{err:.1e}, and runs a grouped call")
EOF
chmod 644 "$W/jax-example.py"
mkdir -m 755 "$W/cache" "$W/bin"
mkdir -m 700 "$W/home-root"
mkdir -m 700 "$W/home-other" && chown 65534:65534 "$W/home-other"
ln -s "$(command -v env)" "$W/bin/env"
SETPRIV=$(command -v setpriv)

cat > "$W/run.sh" <<EOF
set -euo pipefail
# The examples' PATH: the environment's Python and nothing else.
USER_PATH=$W/venv/bin:$W/bin
export RNNC_CACHE_DIR=$W/cache
unset RNNC_COMPILE RNNC_LINK_KIT RNNC_RUNTIME_LIB RNNC_CUDA_RUNTIME_LIB \
  RNNC_CUDA_TOOLKIT LD_LIBRARY_PATH LIBRARY_PATH CXX CC
for compiler in cc c++ gcc g++ clang ld; do
  if PATH=\$USER_PATH command -v \$compiler >/dev/null; then
    echo "FAIL: \$compiler is on PATH"; exit 1
  fi
done
TIMEFORMAT='the example, its compile included: %R s'
time env PATH=\$USER_PATH HOME=$W/home-root python $W/example.py
env PATH=\$USER_PATH HOME=$W/home-root python $W/jax-example.py
ls -l --time-style=+%s.%N $W/cache > $W/cache-before.txt
$SETPRIV --reuid=65534 --regid=65534 --clear-groups \
  env PATH=\$USER_PATH HOME=$W/home-other TMPDIR=$W/home-other \
  python -W always $W/example.py 5 \
  2> $W/other.err
cat $W/other.err >&2
ls -l --time-style=+%s.%N $W/cache > $W/cache-after.txt
cmp $W/cache-before.txt $W/cache-after.txt ||
  { echo "FAIL: the second account changed the shared cache"; exit 1; }
[ "\$(grep -c RNNC_CACHE_DIR $W/other.err)" = 1 ] ||
  { echo "FAIL: expected one warning naming RNNC_CACHE_DIR"; exit 1; }
EOF
# A Python installed in root's home (pyenv) is out of the second
# account's reach behind /root's mode 0700: in the namespace /root shows
# only that installation, traversable.
BASE=$(python3 -c 'import sys; print(sys.base_prefix)')
SHOW_ROOT=""
case $BASE in
  /root/*)
    TOP=/root/$(echo "${BASE#/root/}" | cut -d/ -f1)
    SHOW_ROOT="mkdir -m 755 $W/root-view $W/root-view/${TOP#/root/}
      mount --bind $TOP $W/root-view/${TOP#/root/}
      mount --rbind $W/root-view /root" ;;
esac
if unshare -m --propagation private true 2>/dev/null; then
  unshare -m --propagation private bash -c "
    set -e
    mkdir -p $W/empty
    mount --bind $W/empty /usr/lib/llvm-22
    mount --bind $W/empty /usr/lib/gcc
    $SHOW_ROOT
    bash $W/run.sh"
else
  echo "test-wheel.sh: no mount namespace here; LLVM and GCC stay visible" \
       "(PATH holds no compiler, ldd shows no LLVM)"
  bash "$W/run.sh"
fi
echo "tools/package/test-wheel.sh: ok ($(du -m "$WHEEL" | cut -f1) MiB wheel)"
