#!/usr/bin/env python3
"""Deterministic mutation fuzzer for rnn-opt (Python 3, stdlib only).

Usage:
    tools/fuzz/fuzz-mlir.py [--seed N] [--runs N] [--rnn-opt PATH]
                            [--out DIR] [--timeout S] [--minimize]
    tools/fuzz/fuzz-mlir.py --write-seeds DIR

Seeds: every test/**/*.mlir (test/Integration/Inputs/*.mlir included), split
at `// -----` lines into separate inputs. Each mutant is a seed input with
0-3 text mutations chosen by random.Random(--seed) (same seed, same binary:
same mutants, same runs):
  * a shape dimension in tensor<...>/memref<...> becomes one of
    0, 1, 2, 3, 7, 64, 2**31, 2**62, -1;
  * an integer attribute (`name = 4 : i64`, `block(4)`, `chunk(4)`) likewise;
  * a random line is deleted / duplicated;
  * two distinct operand names (`%a`) on one line are swapped;
  * one `f32` becomes f16, f64, i32 or index.
Mutants are deduplicated. Each mutant is first run through plain `rnn-opt`
(parse + verify); if that is rejected with a normal error the mutant is
done, otherwise it goes through every pass flag in PASSES. Every rnn-opt
invocation (the parse gate included) counts against --runs. Each run gets
stdin from the mutant file in a temporary directory, stdout discarded,
--timeout seconds (default 20) and an address-space limit (--mem-limit-mb).

Classification of one run:
  CRASH     exit status negative or >= 128 (a signal), or stderr contains
            "Stack dump", "LLVM ERROR", "Assertion", "UNREACHABLE",
            "Segmentation", "terminate called", "AddressSanitizer" or
            "runtime error:".
  TIMEOUT   no exit within --timeout seconds (the process group is killed).
  INTERNAL  exit 1 with an internal-looking error (the input verified, so
            the IR a pass produced is to blame): "failed to legalize",
            "failed to verify", an error from an llvm./gpu./nvvm. op,
            "out-of-bounds", an empty `error: ` message,
            "memory free side-effect" or another of upstream buffer
            deallocation's precondition messages, or a func.call symbol-use error
            (wrong number/type of operands or results for the callee).
  anything else (exit 0, or a normal diagnostic) is fine.

Findings are grouped by a signature: the first relevant stderr line with
the location prefix/paths stripped and digits replaced by N (for crashes
without a message, the first stack frame naming a function). For each
signature the smallest mutant seen is written to --out DIR as
<kind>-<NN>/{input.mlir,cmd.sh,stderr.txt}; --minimize additionally
reduces each one by greedy line deletion (runs not counted in --runs) into
input.min.mlir. The summary (runs, crashes, timeouts, internal errors by
signature) is printed and also written to DIR/summary.txt.

The binary is copied to the temporary directory first (--no-snapshot to
not), so that a rebuild during the run does not disturb it.
"""

import argparse
import collections
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PASSES = [
    "--rnn-train-pipeline",
    "--rnn-infer-pipeline",
    "--rnn-train-pipeline=target=cuda",
    "--rnn-infer-pipeline=target=cuda",
    "--rnn-train-pipeline=out-params=1 split=1 arena=1 c-abi=1",
    "--rnn-plan-memory",
    "--rnn-split-training",
    "--rnn-emit-c-abi",
    "--rnn-early-free",
    "--rnn-place-in-arena",
    "--test-rnn-liveness",
    "--rnn-autodiff",
    "--convert-rnn-to-loops",
]

VALUES = [0, 1, 2, 3, 7, 64, 2**31, 2**62, -1]
TYPES = ["f16", "f64", "i32", "index"]

CRASH_PATTERNS = ["Stack dump", "LLVM ERROR", "Assertion", "UNREACHABLE",
                  "Segmentation", "terminate called", "AddressSanitizer",
                  "runtime error:"]
INTERNAL_RES = [re.compile(p) for p in [
    r"failed to legalize",
    r"failed to verify",
    r"error: '(llvm|gpu|nvvm)\.",
    r"out-of-bounds",
    r"error: *$",
    r"memory free side-effect",
    # Upstream buffer deallocation's preconditions.
    r"unknown memory side effects|Only structured control-flow loops|"
    r"operations with attached regions need to|NoTerminator trait|"
    r"Terminators (must implement|with more than one successor)",
    # func.call's symbol-use checks: the input verified, so a pass made it.
    r"'func\.call' op (incorrect number of (operands|results) for callee|"
    r"(operand|result) type mismatch|'\S+' does not reference a valid)",
]]
GENERIC_CRASH_LINE = re.compile(
    r"^(PLEASE submit a bug report|Stack dump:|Stack dump without symbol|"
    r"\s*#\d+ 0x|\s*\d+\.\s+Program arguments|\s*\d+\.\s+Running pass|"
    r"\s*0x[0-9a-f]+|==\d+==|=+$|AddressSanitizer|SUMMARY: |"
    r"UndefinedBehaviorSanitizer:DEADLYSIGNAL)")


