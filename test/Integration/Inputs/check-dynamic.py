"""Runs each case twice, as the preset compiled for its shape and as the
preset compiled for every T and B (--dynamic) run at that shape, and checks
that the dynamic program gives the specialized one's outputs and gradients
bitwise (rnn-npz-compare --rtol=0: it issues the same GEMM calls, which
the counts and the GEMM block also show), that its peak predicted from the
plan's expressions at the shape equals the peak the runtime measures, and
that it holds no more than the specialized program (for T > 1), and that
remat `gates` and `chunk:K` give `none`'s bits (a chunk of K steps asked
for runs K rounded up to whole GEMM blocks, at most T, as the specialized
program's). Shapes: T = 1, B = 1,
T a multiple of the GEMM block and not (a tail block), T * B large, blocks
of one step and of many. Exits non-zero listing every violation.

Usage: check-dynamic.py TMP_DIR [--jobs=N] [--shard=K/N] [RNN_RUN_FLAG...]
(with --target=cuda, the f64 cases are left out: that target computes in
f32 only)"""

import concurrent.futures
import json
import os
import subprocess
import sys
import threading

# (T, B): with the default 256 GEMM rows, P = 1 (T = 1 and B = 300), P = T
# (one block), P = 4 with 33 = 8 * 4 + 1, P = 8 with 100 = 12 * 8 + 4, and
# P = 1 over 64 * 512 rows.
SHAPES = [(1, 1), (1, 8), (5, 3), (37, 3), (33, 64), (7, 300), (100, 40),
          (64, 512)]
SIZES = ["--input-size=13", "--hidden-size=21", "--reset-prob=0.1",
         "--iters=1", "--warmup=0"]

CASES = []
for cell, layers in (("lstm", 2), ("gru", 2)):
    for t, b in SHAPES:
        CASES.append((cell, layers, t, b, "infer", []))
        CASES.append((cell, layers, t, b, "train", ["--remat=none"]))
    for t, b in ((33, 64), (5, 3)):
        CASES.append((cell, layers, t, b, "train", ["--remat=gates"]))
    # Chunks of one block, of several, of a part of a block (rounded up),
    # and longer than T.
    for t, b in ((1, 1), (5, 3), (37, 3), (33, 64), (100, 40)):
        for chunk in (1, 3, 64):
            CASES.append((cell, layers, t, b, "train",
                          [f"--remat=chunk:{chunk}"]))
for cell in ("mgu", "cifg"):
    for t, b in ((1, 1), (33, 64)):
        CASES.append((cell, 1, t, b, "infer", []))
        CASES.append((cell, 1, t, b, "train", []))
for flags in (["--dropout=0.3"], ["--reset-to=step"], ["--reset-to=column"],
              ["--storage=bf16"], ["--storage=bf16", "--reset-to=step"],
              ["--dtype=f64"], ["--remat=chunk:3", "--storage=bf16"],
              ["--remat=chunk:3", "--reset-to=step"],
              ["--remat=chunk:3", "--dropout=0.3"]):
    CASES.append(("lstm", 2, 9, 5, "train", flags))
    CASES.append(("gru", 2, 33, 64, "train", flags))
for cell in ("mgu", "cifg"):
    CASES.append((cell, 1, 33, 64, "train", ["--remat=chunk:5"]))


def run(tmp, extra, index, case, dynamic):
    cell, layers, t, b, mode, flags = case
    out = os.path.join(tmp, f"{index}{'.dynamic' if dynamic else ''}.npz")
    args = ["rnn-run", "--json", f"--preset={cell}", f"--layers={layers}",
            f"--seq-len={t}", f"--batch={b}", f"--mode={mode}", *SIZES,
            *flags, *extra, f"--outputs={out}"]
    if dynamic:
        args.append("--dynamic")
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        return None, out, result.stderr.strip()
    return json.loads(result.stdout), out, ""


class Once:
    """Each key's value computed once, however often and from however many
    threads it is asked for: `compute(n)`, n the key's place in the order
    of first asks (for its files' names); what it raises is raised to every
    asker."""

    def __init__(self):
        self._lock = threading.Lock()
        self._slots = {}

    def __call__(self, key, compute):
        with self._lock:
            if key not in self._slots:
                self._slots[key] = (threading.Lock(), [], len(self._slots))
            lock, result, index = self._slots[key]
        with lock:
            if not result:
                try:
                    result.append((compute(index), None))
                except Exception as e:
                    result.append((None, e))
        value, error = result[0]
        if error is not None:
            raise error
        return value


