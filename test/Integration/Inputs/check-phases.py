"""Checks the memory figures rnn-run reports under --arena against those it
measures without one.

Without the arena every buffer is its own allocation, and the runtime's
ledger measures the peak of each phase (forward, backward) and the bytes
held at the boundary that are not results (saved_bytes). In the arena the
step holds one allocation, so rnn-run reports those figures from the plan
(rnn-plan-memory's rnn.predicted_{fwd_peak,bwd_peak,saved}_bytes). For
each case both runs must give the same phase peaks (peak_bytes fwd and
bwd) and saved_bytes; without the arena the peak is measured as predicted
and is the larger phase peak, and in the arena the measured and predicted
peak is the arena, at least that peak.

Usage: check-phases.py [--nullcuda LIB] [RNN_RUN_FLAG...]
  The flags are added to every case (e.g. --target=cuda); with --nullcuda
  rnn-run loads LIB as its CUDA driver and cuBLAS (the null device).
Exits non-zero listing every failure. Standard library only."""

import json
import os
import subprocess
import sys

SHAPE = ["--seq-len=12", "--batch=3", "--input-size=5", "--hidden-size=4",
         "--iters=1", "--warmup=0"]
CASES = [
    ["--preset=lstm", "--remat=none"],
    ["--preset=lstm", "--layers=2", "--remat=gates", "--reset-prob=0.2"],
    ["--preset=gru", "--layers=2", "--remat=chunk:4"],
    ["--preset=mgu", "--layers=3", "--remat=budget:5000"],
    ["--preset=cifg", "--layers=2", "--remat=chunk:3", "--storage=bf16"],
    ["--preset=lstm", "--layers=2", "--dropout=0.3", "--remat=chunk:4"],
    ["--preset=gru", "--storage=bf16", "--remat=gates"],
    ["--preset=lstm", "--mode=infer"],
]


def main(argv):
    env = dict(os.environ)
    if argv[:1] == ["--nullcuda"]:
        env.update(RNNRT_LIBCUDA=argv[1], RNNRT_LIBCUBLAS=argv[1])
        argv = argv[2:]
    failures = []

    def run(flags):
        r = subprocess.run(["rnn-run", *flags, "--json"], capture_output=True,
                           text=True, env=env)
        if r.returncode != 0:
            failures.append(" ".join(flags) + "\n" + r.stdout + r.stderr)
            return None
        return json.loads(r.stdout)

    for case in CASES:
        flags = case + SHAPE + argv
        # GEMM blocks of 4 steps on every target (the cuda target's default
        # block would span the sequence, and chunk:4 with it).
        flags.append("--gemm-rows=12")
        alone = run(flags + ["--no-arena"])
        placed = run(flags + ["--arena"])
        if not alone or not placed:
            continue
        tag = " ".join(case)

        def phases(r):
            p = r["peak_bytes"]
            return {"fwd": p["fwd"], "bwd": p["bwd"],
                    "saved": r["saved_bytes"]}

        want, got = phases(alone), phases(placed)
        if got != want:
            failures.append(f"{tag}: arena {got}, measured without {want}")
        peak = alone["peak_bytes"]
        if not (peak["measured"] == peak["predicted"] ==
                max(peak["fwd"], peak["bwd"])):
            failures.append(f"{tag}: without the arena {peak}")
        # The arena holds the live bytes' peak, and alignment and gaps.
        arena = placed["peak_bytes"]
        if not (arena["measured"] == arena["predicted"] ==
                placed["arena_bytes"] >= peak["measured"]):
            failures.append(f"{tag}: in the arena {arena}, arena "
                            f"{placed['arena_bytes']}")
        training = "--mode=infer" not in case
        if (want["bwd"] > 0) != training:
            failures.append(f"{tag}: backward peak {want['bwd']}")
        print(f"{tag}: fwd {want['fwd']} bwd {want['bwd']} saved "
              f"{want['saved']} bytes" +
              (", the same in the arena" if got == want else ""))
    for f in failures:
        print("FAIL:", f)
    print(f"phases: {len(CASES)} cases, " +
          ("ok" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