def split_inputs(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    parts, cur = [], []
    for line in text.splitlines(keepends=True):
        if re.match(r"^\s*// -----\s*$", line):
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(line)
    parts.append("".join(cur))
    return [p for p in parts if re.search(r"^\s*[^/\s]", p, re.M)]


def load_seeds():
    files = []
    for d, _, names in os.walk(os.path.join(ROOT, "test")):
        files += [os.path.join(d, n) for n in names if n.endswith(".mlir")]
    seeds = []
    for f in sorted(files):
        for i, p in enumerate(split_inputs(f)):
            seeds.append((os.path.relpath(f, ROOT) + "#%d" % i, p))
    return seeds


# ---------------------------------------------------------------- mutations

def _replace_span(text, start, end, new):
    return text[:start] + new + text[end:]


def mut_shape(rng, text):
    spans = []
    for m in re.finditer(r"\b(?:tensor|memref)<([^<>]*)", text):
        for d in re.finditer(r"(-?\d+|\?)x", m.group(1)):
            if d.group(1) != "?":
                spans.append((m.start(1) + d.start(1), m.start(1) + d.end(1)))
    if not spans:
        return None
    s, e = rng.choice(spans)
    return _replace_span(text, s, e, str(rng.choice(VALUES)))


def mut_attr(rng, text):
    spans = []
    for m in re.finditer(r"\b[\w.]+ = (-?\d+) : i\d+", text):
        spans.append(m.span(1))
    for m in re.finditer(r"\b(?:block|chunk)\((-?\d+)\)", text):
        spans.append(m.span(1))
    if not spans:
        return None
    s, e = rng.choice(spans)
    return _replace_span(text, s, e, str(rng.choice(VALUES)))


def _code_lines(lines):
    return [i for i, l in enumerate(lines)
            if l.strip() and not l.lstrip().startswith("//")]


def mut_delete(rng, text):
    lines = text.splitlines(keepends=True)
    idx = _code_lines(lines)
    if not idx:
        return None
    del lines[rng.choice(idx)]
    return "".join(lines)


def mut_duplicate(rng, text):
    lines = text.splitlines(keepends=True)
    idx = _code_lines(lines)
    if not idx:
        return None
    i = rng.choice(idx)
    lines.insert(i, lines[i])
    return "".join(lines)


OPERAND = re.compile(r"%[A-Za-z0-9_$.\-]+")


def mut_swap(rng, text):
    lines = text.splitlines(keepends=True)
    cands = [i for i in _code_lines(lines)
             if len(set(OPERAND.findall(lines[i]))) >= 2]
    if not cands:
        return None
    i = rng.choice(cands)
    toks = list(OPERAND.finditer(lines[i]))
    a, b = rng.sample(range(len(toks)), 2)
    if toks[a].group() == toks[b].group():
        return None
    a, b = sorted((a, b))
    ta, tb = toks[a], toks[b]
    l = lines[i]
    lines[i] = (l[:ta.start()] + tb.group() + l[ta.end():tb.start()]
                + ta.group() + l[tb.end():])
    return "".join(lines)


F32 = re.compile(r"(?:(?<=[\d?]x)|(?<![\w]))f32(?!\w)")


def mut_type(rng, text):
    spans = [m.span() for m in F32.finditer(text)]
    if not spans:
        return None
    s, e = rng.choice(spans)
    return _replace_span(text, s, e, rng.choice(TYPES))


MUTATORS = [mut_shape, mut_attr, mut_delete, mut_duplicate, mut_swap, mut_type]


def mutate(rng, text):
    n = rng.choice([0, 1, 1, 1, 2, 2, 3])
    applied = []
    for _ in range(n):
        for _ in range(8):
            m = rng.choice(MUTATORS)
            new = m(rng, text)
            if new is not None and new != text:
                text = new
                applied.append(m.__name__[4:])
                break
    return text, applied


# ---------------------------------------------------------------- running

def _limits(mem_mb):
    def f():
        if mem_mb:
            b = mem_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (b, b))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return f


def run_one(binary, flag, path, timeout, mem_mb):
    args = [binary] + ([flag] if flag else [])
    with open(path, "rb") as stdin:
        p = subprocess.Popen(args, stdin=stdin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True,
                             preexec_fn=_limits(mem_mb))
        try:
            _, err = p.communicate(timeout=timeout)
            return p.returncode, err.decode("utf-8", "replace"), False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, err = p.communicate()
            return None, err.decode("utf-8", "replace"), True