# A policy's case compares its bits with those of `none` at its shape,
# which is often a case of its own: each dynamic program runs once.
_dynamic_runs = Once()


def run_dynamic(tmp, extra, case):
    """run(..., dynamic=True) of `case`, once per program."""
    # `none` is the default policy: the same program with or without it.
    cell, layers, t, b, mode, flags = case
    key = repr((cell, layers, t, b, mode,
                sorted(f for f in flags if f != "--remat=none")))
    return _dynamic_runs(key, lambda n: run(tmp, extra, f"d{n}", case, True))


def check(tmp, extra, index, case):
    cell, layers, t, b, mode, flags = case
    tag = f"{cell} L={layers} T={t} B={b} {mode} {' '.join(flags)}"
    static, static_out, error = run(tmp, extra, index, case, False)
    if static is None:
        return [f"{tag}: static run failed: {error}"]
    dynamic, dynamic_out, error = run_dynamic(tmp, extra, case)
    if dynamic is None:
        return [f"{tag}: dynamic run failed: {error}"]
    failures = []
    peak = dynamic["peak_bytes"]
    if not dynamic["dynamic"] or "peak" not in dynamic.get("plan", {}):
        failures.append(f"{tag}: no plan expressions in the dynamic report")
    if peak["predicted"] != peak["measured"]:
        failures.append(f"{tag}: predicted {peak['predicted']} != measured "
                        f"{peak['measured']}")
    # The same buffers live as long (under bf16 storage the dynamic program
    # shares more conversion scratch); at T = 1 the static program's loops
    # of one step fold into the function, which frees some buffers earlier.
    if t > 1 and peak["measured"] > static["peak_bytes"]["measured"]:
        failures.append(f"{tag}: holds {peak['measured']} bytes, the static "
                        f"program {static['peak_bytes']['measured']}")
    for key in ("gemm_calls", "gemm_block", "saved_bytes"):
        if dynamic[key] != static[key]:
            failures.append(f"{tag}: {key} {dynamic[key]} != {static[key]}")
    compare = subprocess.run(
        ["rnn-npz-compare", "--rtol=0", "--quiet", dynamic_out, static_out],
        capture_output=True, text=True)
    if compare.returncode != 0:
        failures.append(f"{tag}: not bitwise the static program's: "
                        f"{compare.stdout.strip()} {compare.stderr.strip()}")
    # Every policy gives `none`'s bits at every shape (the same GEMM
    # calls).
    policy = [f for f in flags if f.startswith("--remat=")]
    if mode == "train" and policy and policy != ["--remat=none"]:
        none = (cell, layers, t, b, mode,
                [f for f in flags if f not in policy] + ["--remat=none"])
        plain, plain_out, error = run_dynamic(tmp, extra, none)
        if plain is None:
            failures.append(f"{tag}: dynamic run under none failed: {error}")
        elif subprocess.run(["rnn-npz-compare", "--rtol=0", "--quiet",
                             dynamic_out, plain_out],
                            capture_output=True).returncode != 0:
            failures.append(f"{tag}: {policy[0]} differs from none")
    print(tag, "peak", peak["measured"], "plan", dynamic["plan"]["peak"])
    return failures


def run_cases(cases, check):
    """Runs `check(tmp, extra, index, case)` on each case, --jobs=N at a
    time (the command line: TMP_DIR [--jobs=N] [--shard=K/N]
    [RNN_RUN_FLAG...]; --shard checks only the cases whose index is K
    modulo N), prints every failure and returns the exit status."""
    tmp = sys.argv[1]
    jobs = 1
    shard, shards = 0, 1
    extra = []
    for arg in sys.argv[2:]:
        if arg.startswith("--jobs="):
            jobs = int(arg.split("=", 1)[1])
        elif arg.startswith("--shard="):
            shard, shards = map(int, arg.split("=", 1)[1].split("/"))
            if not 0 <= shard < shards:
                sys.exit(f"{arg}: K must be in [0, N)")
        else:
            extra.append(arg)
    failures = []
    items = [(i, case) for i, case in enumerate(cases)
             if i % shards == shard]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for result in pool.map(lambda item: check(tmp, extra, *item),
                               items):
            failures += result
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    # The cuda target computes in f32 only (gpu/call2.sh runs the cases
    # there).
    sys.exit(run_cases([c for c in CASES if "--dtype=f64" not in c[5]]
                       if "--target=cuda" in sys.argv[2:] else CASES, check))
