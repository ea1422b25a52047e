"""Runs rnn-run --json over cells x layers x modes x remat policies and checks
predicted == measured peak, saved_bytes == 0 for inference, that the `gates`
policy saves less than `none` and every chunk:K at most what `gates` saves,
and that a budget policy's run fits its budget. Exits non-zero with a
message listing every violation. Usage: check-memory.py TMP_DIR
[RNN_RUN_FLAG...] (e.g. --target=cuda)."""

import json
import subprocess
import sys

SHAPE = ["--seq-len=9", "--batch=5", "--input-size=13", "--hidden-size=21",
         "--reset-prob=0.1", "--iters=2", "--warmup=0"]


EXTRA = sys.argv[2:]


def run(*args):
    out = subprocess.run(["rnn-run", "--json", *SHAPE, *EXTRA, *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    failures = []
    for cell in ("lstm", "gru"):
        for layers in (1, 2):
            saved, peaks = {}, {}
            runs = [("infer", "none"), ("train", "none"), ("train", "gates"),
                    ("train", "chunk:1"), ("train", "chunk:4"),
                    ("train", "chunk:9")]
            for mode, remat in runs:
                policy = [f"--remat={remat}"] if mode == "train" else []
                r = run(f"--preset={cell}", f"--layers={layers}",
                        f"--mode={mode}", *policy)
                tag = f"{cell} L={layers} {mode} remat={remat}"
                peak = r["peak_bytes"]
                print(tag, peak, "saved", r["saved_bytes"])
                if peak["predicted"] != peak["measured"]:
                    failures.append(f"{tag}: predicted {peak['predicted']} "
                                    f"!= measured {peak['measured']}")
                if mode == "infer" and r["saved_bytes"] != 0:
                    failures.append(f"{tag}: saved_bytes {r['saved_bytes']}")
                if mode == "train":
                    saved[remat] = r["saved_bytes"]
                    peaks[remat] = peak["measured"]
            if not saved["gates"] < saved["none"]:
                failures.append(f"{cell} L={layers}: gates saves "
                                f"{saved['gates']} >= none {saved['none']}")
            for k in ("chunk:1", "chunk:4", "chunk:9"):
                if saved[k] > saved["gates"]:
                    failures.append(f"{cell} L={layers}: {k} saves "
                                    f"{saved[k]} > gates {saved['gates']}")
            # A budget between the smallest and the largest peak: the run
            # must fit it.
            budget = (peaks["chunk:1"] + peaks["none"]) // 2
            r = run(f"--preset={cell}", f"--layers={layers}", "--mode=train",
                    f"--remat=budget:{budget}")
            tag = f"{cell} L={layers} budget:{budget}"
            print(tag, r["peak_bytes"], "chose", r.get("remat_plan"))
            if r["peak_bytes"]["measured"] > budget:
                failures.append(f"{tag}: measured {r['peak_bytes']['measured']}"
                                f" > budget")
            if r["peak_bytes"]["predicted"] != r["peak_bytes"]["measured"]:
                failures.append(f"{tag}: predicted != measured")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
