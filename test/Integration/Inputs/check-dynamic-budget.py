"""Checks remat budgets in a program compiled for every T and B
(rnn-run --dynamic --remat=budget:BYTES): at each shape the call runs the
plan the budget policy takes there, among the peaks the program's own plans
have at that shape, with outputs and gradients bitwise those of `none`, and
the peak it predicts is the one the runtime measures; where no plan fits,
the error names the smallest feasible budget and its plan.

The expected plan is worked out here from the peaks of the programs
compiled for every T and B with each plan (none, gates, chunks of 1, 2, 4,
... steps asked for, which a call rounds up to whole GEMM blocks of P
steps, at most T): `none` if it fits; otherwise, at these sizes, where
every replay's scratch fits in the cost model's 8 MiB cache, each plan
that replays costs the same, and the one of the smallest peak is taken
(the first in that order on a tie).

Usage: check-dynamic-budget.py TMP_DIR [--jobs=N] [--shard=K/N]
[RNN_RUN_FLAG...]"""

import importlib.util
import json
import os
import subprocess
import sys

SIZES = ["--input-size=13", "--hidden-size=21", "--reset-prob=0.1",
         "--iters=1", "--warmup=0"]
CACHE_BYTES = 8 << 20


def run(tmp, extra, tag, cell, layers, t, b, remat):
    out = os.path.join(tmp, f"{tag}.npz")
    args = ["rnn-run", "--json", "--dynamic", "--mode=train",
            f"--preset={cell}", f"--layers={layers}", f"--seq-len={t}",
            f"--batch={b}", f"--remat={remat}", *SIZES, *extra,
            f"--outputs={out}"]
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        return None, out, result.stderr.strip()
    return json.loads(result.stdout), out, ""


def plans_at(t):
    """The plans the library carries, as asked for, in its order."""
    plans = ["none", "gates"]
    k = 1
    while k <= 1024:
        plans.append(f"chunk:{k}")
        if k >= t:
            break
        k *= 2
    return plans


def effective(plan, t, p):
    """The plan a call at T steps in blocks of P runs."""
    if not plan.startswith("chunk:"):
        return plan
    k = int(plan.split(":")[1])
    return f"chunk:{min(-(-k // p) * p, t)}"


# check-dynamic.py: its runner and Once.
_spec = importlib.util.spec_from_file_location(
    "check_dynamic", os.path.join(os.path.dirname(__file__),
                                  "check-dynamic.py"))
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

# The plans' peaks at a shape, worked out once for the cases that share it.
_peaks = runner.Once()


def shared_peaks(tmp, extra, cell, layers, t, b):
    return _peaks((cell, layers, t, b),
                  lambda n: peaks(tmp, extra, f"s{n}", cell, layers, t, b))


def peaks(tmp, extra, index, cell, layers, t, b, h=21):
    """Each plan's predicted peak at (T, B), in the library's order, with
    its report (the outputs of `none` as the bits to match)."""
    found = []
    for plan in plans_at(t):
        report, out, error = run(tmp, extra,
                                 f"budget{index}.{plan.replace(':', '')}",
                                 cell, layers, t, b, plan)
        if report is None:
            raise RuntimeError(f"{cell} T={t} B={b} {plan}: {error}")
        p = report["gemm_block"]
        scratch = t * b * 4 * (4 * h + h)
        if scratch > CACHE_BYTES:
            raise RuntimeError("a replay's scratch exceeds the cache: the "
                               "expected plan needs the whole cost model")
        found.append((effective(plan, t, p), report["peak_bytes"]["predicted"],
                      out))
    return found


def expected(found, budget):
    """The plan the budget takes, or None, with the smallest peak's plan."""
    smallest = min(found, key=lambda item: item[1])
    if found[0][1] <= budget:
        return found[0][0], smallest
    best = None
    for plan, peak, _ in found[1:]:
        if peak <= budget and (best is None or peak < best[1]):
            best = (plan, peak)
    return (best[0] if best else None), smallest


def check(tmp, extra, index, case):
    cell, layers, t, b, pick = case
    tag = f"{cell} L={layers} T={t} B={b}"
    try:
        found = shared_peaks(tmp, extra, cell, layers, t, b)
    except RuntimeError as e:
        return [str(e)]
    budget = pick(sorted(peak for _, peak, _ in found))
    plan, smallest = expected(found, budget)
    tag += f" budget:{budget}"
    report, out, error = run(tmp, extra, f"budget{index}", cell, layers, t,
                             b, f"budget:{budget}")
    failures = []
    if plan is None:
        want = (f"rnn-run: no remat plan fits budget:{budget} at T={t}, "
                f"B={b}; the smallest feasible budget there is "
                f"{smallest[1]} bytes")
        if report is not None or not error.startswith(want):
            failures.append(f"{tag}: expected '{want} (...)', got "
                            f"{error or 'a run'}")
        print(tag, "refused:", error)
        return failures
    if report is None:
        return [f"{tag}: expected {plan}, the run failed: {error}"]
    peak = report["peak_bytes"]
    if report["remat_plan"] != plan:
        failures.append(f"{tag}: ran {report['remat_plan']}, expected {plan}")
    if peak["predicted"] != peak["measured"] or peak["predicted"] > budget:
        failures.append(f"{tag}: predicted {peak['predicted']}, measured "
                        f"{peak['measured']}, budget {budget}")
    if subprocess.run(["rnn-npz-compare", "--rtol=0", "--quiet", out,
                       found[0][2]], capture_output=True).returncode != 0:
        failures.append(f"{tag}: not bitwise none's outputs and gradients")
    print(tag, "ran", report["remat_plan"], "peak", peak["measured"])
    return failures


# Budgets from the plans' peaks at the shape, lowest first: none's (it
# fits), one byte below it, the second smallest, and one byte below the
# smallest (nothing fits).
CASES = [("lstm", 2, 9, 5, lambda p: p[-1]),
         ("lstm", 2, 9, 5, lambda p: p[-1] - 1),
         ("lstm", 2, 37, 3, lambda p: p[1]),
         ("lstm", 2, 37, 3, lambda p: p[0] - 1),
         ("gru", 2, 33, 64, lambda p: p[-1] - 1),
         ("gru", 1, 100, 40, lambda p: p[len(p) // 2])]


if __name__ == "__main__":
    # check-dynamic.py's runner: TMP_DIR [--jobs=N] [--shard=K/N]
    # [RNN_RUN_FLAG...].
    sys.exit(runner.run_cases(CASES, check))
