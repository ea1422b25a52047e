"""Runs rnn-run with --arena and with --no-arena on reference inputs and
checks that the outputs and gradients are bitwise identical (the planned
offsets never overlap two live buffers), that the step's measured peak is
the arena the plan predicted, and that the results still match the PyTorch
reference.
Usage: check-arena.py DATA_DIR TMP_DIR [RNN_RUN_FLAG...] (e.g.
--target=cuda, where --arena also replays the step as a CUDA graph). Exits
non-zero listing every failure."""

import json
import os
import subprocess
import sys

CASES = [("lstm_l2_wide_random", "none"), ("lstm_l2_wide_random", "chunk:4"),
         ("gru_l2_wide_random", "gates"), ("gru_l1_random", "chunk:3"),
         ("lstm_l1_all", "none")]


def main(data, tmp, extra):
    failures = []

    def run(*args):
        r = subprocess.run(["rnn-run", *args], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(" ".join(args) + "\n" + r.stdout + r.stderr)
        return r.stdout

    for case, remat in CASES:
        cell = case.split("_")[0]
        inputs = os.path.join(data, case + ".in.npz")
        ref = os.path.join(data, case + ".ref.npz")
        plain = os.path.join(tmp, f"{case}.{remat.replace(':', '')}.npz")
        placed = plain.replace(".npz", ".arena.npz")
        common = [f"--preset={cell}", f"--inputs={inputs}", f"--remat={remat}"]
        run(*common, f"--outputs={plain}", "--no-arena", *extra[:1])
        out = run(*common, f"--outputs={placed}", "--arena", "--json", *extra)
        if out:
            r = json.loads(out)
            peak = r["peak_bytes"]
            if not (peak["measured"] == peak["predicted"] == r["arena_bytes"]):
                failures.append(f"{case} {remat}: measured {peak['measured']}"
                                f", predicted {peak['predicted']}, arena "
                                f"{r['arena_bytes']}")
        for a, b, rtol in ((placed, plain, "0"), (placed, ref, "1e-4")):
            r = subprocess.run(["rnn-npz-compare", a, b, f"--rtol={rtol}"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{a} vs {b}:\n{r.stdout}{r.stderr}")
        print(case, remat, "checked")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
