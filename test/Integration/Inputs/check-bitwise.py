"""Runs rnn-run under `none` and under every other remat policy, and checks
with `rnn-npz-compare --rtol=0` that outputs and gradients are bitwise
identical to `none`, and that inference gives the training forward's
outputs bitwise. Every policy issues the same GEMM calls (the kernels' GEMM
blocks do not depend on the policy), so this holds on any BLAS that is
deterministic for identical calls; the runs are repeated with GEMM blocks
of one step, of a few steps and of the default size, which changes the
calls. Chunked runs on reference inputs are also checked against the
PyTorch reference.

Usage: check-bitwise.py DATA_DIR TMP_DIR [--jobs=N] [RNN_RUN_FLAG...]
(e.g. --target=cuda). --jobs runs N cases at a time (default 1: on the CPU
each run already uses every core). Exits non-zero listing every
mismatch."""

import concurrent.futures
import os
import subprocess
import sys

# Reference inputs (case, sequence length): LSTM, GRU and MGU, 1 and 2 layers,
# random resets and a column that never resets, at both reference shapes
# (T=11, B=6, H=7: scalar loops only; T=9, B=5, H=21: vector loops and their
# remainder).
DATA_CASES = [("lstm_l1_random", 11), ("lstm_l2_nevercol", 11),
              ("lstm_l2_wide_random", 9), ("gru_l1_random", 11),
              ("gru_l2_nevercol", 11), ("gru_l2_wide_random", 9),
              ("mgu_l1_random", 11), ("mgu_l2_wide_random", 9)]

# Generated inputs: one batch column (B = 1, 2) with an input projection
# whose reduction has K >= 32, where a BLAS picks other kernels for other
# row counts, and a shape large enough for the regular GEMM kernels.
GEN_CASES = [
    ("gru", ["--seq-len=4", "--batch=1", "--input-size=32",
             "--hidden-size=1", "--layers=1"], 4),
    ("lstm", ["--seq-len=3", "--batch=1", "--input-size=32",
              "--hidden-size=128", "--layers=1"], 3),
    ("gru", ["--seq-len=7", "--batch=2", "--input-size=40",
             "--hidden-size=9", "--layers=2"], 7),
    ("lstm", ["--seq-len=13", "--batch=2", "--input-size=48",
              "--hidden-size=33", "--layers=2", "--reset-prob=0.2"], 13),
    ("lstm", ["--seq-len=32", "--batch=64", "--input-size=256",
              "--hidden-size=256", "--layers=1", "--reset-prob=0.05"], 32),
]

# GEMM rows the blocks aim for: one step per block, a few steps, the
# default (blocks of up to T steps on these small batches).
GEMM_ROWS = ["1", "12", "0"]


def policies(steps):
    # K = 1, K that does not divide T, K that does (T=9), K = T, K > T.
    return ["gates", "chunk:1", "chunk:3", "chunk:4", f"chunk:{steps}",
            "chunk:64"]


def main(data, tmp, extra):
    jobs = 1
    for flag in [f for f in extra if f.startswith("--jobs=")]:
        jobs = int(flag[len("--jobs="):])
        extra.remove(flag)
    failures = []

    def check(*args):
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(" ".join(args) + "\n" + r.stdout + r.stderr)

    cases = []
    for case, steps in DATA_CASES:
        cases.append((case, case.split("_")[0], steps,
                      [f"--inputs={os.path.join(data, case + '.in.npz')}"],
                      os.path.join(data, case + ".ref.npz")))
    for i, (cell, flags, steps) in enumerate(GEN_CASES):
        cases.append((f"gen{i}_{cell}", cell, steps,
                      flags + ["--seed=5", "--iters=1", "--warmup=0"], None))

    def check_case(name, cell, steps, inputs, ref):
        for rows in GEMM_ROWS:
            tag = f"{name}.rows{rows}"
            run = ["rnn-run", f"--preset={cell}", f"--gemm-rows={rows}",
                   *inputs, *extra]
            none = os.path.join(tmp, tag + ".none.npz")
            check(*run, "--remat=none", f"--outputs={none}")
            infer = os.path.join(tmp, tag + ".infer.npz")
            check(*run, "--mode=infer", f"--outputs={infer}")
            check("rnn-npz-compare", none, infer, "--rtol=0")
            for policy in policies(steps):
                out = os.path.join(tmp, f"{tag}.{policy.replace(':', '')}.npz")
                check(*run, f"--remat={policy}", f"--outputs={out}")
                check("rnn-npz-compare", out, none, "--rtol=0")
                if policy == "chunk:3" and ref:
                    check("rnn-npz-compare", out, ref, "--rtol=1e-4")
        return (f"{name} checked against {', '.join(policies(steps))} and "
                f"infer, with gemm-rows {', '.join(GEMM_ROWS)}")

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for line in pool.map(lambda c: check_case(*c), cases):
            print(line, flush=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
