"""Runs rnn-run on reference inputs under `none` and under every other remat
policy, and checks with `rnn-npz-compare --rtol=0` that outputs and
gradients are bitwise identical to `none`; the chunked runs are also checked
against the PyTorch reference. Usage: check-bitwise.py DATA_DIR TMP_DIR
[RNN_RUN_FLAG...] (e.g. --target=cuda). Exits non-zero listing every
mismatch."""

import os
import subprocess
import sys

# (case, sequence length): LSTM and GRU, 1 and 2 layers, random resets and
# a column that never resets, at both reference shapes (T=11, H=7: scalar
# loops only; T=9, H=21: vector loops and their remainder).
CASES = [("lstm_l1_random", 11), ("lstm_l2_nevercol", 11),
         ("lstm_l2_wide_random", 9), ("gru_l1_random", 11),
         ("gru_l2_nevercol", 11), ("gru_l2_wide_random", 9)]


def policies(steps):
    # K = 1, K that does not divide T, K that does (T=9), K = T, K > T.
    return ["gates", "chunk:1", "chunk:3", "chunk:4", f"chunk:{steps}",
            "chunk:64"]


def main(data, tmp, extra):
    failures = []

    def check(*args):
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(" ".join(args) + "\n" + r.stdout + r.stderr)

    for case, steps in CASES:
        cell = case.split("_")[0]
        inputs = os.path.join(data, case + ".in.npz")
        ref = os.path.join(data, case + ".ref.npz")
        none = os.path.join(tmp, case + ".none.npz")
        check("rnn-run", f"--preset={cell}", f"--inputs={inputs}",
              "--remat=none", f"--outputs={none}", *extra)
        for policy in policies(steps):
            out = os.path.join(tmp, f"{case}.{policy.replace(':', '')}.npz")
            check("rnn-run", f"--preset={cell}", f"--inputs={inputs}",
                  f"--remat={policy}", f"--outputs={out}", *extra)
            check("rnn-npz-compare", out, none, "--rtol=0")
            if policy == "chunk:3":
                check("rnn-npz-compare", out, ref, "--rtol=1e-4")
        print(case, "checked against", ", ".join(policies(steps)))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
