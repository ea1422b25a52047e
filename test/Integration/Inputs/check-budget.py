"""remat=budget:BYTES plans with the pipeline it compiles for: for one
model, target and storage, the peak rnn-compile plans with remat=none is a
feasible budget that keeps remat=none and plans the same peak, and under a
budget the chosen plan's planned peak is within it.

    check-budget.py RNN_COMPILE DIR FLAG...

Prints one line per run: the budget, the plan and the planned peak of the
training entry point."""

import json
import os
import re
import subprocess
import sys

compiler, out, *flags = sys.argv[1:]
model = ["--preset=lstm", "--seq-len=16", "--batch=8", "--input-size=32",
         "--hidden-size=64", "--layers=2"] + flags


def compile_with(remat):
    directory = os.path.join(out, remat.replace(":", "-"))
    run = subprocess.run([compiler, *model, f"--remat={remat}", "-o",
                          directory], capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip()
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    return manifest, manifest["entries"]["train"]["predicted_peak_bytes"]


manifest, none_peak = compile_with("none")
assert manifest is not None, none_peak
print(f"none: peak {none_peak}")
manifest, peak = compile_with(f"budget:{none_peak}")
assert manifest is not None, peak
print(f"budget=none's peak: plan {manifest['remat_plan']}, "
      f"same peak {peak == none_peak}")
# A budget below none's peak: refused with the smallest feasible budget
# and its plan (or planned), which, asked for, is planned within it.
budget = none_peak - 1
manifest, peak = compile_with(f"budget:{budget}")
if manifest is None:
    match = re.search(r"smallest feasible budget is (\d+) bytes \((\S+)\)",
                      peak)
    assert match, peak
    budget, named = int(match.group(1)), match.group(2)
    manifest, peak = compile_with(f"budget:{budget}")
    assert manifest is not None, peak
    assert manifest["remat_plan"] == named, (manifest["remat_plan"], named)
print(f"tighter budget: plan {manifest['remat_plan']}, within "
      f"{peak <= budget}, below none {peak < none_peak}")
