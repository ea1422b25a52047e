#!/usr/bin/env python3
"""Every rnn pass on every stage of the pipelines (Python 3, stdlib only).

Usage:
    tools/fuzz/fuzz-stages.py [--runs N] [--seed N] [--rnn-opt PATH]
                              [--out DIR] [--timeout S] [--quiet]

A pass given IR of another stage than the one it expects (a model that
was never differentiated, loops where it expects kernels, buffers where it
expects tensors, a module a pass already ran on) must accept it or refuse
it with an error; it must not crash, hang, or fail with no error line.
fuzz-mlir.py mutates the test inputs; this script takes real pipelines'
intermediate modules instead, unmutated:

  * models: five from rnn-run --emit=mlir (GRU L=2 with dropout, LSTM L=2
    for every T and B, CIFG with per-step reset states and bf16 storage,
    MGU, LSTM of bf16 storage) and test/Integration/Inputs/
    two-layer-lstm.mlir;
  * stages: the module after each pass of --rnn-train-pipeline,
    --rnn-infer-pipeline and --rnn-train-pipeline=target=cuda on each
    model (-mlir-print-ir-after-all), duplicates dropped;
  * passes: every flag `rnn-opt --help` lists that names an rnn pass or
    pipeline (so a new pass is covered without an edit here), plus the
    options in OPTIONS.

Every (stage, pass) pair is one run; with --runs N, N pairs drawn with
random.Random(--seed) (the same pairs for the same seed and binaries).
A run is classified as fuzz-mlir.py classifies one whose input verified:
a crash, a timeout or an internal error (exit 1 with no error line, a
failed legalization or verification, ...) is a finding, written to
DIR/<kind>-<NN>/{input.mlir,cmd.sh,stderr.txt} (the smallest input of
each), replacing an earlier run's findings; the summary goes to
stdout and DIR/summary.txt. Exit status 1 when there are findings.
"""

import argparse
import collections
import hashlib
import importlib.util
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# fuzz-mlir.py's runner and classification (its name is no module name).
_spec = importlib.util.spec_from_file_location(
    "fuzz_mlir", os.path.join(HERE, "fuzz-mlir.py"))
fuzz_mlir = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_mlir)

# rnn-run flags of each model.
MODELS = [
    ("gru-l2-dropout", ["--preset=gru", "--seq-len=5", "--batch=3",
                        "--input-size=4", "--hidden-size=6", "--layers=2",
                        "--dropout=0.3"]),
    ("lstm-l2-dynamic", ["--preset=lstm", "--dynamic", "--input-size=4",
                         "--hidden-size=5", "--layers=2"]),
    ("cifg-reset-step-bf16", ["--preset=cifg", "--seq-len=4", "--batch=2",
                              "--input-size=3", "--hidden-size=4",
                              "--reset-to=step", "--storage=bf16"]),
    ("mgu", ["--preset=mgu", "--seq-len=3", "--batch=2", "--input-size=3",
             "--hidden-size=4"]),
    ("lstm-bf16", ["--preset=lstm", "--seq-len=6", "--batch=2",
                   "--input-size=4", "--hidden-size=4", "--storage=bf16"]),
]
MODEL_FILES = ["test/Integration/Inputs/two-layer-lstm.mlir"]
PIPELINES = ["--rnn-train-pipeline", "--rnn-infer-pipeline",
             "--rnn-train-pipeline=target=cuda"]
# Pass options whose code paths the plain flags do not reach.
OPTIONS = [
    "--rnn-rematerialize=policy=gates",
    "--rnn-rematerialize=policy=chunk:2",
    "--rnn-rematerialize=policy=budget:100000",
    "--rnn-emit-c-abi=caller-stream=1",
    "--rnn-train-pipeline=target=cuda",
    "--rnn-infer-pipeline=target=cuda",
    "--rnn-train-pipeline=wavefront=1",
    "--rnn-train-pipeline=remat=budget:100000",
    "--convert-rnn-to-loops=wavefronts=1",
]
DUMP = re.compile(r"^// -----// IR Dump After (.*?) //----- //\n", re.M)


def fail(message):
    print("fuzz-stages: " + message, file=sys.stderr)
    sys.exit(2)


def pass_flags(rnn_opt):
    """Every rnn pass and pipeline flag rnn-opt lists, then OPTIONS."""
    run = subprocess.run([rnn_opt, "--help"], capture_output=True, text=True)
    flags = re.findall(r"^\s+(--(?:test-)?(?:rnn|convert-rnn)[\w-]*)\s",
                       run.stdout, re.M)
    if not flags:
        fail("%s --help lists no rnn pass" % rnn_opt)
    return sorted(set(flags)) + OPTIONS


