"""Checks an f64 training step's gradients against central finite
differences of its loss, computed from inference runs on perturbed inputs.

The training function's loss is L = sum(y * grad_y) + sum(h_n * grad_h_n)
(+ sum(c_n * grad_c_n) for the LSTM), with the cotangents grad_* from the
inputs file. For ENTRIES entries of every float input array (x, the initial
states, every weight and bias: the first, the last and ones in between),
the input is moved by +-EPS, the inference step recomputes y and the final
states, and (L+ - L-) / (2 EPS) must match the training step's gradient
entry to within TOL * (1 + |gradient|). In float64 the difference is exact
to about 1e-9 here, far below what a wrong gradient gives.

Usage: check-finite-differences.py CELL INPUTS.f64.npz TMP_DIR
           [--entries=N] [--eps=E] [--tol=T] [RNN_RUN_FLAG...]
The rnn-run flags (a remat policy, say) go to the training run, but
--reset-to, which changes the model, goes to every run. Reads and
writes .npz files without numpy. Exits non-zero listing every
entry that disagrees.
"""

import os
import subprocess
import sys

from npzlite import read_npz, write_npz


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(" ".join(args) + "\n" + r.stdout + r.stderr)


def loss(outputs, cotangents):
    total = 0.0
    for name, (_, _, values) in outputs.items():
        grad = cotangents.get("grad_" + name)
        if grad is None:
            continue
        total += sum(v * g for v, g in zip(values, grad[2]))
    return total


def main(cell, inputs_path, tmp, extra):
    entries, eps, tol = 3, 1e-6, 1e-7
    flags = []
    base = ["rnn-run", f"--preset={cell}", "--dtype=f64", "--iters=1",
            "--warmup=0"]
    for flag in extra:
        if flag.startswith("--entries="):
            entries = int(flag.split("=", 1)[1])
        elif flag.startswith("--eps="):
            eps = float(flag.split("=", 1)[1])
        elif flag.startswith("--tol="):
            tol = float(flag.split("=", 1)[1])
        elif flag.startswith("--reset-to="):
            base.append(flag)  # the model itself: every run
        else:
            flags.append(flag)
    os.makedirs(tmp, exist_ok=True)

    inputs = read_npz(inputs_path)
    cotangents = {k: v for k, v in inputs.items() if k.startswith("grad_")}
    forward = {k: v for k, v in inputs.items() if not k.startswith("grad_")}
    trained = os.path.join(tmp, "train.npz")
    run(base + flags + ["--mode=train", f"--inputs={inputs_path}",
                        f"--outputs={trained}"])
    gradients = read_npz(trained)

    failures, checked, worst = [], 0, 0.0
    perturbed = os.path.join(tmp, "perturbed.npz")
    outputs = os.path.join(tmp, "infer.npz")
    for name, (descr, shape, values) in sorted(forward.items()):
        if descr != "<f8":
            continue
        grad = gradients["grad_" + name][2]
        n = len(values)
        picks = sorted({round(i * (n - 1) / max(entries - 1, 1))
                        for i in range(entries)})
        for i in picks:
            side = []
            for sign in (1, -1):
                moved = list(values)
                moved[i] += sign * eps
                arrays = dict(forward)
                arrays[name] = (descr, shape, moved)
                write_npz(perturbed, arrays)
                run(base + ["--mode=infer", f"--inputs={perturbed}",
                            f"--outputs={outputs}"])
                side.append(loss(read_npz(outputs), cotangents))
            fd = (side[0] - side[1]) / (2 * eps)
            checked += 1
            error = abs(fd - grad[i]) / (1 + abs(grad[i]))
            worst = max(worst, error)
            if error > tol:
                failures.append(f"grad_{name}[{i}]: training step {grad[i]!r}, "
                                f"finite difference {fd!r}")
    print(f"{cell}: {checked} entries of {len(forward) - 1} arrays against "
          f"central differences (eps {eps:g}): worst |fd - grad| / "
          f"(1 + |grad|) = {worst:.1e} (tolerance {tol:g})")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
