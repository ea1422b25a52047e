"""Checks the dropout mask of Inputs/dropout-mask.mlir (x_dropped =
rnn.dropout(x), p = 0.3, layer 2, 2^20 elements) as compiled:

  * the dropped fraction is within 3 sigma of p (sigma = sqrt(p (1 - p) / n));
  * every kept element is x * float32(1 / (1 - p)), bitwise;
  * sampled elements (every 251st) are dropped exactly where an independent
    Philox4x32-10 (philox.py, checked on Random123's known answers) says
    so;
  * another offset or another seed gives another mask: the fraction of
    elements whose fate changes is within 3 sigma of 2 p (1 - p);
  * the training masks are identical under every remat policy;
  * inference drops nothing (x_dropped == x) and reads no rng (its inputs
    have none).

Usage: check-dropout-mask.py MODEL.mlir TMP_DIR [RNN_RUN_FLAG...]
"""

import math
import os
import struct
import subprocess
import sys

from npzlite import read_npz, write_npz
from philox import check_known_answers, dropped

P, LAYER = 0.3, 2
T, B, I, H = 64, 128, 128, 1
SEED = 0x00C0FFEE12345678
def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def main(model, tmp, flags):
    failures = []
    for c, k in check_known_answers():
        failures.append(f"Philox known answer {c} {k} not reproduced")
    os.makedirs(tmp, exist_ok=True)
    n = T * B * I
    x = [float((i % 7) + 1) for i in range(n)]

    def inputs(path, seed, offset, infer):
        arrays = {
            "x": ("<f4", (T, B, I), x),
            "is_init": ("|b1", (T, B), [False] * (T * B)),
            "rng": ("<i8", (2,), [seed, offset]),
            "h0": ("<f4", (B, H), [0.0] * B), "c0": ("<f4", (B, H), [0.0] * B),
            "weight_ih_l0": ("<f4", (4 * H, I), [0.01] * (4 * H * I)),
            "weight_hh_l0": ("<f4", (4 * H, H), [0.0] * (4 * H * H)),
            "bias_ih_l0": ("<f4", (4 * H,), [0.0] * (4 * H)),
            "bias_hh_l0": ("<f4", (4 * H,), [0.0] * (4 * H)),
            "grad_y": ("<f4", (T, B, H), [1.0] * (T * B * H)),
            "grad_x_dropped": ("<f4", (T, B, I), [1.0] * n)}
        if infer:
            for name in ("rng", "grad_y", "grad_x_dropped"):
                del arrays[name]
        write_npz(path, arrays)
        return path

    def run(tag, seed, offset, *extra):
        out = os.path.join(tmp, tag + ".out.npz")
        args = ["rnn-run", model, "--iters=1", "--warmup=0",
                "--inputs=" + inputs(os.path.join(tmp, tag + ".in.npz"),
                                     seed, offset, "--mode=infer" in extra),
                "--outputs=" + out, *extra, *flags]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(" ".join(args) + "\n" + r.stdout + r.stderr)
        return read_npz(out)["x_dropped"][2]

    base = run("base", SEED, 0)
    drop = [v == 0.0 for v in base]
    sigma = math.sqrt(P * (1 - P) / n)
    fraction = sum(drop) / n
    print(f"dropped {sum(drop)} of {n}: {fraction:.5f} "
          f"(p = {P}, 3 sigma = {3 * sigma:.5f})")
    if abs(fraction - P) > 3 * sigma:
        failures.append(f"dropped fraction {fraction} not within 3 sigma of {P}")
    scale = f32(1.0 / (1.0 - P))
    wrong = [i for i in range(n) if not drop[i] and base[i] != f32(x[i] * scale)]
    if wrong:
        failures.append(f"{len(wrong)} kept elements are not x / (1 - p), "
                        f"first at {wrong[0]}: {base[wrong[0]]}")
    sample = range(0, n, 251)
    differ = [i for i in sample if drop[i] != dropped(i, P, LAYER, SEED, 0)]
    print(f"{len(sample)} sampled elements vs Philox: {len(differ)} differ")
    if differ:
        failures.append(f"the mask differs from Philox at elements {differ[:5]}")

    expected = 2 * P * (1 - P)
    for tag, seed, offset in (("offset", SEED, 1), ("seed", SEED + 1, 0)):
        other = [v == 0.0 for v in run(tag, seed, offset)]
        changed = sum(a != b for a, b in zip(drop, other)) / n
        print(f"another {tag}: {changed:.5f} of the elements change "
              f"(expected {expected:.2f})")
        if abs(changed - expected) > 3 * math.sqrt(expected * (1 - expected) / n):
            failures.append(f"another {tag} changes {changed} of the mask")

    for policy in ("gates", "chunk:5"):
        if run(policy, SEED, 0, "--remat=" + policy) != base:
            failures.append(f"--remat={policy} gives another mask")
    if run("infer", SEED, 0, "--mode=infer") != x:
        failures.append("inference drops elements")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
