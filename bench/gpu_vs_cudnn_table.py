"""The table bench/gpu_vs_cudnn.py prints: its header, one line per
configuration and mode (from the row the JSON output holds), the notes
under it, and the formatting of its figures.
"""

import time

import torch


def fmt_bytes(n):
    if n is None:
        return "-"
    if n >= 2**30:
        return f"{n / 2**30:.2f}GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f}MiB"
    return f"{n / 2**10:.1f}KiB"


def fmt(v, spec, bad=False):
    if v is None:
        return "-"
    return format(v, spec) + ("!" if bad else "")


def ratio(a, b):
    return a / b if a is not None and b else None


def print_header(gpu, cudnn, configs, modes, args, triton_what):
    """The lines above the table: the machine, the run's settings (for
    `configs` configurations), the triton peer's state, and the column
    names."""
    print(f"# {gpu}; torch {torch.__version__}, cuDNN {cudnn}; "
          f"{configs} configurations x modes {'/'.join(modes)}; "
          f"rnn-run --remat={args.remat}"
          f"{''.join(' ' + f for f in args.rnn_run_flag)}")
    print(f"# triton peer: {triton_what}")
    print(f"# {args.rounds} interleaved rounds x ({args.warmup} warmup "
          f"+ {args.iters} measured) steps per side; times: median of "
          "per-round medians")
    hdr = (f"{'config':36s} {'mode':>4s} {'ours ms':>8s} "
           f"{'cudnn ms':>9s} {'ratio':>6s} {'trl ms':>8s} "
           f"{'r.trl':>6s} {'ours pk':>9s} {'cudnn pk':>9s} "
           f"{'mem':>5s} {'trl pk':>9s} {'m.trl':>5s} {'saved':>9s} "
           f"{'peer':>10s} {'maxdiff':>8s} {'trl diff':>8s} "
           f"{'bits':>6s}")
    print(hdr)
    print("-" * len(hdr))


def print_row(row, check_tol):
    """The table's line of one configuration and mode; a difference above
    `check_tol` in mode fp32 is marked '!'."""
    m = row["mode"]
    o, t = row["ours_ms"], row["torch_ms"]
    md = fmt(row["maxdiff"], ".1e",
             m == "fp32" and row["check_ok"] is False)
    td = fmt(row["triton_maxdiff"], ".1e",
             m == "fp32" and row["triton_maxdiff"] is not None
             and not row["triton_maxdiff"] <= check_tol)
    bits = row["bitwise_rerun"]
    b = "-" if bits is None else ("same" if bits == "same" else "DIFF!")
    print(f"{row['config']:36s} {m:>4s} {o:8.2f} {t:9.2f} "
          f"{o / t:6.2f} {fmt(row['triton_ms'], '8.2f'):>8s} "
          f"{fmt(row['triton_ratio'], '6.2f'):>6s} "
          f"{fmt_bytes(row['ours_peak_bytes']):>9s} "
          f"{fmt_bytes(row['torch_peak_bytes']):>9s} "
          f"{fmt(row['mem_ratio'], '.2f'):>5s} "
          f"{fmt_bytes(row['triton_peak_bytes']):>9s} "
          f"{fmt(row['triton_mem_ratio'], '.2f'):>5s} "
          f"{fmt_bytes(row['saved_bytes']):>9s} "
          f"{row['torch_method']:>10s} {md:>8s} {td:>8s} "
          f"{b:>6s}", flush=True)


def print_notes(gemm, started):
    """The lines under the table: rnn-run's GEMM, what the columns mean,
    and the seconds since `started` (time.monotonic())."""
    print(f"# ours gemm: {gemm}")
    print("# ratio = ours/cudnn step time (< 1: rnn-run faster), r.trl = "
          "ours/TorchRL triton; mem, m.trl = ours pk / their pk; pk = "
          "peak bytes a step allocates (rnn-run peak_bytes.measured; "
          "torch max_memory_allocated - allocated before the step); "
          "saved = rnn-run saved_bytes; peer: cudnn, or split+pack with "
          "resets (in mode bf16 both run TF32); maxdiff: vs the fp32 "
          "torch step ('!' above --check-tol, checked in fp32 only); "
          "trl diff: TorchRL in that mode vs rnn-run fp32 ('!' above "
          "--check-tol in fp32); bits: rnn-run's "
          "outputs and gradients bitwise equal over two runs")
    print(f"# {time.monotonic() - started:.0f} s")
