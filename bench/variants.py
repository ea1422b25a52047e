"""What the benches that compare variants of one rnn-run preset share
(reset_states.py: reset targets; bf16_storage.py: storage types): the
preset's flags, one `rnn-run --json` train run, and the runs of every
variant under every remat policy interleaved over rounds, so that machine
noise hits every variant alike."""

import json
import os
import statistics

from cli import (CELLS, name_list, positive_int, probability, program,
                 run_tool)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_preset_args(ap, cells):
    """The preset's shape and the run's flags, with `cells` by default."""
    ap.add_argument("--cells", type=name_list(CELLS), default=cells)
    ap.add_argument("--seq-len", type=positive_int, default=32)
    ap.add_argument("--batch", type=positive_int, default=64)
    ap.add_argument("--size", type=positive_int, default=256)
    ap.add_argument("--layers", type=positive_int, default=1)
    ap.add_argument("--reset-prob", type=probability, default=0.05)
    ap.add_argument("--iters", type=positive_int, default=20)
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--openblas-coretype", default="",
                    help="OPENBLAS_CORETYPE for the runs (e.g. SkylakeX)")
    ap.add_argument("--target", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--rnn-run", type=program,
                    default=os.path.join(ROOT, "build", "bin", "rnn-run"))


def run(args, cmd):
    """The stdout of `cmd`, under --openblas-coretype; a tool that fails
    ends the script with its one line (cli.run_tool)."""
    env = dict(os.environ)
    if args.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = args.openblas_coretype
    return run_tool(cmd, env=env)


def rnn_run(args, cell, remat, flags):
    """One train run of the preset `cell` under `remat` with `flags`."""
    return json.loads(run(args, [
        args.rnn_run, f"--preset={cell}", f"--layers={args.layers}",
        f"--seq-len={args.seq_len}", f"--batch={args.batch}",
        f"--input-size={args.size}", f"--hidden-size={args.size}",
        f"--reset-prob={args.reset_prob}", f"--remat={remat}",
        f"--iters={args.iters}", "--warmup=2", f"--target={args.target}",
        "--json", *flags]))


def interleaved(args, cell, variants, policies):
    """Runs every variant (name -> flags) under every policy, --rounds
    times: the median over rounds of each run's median step time, and the
    last run's result, per (variant, policy)."""
    times = {(v, p): [] for v in variants for p in policies}
    last = {}
    for _ in range(args.rounds):
        for p in policies:
            for v, flags in variants.items():
                r = rnn_run(args, cell, p, flags)
                times[(v, p)].append(r["step_ms"]["median"])
                last[(v, p)] = r
    medians = {key: statistics.median(t) for key, t in times.items()}
    return medians, last


def heading(args, cell, result):
    """The line naming the shape and the GEMM backend of `result`."""
    return (f"{cell} T={args.seq_len} B={args.batch} I=H={args.size} "
            f"L={args.layers} resets={args.reset_prob:g}: {args.target}, "
            f"{result['gemm']}")


def peak_mismatch(result):
    """Whether the measured peak differs from the predicted one."""
    peak = result["peak_bytes"]
    return peak["predicted"] != peak["measured"]


def bytes_column(value):
    """A byte count right-aligned in 12 columns; "-" for a missing one."""
    return f"{value:12,d}" if value is not None else f"{'-':>12s}"
