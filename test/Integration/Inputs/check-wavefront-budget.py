"""A budget that only the layers in sequence fit: with --wavefront,
remat=budget:BYTES keeps the budget and gives up the wavefront.

    check-wavefront-budget.py DIR FLAG...

For one model (2 layers, GEMM blocks of 2 steps) it runs rnn-run under
every candidate plan with and without --wavefront and takes the smallest
planned peak of each (the wavefront holds every layer's scratch at once,
so its smallest is larger). Then, with --wavefront:
  * a budget of the sequential smallest peak runs in sequence (JSON
    "wavefront": false, the text says so) within the budget;
  * so does rnn-compile's library ("wavefront": false in its manifest)
    under the smallest budget its refusals name "in sequence";
  * a budget of the wavefront's smallest peak keeps the wavefront;
  * a budget one byte below the sequential smallest is refused, naming it
    with "layers in sequence".
Prints one line per check; exits 1 on the first failure."""

import json
import os
import re
import subprocess
import sys

out, *flags = sys.argv[1:]
model = ["--preset=lstm", "--layers=2", "--seq-len=16", "--batch=4",
         "--input-size=8", "--hidden-size=8", "--gemm-rows=8", "--iters=1",
         "--warmup=0"] + flags


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(*extra, json_out=True):
    r = subprocess.run(["rnn-run", *model, *extra] +
                       (["--json"] if json_out else []),
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return (json.loads(r.stdout) if json_out else r.stdout), None


def smallest(wavefront):
    peaks = {}
    for plan in ("none", "gates", "chunk:2", "chunk:4", "chunk:8",
                 "chunk:16"):
        result, error = run(f"--remat={plan}", *wavefront)
        if result is None:
            fail(f"{plan} {wavefront}: {error}")
        peaks[plan] = result["peak_bytes"]["predicted"]
    plan = min(peaks, key=peaks.get)
    return plan, peaks[plan]


seq_plan, seq_min = smallest([])
wave_plan, wave_min = smallest(["--wavefront"])
if not seq_min < wave_min:
    fail(f"the wavefront's smallest peak {wave_min} is not above the "
         f"sequential {seq_min}")
print("the wavefront holds more: smallest peaks "
      f"{seq_min} ({seq_plan}) < {wave_min} ({wave_plan})")

result, error = run(f"--remat=budget:{seq_min}", "--wavefront")
if result is None:
    fail(f"budget:{seq_min}: {error}")
peak = result["peak_bytes"]["predicted"]
if result["wavefront"] or peak > seq_min or \
        result["peak_bytes"]["measured"] != peak:
    fail(f"budget:{seq_min}: wavefront {result['wavefront']}, peak {peak}, "
         f"measured {result['peak_bytes']['measured']}")
text, _ = run(f"--remat=budget:{seq_min}", "--wavefront", json_out=False)
if "layers in sequence (the wavefront does not fit the budget)" not in text:
    fail(f"budget:{seq_min}: the text does not say so: {text}")
print(f"budget of the sequential smallest: {result['remat_plan']}, layers "
      f"in sequence, within the budget")

# The library's pipeline plans other peaks (out-params): its smallest
# feasible budget in sequence, from its refusal of one byte, is one that
# only the layers in sequence fit.
library = [a for a in model if not a.startswith(("--iters", "--warmup"))]


def compile_with(budget, name):
    directory = os.path.join(out, name)
    r = subprocess.run(["rnn-compile", *library, f"--remat=budget:{budget}",
                        "--wavefront", "-o", directory],
                       capture_output=True, text=True)
    return directory, r


_, r = compile_with(1, "one-byte")
match = re.search(r"smallest feasible budget is ([0-9]+) bytes "
                  r"\([^,)]+, layers in sequence\)", r.stderr)
if r.returncode != 2 or not match:
    fail(f"rnn-compile budget:1: {r.stderr.strip()}")
budget = int(match.group(1))
directory, r = compile_with(budget, "fallback")
if r.returncode != 0:
    fail(f"rnn-compile budget:{budget}: {r.stderr.strip()}")
with open(os.path.join(directory, "manifest.json")) as f:
    manifest = json.load(f)
if manifest["wavefront"] is not False or \
        manifest["entries"]["train"]["predicted_peak_bytes"] > budget:
    fail(f"rnn-compile budget:{budget}: wavefront {manifest['wavefront']}")
print("the library's manifest: wavefront false")

result, error = run(f"--remat=budget:{wave_min}", "--wavefront")
if result is None or not result["wavefront"] or \
        result["peak_bytes"]["predicted"] > wave_min:
    fail(f"budget:{wave_min}: {error or result}")
print(f"budget of the wavefront's smallest: {result['remat_plan']}, "
      f"wavefront kept")

_, error = run(f"--remat=budget:{seq_min - 1}", "--wavefront")
expected = (f"no plan fits budget:{seq_min - 1}; the smallest feasible "
            f"budget is {seq_min} bytes ({seq_plan}, layers in sequence)")
if error is None or expected not in error:
    fail(f"budget:{seq_min - 1}: expected '{expected}', got {error}")
print("below the sequential smallest: refused, naming it")