def normalize(line):
    line = re.sub(r"^\S*<stdin>:\d+:\d+:\s*", "", line.strip())
    line = re.sub(r"(/[\w.+\-]+)+/", "", line)        # strip directories
    line = re.sub(r"0x[0-9a-fA-F]+", "0xN", line)
    line = re.sub(r"\d+", "N", line)
    return line[:200]


def classify(rc, err, timed_out, gate_ok):
    """Returns (kind, signature) with kind in crash/timeout/internal/error/ok."""
    lines = err.splitlines()
    if timed_out:
        return "timeout", normalize(lines[0]) if lines else "(no output)"
    signal_exit = rc is not None and (rc < 0 or rc >= 128)
    if signal_exit or any(p in err for p in CRASH_PATTERNS):
        sig = None
        for l in lines:
            if l.strip() and not GENERIC_CRASH_LINE.match(l):
                sig = normalize(l)
                break
        if sig is None:
            # No message (a plain signal): name the first frame in the
            # project's sources, else the first named frame.
            frames = [l for l in lines if re.match(r"\s*#\d+ 0x", l)]
            own = [l for l in frames if ROOT + "/" in l]
            for f in own + frames:
                m = re.search(r"0x[0-9a-f]+ (?:in )?(\S.*?) \(?(/\S+)?\)?$",
                              f.strip())
                if m and not re.search(r"llvm::sys::|SignalHandler|"
                                       r"__interceptor|__restore_rt|"
                                       r"^\(/|^(raise|abort|__GI_)", m.group(1)):
                    where = re.sub(r"[+)].*", "", os.path.basename(m.group(2) or ""))
                    sig = "in " + normalize(m.group(1) + " " + where)
                    break
            asan = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", err)
            if asan:
                sig = "ASan %s %s" % (asan.group(1), sig or "")
        if sig is None:
            sig = "(no message)"
        if rc is not None and rc < 0:
            sig = "signal %d: %s" % (-rc, sig)
        return "crash", sig
    if rc == 0:
        return "ok", ""
    if gate_ok and rc == 1:
        for l in lines:
            if any(r.search(l) for r in INTERNAL_RES):
                return "internal", normalize(l)
    return "error", normalize(lines[0]) if lines else "(no output)"


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1000,
                    help="budget of rnn-opt invocations (default 1000)")
    ap.add_argument("--rnn-opt", default=os.path.join(ROOT, "build/bin/rnn-opt"))
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--mem-limit-mb", type=int, default=4096,
                    help="RLIMIT_AS of each run; 0: none (needed for ASan)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run --rnn-opt in place instead of a copy")
    ap.add_argument("--minimize", action="store_true",
                    help="reduce each finding by greedy line deletion")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--write-seeds", metavar="DIR",
                    help="write the seed inputs to DIR, one file each, and "
                         "exit (the libFuzzer target's seed corpus)")
    args = ap.parse_args()

    if args.write_seeds:
        os.makedirs(args.write_seeds, exist_ok=True)
        for i, (_, text) in enumerate(load_seeds()):
            with open(os.path.join(args.write_seeds, "seed-%04d.mlir" % i),
                      "w") as fh:
                fh.write(text)
        return 0

    rng = random.Random(args.seed)
    seeds = load_seeds()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="fuzz-mlir-")
    binary = args.rnn_opt
    if not args.no_snapshot:
        binary = os.path.join(tmp, "rnn-opt")
        shutil.copy2(args.rnn_opt, binary)
    mutant_path = os.path.join(tmp, "mutant.mlir")

    runs = 0
    counts = collections.Counter()
    # (kind, sig) -> dict(count, flags, best=(size, text, flag, err, origin))
    findings = {}
    pass_errors = collections.Counter()  # normal errors after the gate
    seen = set()
    mutants = rejected = 0
    t0 = time.time()

    def record(kind, sig, flag, text, err, origin):
        f = findings.setdefault((kind, sig), {"count": 0, "flags": set(),
                                              "best": None})
        f["count"] += 1
        f["flags"].add(flag or "(parse)")
        if f["best"] is None or len(text) < len(f["best"][1]):
            f["best"] = (len(text), text, flag, err, origin)

    stall = 0
    while runs < args.runs and stall < 1000:
        name, base = rng.choice(seeds)
        text, applied = mutate(rng, base)
        h = hashlib.sha1(text.encode()).hexdigest()
        if h in seen:
            stall += 1
            continue
        stall = 0
        seen.add(h)
        mutants += 1
        origin = "%s [%s]" % (name, ",".join(applied) or "unmutated")
        with open(mutant_path, "w") as fh:
            fh.write(text)
        gate_ok = None
        for flag in [None] + PASSES:
            if runs >= args.runs:
                break
            rc, err, to = run_one(binary, flag, mutant_path, args.timeout,
                                  args.mem_limit_mb)
            runs += 1
            kind, sig = classify(rc, err, to, bool(gate_ok))
            counts[kind] += 1
            if kind == "error" and flag is not None:
                pass_errors[sig] += 1
            if kind in ("crash", "timeout", "internal"):
                record(kind, sig, flag, text, err, origin)
                if not args.quiet:
                    print("[%d] %s %s %s: %s" % (runs, kind.upper(),
                          flag or "(parse)", origin, sig), flush=True)
            if flag is None:
                gate_ok = rc == 0 and kind == "ok"
                if not gate_ok:
                    rejected += 1
                    break
        if not args.quiet and mutants % 200 == 0:
            print("... %d runs, %d mutants, %.0fs" % (runs, mutants,
                  time.time() - t0), flush=True)

    elapsed = time.time() - t0

    def cmd_for(flag, path):
        return "%s %s< %s" % (args.rnn_opt, (flag + " ") if flag else "", path)

    def still(kind, sig, flag, text):
        with open(mutant_path, "w") as fh:
            fh.write(text)
        rc, err, to = run_one(binary, flag, mutant_path, args.timeout,
                              args.mem_limit_mb)
        if kind == "internal":
            g, _, _ = run_one(binary, None, mutant_path, args.timeout,
                              args.mem_limit_mb)
            return classify(rc, err, to, g == 0) == (kind, sig)
        return classify(rc, err, to, False) == (kind, sig)

    def minimize(kind, sig, flag, text):
        lines = text.splitlines(keepends=True)
        # Drop comments first, then single lines until nothing more goes.
        nc = [l for l in lines if not l.lstrip().startswith("//")]
        if nc != lines and still(kind, sig, flag, "".join(nc)):
            lines = nc
        changed = True
        while changed:
            changed = False
            i = len(lines) - 1
            while i >= 0:
                cand = lines[:i] + lines[i + 1:]
                if cand and still(kind, sig, flag, "".join(cand)):
                    lines = cand
                    changed = True
                i -= 1
        return "".join(lines)

    order = {"crash": 0, "timeout": 1, "internal": 2}
    out_lines = []
    p = out_lines.append
    p("fuzz-mlir: seed %d, %d seed inputs, %d mutants (%d rejected by the "
      "parse/verify gate), %d runs in %.0f s (%.3f s/run)"
      % (args.seed, len(seeds), mutants, rejected, runs, elapsed,
         elapsed / max(runs, 1)))
    p("binary: %s" % args.rnn_opt)
    p("runs: %d  ok: %d  normal errors: %d  crashes: %d  timeouts: %d  "
      "internal errors: %d" % (runs, counts["ok"], counts["error"],
                               counts["crash"], counts["timeout"],
                               counts["internal"]))
    n = collections.Counter()
    for (kind, sig), f in sorted(findings.items(),
                                 key=lambda kv: (order[kv[0][0]],
                                                 -kv[1]["count"])):
        n[kind] += 1
        d = os.path.join(args.out, "%s-%02d" % (kind, n[kind]))
        os.makedirs(d, exist_ok=True)
        _, text, flag, err, origin = f["best"]
        with open(os.path.join(d, "input.mlir"), "w") as fh:
            fh.write("// origin: %s\n" % origin + text)
        with open(os.path.join(d, "stderr.txt"), "w") as fh:
            fh.write(err)
        cmd = cmd_for(flag, os.path.abspath(os.path.join(d, "input.mlir")))
        if args.minimize:
            small = minimize(kind, sig, flag, text)
            with open(os.path.join(d, "input.min.mlir"), "w") as fh:
                fh.write(small)
            cmd = cmd_for(flag, os.path.abspath(
                os.path.join(d, "input.min.mlir")))
        with open(os.path.join(d, "cmd.sh"), "w") as fh:
            fh.write("#!/bin/sh\n%s\n" % cmd)
        p("%-8s x%-5d %s\n         flags: %s\n         repro: %s"
          % (kind.upper(), f["count"], sig, " ".join(sorted(f["flags"])),
             os.path.join(d, "cmd.sh")))
    if pass_errors:
        p("normal errors of the passes on verified mutants (top 15, not "
          "findings; check for internal-looking ones):")
        for sig, c in pass_errors.most_common(15):
            p("  x%-5d %s" % (c, sig))
    summary = "\n".join(out_lines) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w") as fh:
        fh.write(summary)
    print(summary, end="")
    shutil.rmtree(tmp, ignore_errors=True)
    # Internal-looking errors are findings too.
    findings = counts["crash"] + counts["timeout"] + counts["internal"]
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
