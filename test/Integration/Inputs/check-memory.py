"""Runs rnn-run --json over cells x layers x modes x remat policies and checks
predicted == measured peak, saved_bytes == 0 for inference, and that the
`gates` policy saves less than `none`. Exits non-zero with a message on the
first violation."""

import json
import subprocess
import sys

SHAPE = ["--seq-len=9", "--batch=5", "--input-size=13", "--hidden-size=21",
         "--reset-prob=0.1", "--iters=2", "--warmup=0"]


def run(*args):
    out = subprocess.run(["rnn-run", "--json", *SHAPE, *args],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    failures = []
    for cell in ("lstm", "gru"):
        for layers in (1, 2):
            saved = {}
            for mode, remat in (("infer", "none"), ("train", "none"),
                                ("train", "gates")):
                r = run(f"--preset={cell}", f"--layers={layers}",
                        f"--mode={mode}", f"--remat={remat}")
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
            if not saved["gates"] < saved["none"]:
                failures.append(f"{cell} L={layers}: gates saves "
                                f"{saved['gates']} >= none {saved['none']}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