def stages(rnn_opt, rnn_run, tmp):
    """[(origin, module text)]: each model after each pass of each
    pipeline, duplicates dropped."""
    models = []
    for name, flags in MODELS:
        run = subprocess.run([rnn_run, "--emit=mlir"] + flags,
                             capture_output=True, text=True)
        if run.returncode != 0 or "func.func" not in run.stdout:
            fail("rnn-run --emit=mlir %s: %s" % (" ".join(flags),
                                                 run.stderr.strip()))
        models.append((name, run.stdout))
    for path in MODEL_FILES:
        with open(os.path.join(ROOT, path)) as f:
            models.append((os.path.basename(path), f.read()))
    seen, found = set(), []
    model_path = os.path.join(tmp, "model.mlir")
    for name, text in models:
        with open(model_path, "w") as f:
            f.write(text)
        for pipeline in PIPELINES:
            run = subprocess.run(
                [rnn_opt, model_path, pipeline, "-mlir-print-ir-after-all",
                 "-mlir-print-ir-module-scope", "--mlir-disable-threading",
                 "-o", os.devnull], capture_output=True, text=True)
            if run.returncode != 0:
                fail("rnn-opt %s on %s: %s" % (pipeline, name,
                                               run.stderr.strip()[-500:]))
            parts = DUMP.split(run.stderr)
            for i in range(1, len(parts) - 1, 2):
                module = parts[i + 1]
                digest = hashlib.sha1(module.encode()).hexdigest()
                if digest not in seen:
                    seen.add(digest)
                    found.append(("%s %s after %s" % (name, pipeline,
                                                      parts[i]), module))
    return found


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=0,
                    help="pairs to run, drawn at random (default 0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rnn-opt",
                    default=os.path.join(ROOT, "build/bin/rnn-opt"))
    ap.add_argument("--rnn-run", default=None,
                    help="default: rnn-run beside --rnn-opt")
    ap.add_argument("--out", default="fuzz-stages-out")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--mem-limit-mb", type=int, default=4096,
                    help="RLIMIT_AS of each run; 0: none (needed for ASan)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.runs < 0:
        ap.error("--runs must be 0 (all) or a positive count, got %d"
                 % args.runs)
    if args.timeout <= 0:
        ap.error("--timeout must be positive, got %g" % args.timeout)
    rnn_run = args.rnn_run or os.path.join(
        os.path.dirname(os.path.abspath(args.rnn_opt)), "rnn-run")
    for tool in (args.rnn_opt, rnn_run):
        if not os.access(tool, os.X_OK):
            fail("%s is no executable" % tool)

    tmp = tempfile.mkdtemp(prefix="fuzz-stages-")
    try:
        return sweep(args, rnn_run, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def sweep(args, rnn_run, tmp):
    t0 = time.time()
    flags = pass_flags(args.rnn_opt)
    modules = stages(args.rnn_opt, rnn_run, tmp)
    pairs = [(m, f) for m in range(len(modules)) for f in flags]
    if args.runs and args.runs < len(pairs):
        pairs = random.Random(args.seed).sample(pairs, args.runs)
    counts = collections.Counter()
    findings = {}  # (kind, signature) -> [(origin, flag, text, stderr)]
    path = os.path.join(tmp, "stage.mlir")
    written = None
    for m, flag in sorted(pairs):
        origin, text = modules[m]
        if written != m:
            with open(path, "w") as f:
                f.write(text)
            written = m
        rc, err, timed_out = fuzz_mlir.run_one(
            args.rnn_opt, flag, path, args.timeout, args.mem_limit_mb)
        kind, signature = fuzz_mlir.classify(rc, err, timed_out, True)
        if kind == "error" and not any("error:" in line
                                       for line in err.splitlines()):
            kind, signature = "internal", "exit %s with no error line" % rc
        counts[kind] += 1
        if kind in ("crash", "timeout", "internal"):
            findings.setdefault((kind, signature), []).append(
                (origin, flag, text, err))
            if not args.quiet:
                print("%s %s on %s: %s" % (kind.upper(), flag, origin,
                                           signature), flush=True)

    # The findings of an earlier run go: DIR holds this run's.
    os.makedirs(args.out, exist_ok=True)
    for name in os.listdir(args.out):
        if re.fullmatch(r"(crash|timeout|internal)-\d+", name):
            shutil.rmtree(os.path.join(args.out, name), ignore_errors=True)
    lines = ["fuzz-stages: %d stages of %d models, %d pass flags; %d runs "
             "in %.0f s: %s" % (
                 len(modules), len(MODELS) + len(MODEL_FILES), len(flags),
                 len(pairs), time.time() - t0,
                 ", ".join("%s %d" % kv for kv in sorted(counts.items())))]
    for n, ((kind, signature), cases) in enumerate(sorted(findings.items())):
        origin, flag, text, err = min(cases, key=lambda c: len(c[2]))
        where = os.path.join(args.out, "%s-%02d" % (kind, n))
        os.makedirs(where, exist_ok=True)
        with open(os.path.join(where, "input.mlir"), "w") as f:
            f.write(text)
        with open(os.path.join(where, "cmd.sh"), "w") as f:
            f.write("%s %s < input.mlir\n" % (args.rnn_opt, flag))
        with open(os.path.join(where, "stderr.txt"), "w") as f:
            f.write(err)
        lines.append("%s (%d runs): %s\n  smallest: %s on %s -> %s" % (
            kind.upper(), len(cases), signature, flag, origin, where))
    if not findings:
        lines.append("no findings")
    summary = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(summary)
    sys.stdout.write(summary)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
