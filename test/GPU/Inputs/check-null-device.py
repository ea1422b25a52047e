"""Runs rnn-run --target=cuda on the null CUDA device (test/lib/NullCuda)
and checks what the host path issued against the device's own report.

Usage: check-null-device.py NULLCUDA_LIB TMP_DIR [--max-syncs=N]
       [--max-allocations=N] [--max-launches=N] [--graph | --eager]
       [--bf16-gemms] [--min-streams=N]
       -- RNN_RUN_FLAG...

Checks, from rnn-run --json and the null device's NULLCUDA_REPORT:
  * no violation and no failed call on the device (every kernel argument
    inside a live allocation, cuBLAS arguments valid, and under graph
    capture no allocation, free, synchronization or module load);
  * the PTX is loaded once and every kernel resolved once, not per launch;
  * per step at most --max-syncs synchronizations, --max-allocations
    device allocations and --max-launches kernel launches (if given), and
    the device peak the plan predicted is the one
    measured;
  * --graph: one capture, replayed once per step, each replay repeating the
    launches and GEMM calls of the eager step; --eager: every step issued
    them itself;
  * with --bf16-gemms every GEMM the device ran took bf16 operands
  * with --min-streams the device ran work on at least N streams (lanes)
    (cublasGemmEx), without it none did.
Exits non-zero listing every failure."""

import json
import os
import subprocess
import sys


# rnn-run's flags of a run, which --emit refuses.
RUN_FLAGS = {"--iters", "--warmup", "--seed", "--reset-prob", "--max-memory",
             "--blas-threads", "--jit-listeners", "--no-cuda-graph", "--tf32",
             "--cublas"}


def main(argv):
    split = argv.index("--")
    own, flags = argv[:split], argv[split + 1:]
    lib, tmp = own[0], own[1]
    opts = dict(o.lstrip("-").split("=") if "=" in o else (o.lstrip("-"), "1")
                for o in own[2:])
    report = os.path.join(tmp, "report.json")
    env = dict(os.environ, RNNRT_LIBCUDA=lib, RNNRT_LIBCUBLAS=lib,
               NULLCUDA_REPORT=report)
    r = subprocess.run(["rnn-run", "--target=cuda", "--json", *flags],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("rnn-run failed:", r.returncode, r.stdout, r.stderr)
        return 1
    run = json.loads(r.stdout)
    dev = json.load(open(report))
    # The kernels of the step: each is resolved once, at its first launch.
    # (--emit runs nothing: it takes none of a run's flags.)
    model = [f for f in flags if f.split("=")[0] not in RUN_FLAGS]
    ptx = subprocess.run(["rnn-run", "--target=cuda", "--emit=ptx", *model],
                         capture_output=True, text=True, env=env)
    if ptx.returncode != 0:
        print("rnn-run --emit=ptx failed:", ptx.returncode, ptx.stderr)
        return 1
    kernels = ptx.stdout.count(".entry ")
    steps = run["warmup"] + run["iters"]
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    print("rnn-run:", {k: run[k] for k in ("launches", "gemm_calls", "syncs",
                                            "allocations", "cuda_graph")})
    print("device: ", dev)
    expect(dev["violations"] == 0, f"{dev['violations']} violations")
    expect(dev["errors"] == 0, f"{dev['errors']} failed calls")
    expect(dev["module_loads"] == 1, f"{dev['module_loads']} module loads")
    expect(ptx.returncode == 0 and kernels > 0, "no PTX: " + ptx.stderr)
    expect(dev["get_function"] <= kernels,
           f"{dev['get_function']} kernel lookups for {kernels} kernels: "
           f"not resolved once")
    expect(run["syncs"] <= int(opts.get("max-syncs", 1)),
           f"{run['syncs']} synchronizations per step")
    expect(run["allocations"] <= int(opts.get("max-allocations", 0)),
           f"{run['allocations']} allocations per step")
    if "min-streams" in opts:
        expect(dev["work_streams"] >= int(opts["min-streams"]),
               f"work ran on {dev['work_streams']} streams")
    if "max-launches" in opts:
        expect(run["launches"] <= int(opts["max-launches"]),
               f"{run['launches']} kernel launches per step")
    peak = run["peak_bytes"]
    expect(peak["measured"] == peak["predicted"],
           f"device peak measured {peak['measured']} != predicted "
           f"{peak['predicted']}")
    expect(run["launches"] > 0 and run["gemm_calls"] > 0, "no work issued")
    # Work the device saw, against rnn-run's count for one step: with
    # --graph the eager step ran outside the graph and every step replayed
    # it; with --eager every step issued it.
    seen = []
    if "graph" in opts:
        expect(run["cuda_graph"], "not replayed as a graph")
        expect(dev["captures"] == 1, f"{dev['captures']} captures")
        expect(dev["graph_launches"] == steps,
               f"{dev['graph_launches']} replays for {steps} steps")
        seen = [("replayed_launches", "launches", steps),
                ("replayed_gemms", "gemm_calls", steps),
                ("launches", "launches", 1)]
        # The step graph is replayed on the runtime's stream alone: its
        # GEMMs keep their streams' workspaces.
        expect(dev["replayed_gemms_without_workspace"] == 0,
               f"{dev['replayed_gemms_without_workspace']} replayed GEMMs "
               f"without a cuBLAS workspace")
    if "eager" in opts:
        expect(not run["cuda_graph"], "replayed as a graph")
        expect(dev["captures"] == 0, f"{dev['captures']} captures")
        seen = [("launches", "launches", steps),
                ("gemms", "gemm_calls", steps)]
    gemms = dev["gemms"] + dev["replayed_gemms"]
    if "bf16-gemms" in opts:
        expect(dev["bf16_gemms"] == gemms,
               f"{dev['bf16_gemms']} of {gemms} GEMMs with bf16 operands")
    else:
        expect(dev["bf16_gemms"] == 0, f"{dev['bf16_gemms']} bf16 GEMMs")
    for key, per_step, times in seen:
        expect(dev[key] == run[per_step] * times,
               f"device {key} {dev[key]}, expected {run[per_step]} x {times}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
