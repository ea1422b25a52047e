#!/usr/bin/env python3
"""Deterministic fuzzer for rnnc.torch's argument checking.

Usage:
    tools/fuzz/fuzz-torch.py [--seed N] [--seconds S] [--cases N]
                             [--profile campaign|ci] [--out DIR]
                             [--timeout S] [--threads N] [--rnn-compile PATH]
    tools/fuzz/fuzz-torch.py --replay DIR/<kind>-NN/case.json

Each case is a call of one of rnnc.torch's modules (a cell of the
dialect, from its cell table) with random constructor arguments (sizes,
num_layers up to above the limit, bias, batch_first, dropout,
bidirectional, proj_size, dtype, device, remat, storage; values drawn
from sensible ones, boundary ones and nonsense), a module conversion,
train or eval mode, grad / no_grad / inference_mode, CPU autocast, and
random call arguments (input rank, shape, dtype and layout, hx, is_init,
reset_state in right and wrong forms), drawn by
python/tests/torch_fuzz_cases.py (`build_case`) from a seeded
random.Random; the Hypothesis test python/tests/test_torch_fuzz.py draws
from the same builder. Cases run in a worker process, restarted after a
crash or a timeout.

The contract (`run_case`, see torch_fuzz_oracle.py): every call either
runs and matches a float64 reference written from torch.nn.LSTMCell /
GRUCell (per-step resets included; torch.nn.LSTM / GRU themselves where
no reset applies) or raises one RNNCError. Findings, grouped by a
signature (kind and message with numbers normalized):
  EXCEPTION  an exception that is not an RNNCError;
  CHAINED    an RNNCError raised while handling another exception;
  ACCEPTED   a call that ran on an input that means nothing;
  WRONG      outputs that differ from the reference's;
  SHAPE      outputs of another structure or shape than the reference's;
  DTYPE      outputs of another dtype than every input and parameter;
  NN         outputs that differ from torch.nn's in shape or dtype;
  NOGRAD     outputs that require grad when nothing does, or the reverse;
  GRAD       gradients that differ from the reference's;
  BACKWARD   a backward that raises;
  MUTATED    a call that changed an argument or a parameter;
  REPEAT     a second call that raises or gives other bits;
  CRASH      the worker died (a signal);
  TIMEOUT    no answer within --timeout seconds.
Each signature's first case is written to DIR/<kind>-<NN>/ (case.json,
outcome.txt); --replay runs one again in this process. The summary (counts
of cases that ran, were refused at construction or at the call, or were
made without a call since they have more than 2 layers; how torch.nn fared
on the same arguments; the findings) is printed and written to
DIR/summary.txt; the exit status is 1 if there was any finding.
"""

import argparse
import collections
import json
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "python"),
                os.path.join(ROOT, "python", "tests")]


def normalize(message):
    """A finding's signature: numbers and quoted values normalized."""
    first = (message or "").strip().splitlines()
    text = first[0] if first else ""
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:200]


# --------------------------------------------------------------------------
# The worker: runs the cases it reads from stdin, one JSON line each, and
# answers one JSON line each.
# --------------------------------------------------------------------------

def worker(threads):
    reply = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)   # whatever else writes to stdout goes to stderr
    import torch
    import torch_fuzz_oracle as O
    torch.set_num_threads(threads)
    for line in sys.stdin:
        case = json.loads(line)
        t0 = time.time()
        out = O.run_case(case)
        answer = out.as_dict()
        answer["seconds"] = time.time() - t0
        reply.write(json.dumps(answer) + "\n")
        reply.flush()


class Worker:
    def __init__(self, args, log):
        self.args, self.log = args, log
        self.proc = None
        self.served = 0

    def start(self):
        self.log.seek(0)
        self.log.truncate()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker",
             "--threads", str(self.args.threads)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            text=True, start_new_session=True)
        self.served = 0

    def stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None

    def run(self, case):
        """The case's outcome (a dict), or a CRASH / TIMEOUT finding."""
        if self.proc is None or self.served >= self.args.recycle:
            self.stop()
            self.start()
        self.served += 1
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        # The first case of a worker also imports torch.
        limit = self.args.timeout + (30 if self.served == 1 else 0)
        ready, _, _ = select.select([self.proc.stdout], [], [], limit)
        line = self.proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        timed_out = not ready
        self.stop() if timed_out else self.proc.wait()
        rc = None if timed_out else self.proc.returncode
        self.log.flush()
        self.log.seek(0)
        tail = self.log.read()[-4000:]
        self.proc = None
        if timed_out:
            return {"status": "finding", "kind": "TIMEOUT",
                    "message": f"no answer within {limit:g} s",
                    "trace": tail}
        return {"status": "finding", "kind": "CRASH",
                "message": f"the worker exited with {rc}"
                           f"{' (signal %d)' % -rc if rc and rc < 0 else ''}",
                "trace": tail}


# --------------------------------------------------------------------------
# The campaign
# --------------------------------------------------------------------------

def compiler_state(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns) if os.access(path, os.X_OK) \
        else None


def wait_for_compiler(path, quiet):
    """Waits until rnn-compile exists and has not changed for 10 s (a build
    in progress replaces it); returns the seconds waited."""
    t0 = time.time()
    last, since = compiler_state(path), time.time()
    while last is None or time.time() - since < 10:
        if time.time() - t0 > 1800:
            sys.exit("fuzz-torch: %s missing or changing for 30 minutes" %
                     path)
        time.sleep(2)
        now = compiler_state(path)
        if now != last:
            last, since = now, time.time()
    if not quiet:
        print("fuzz-torch: waited %.0f s for %s" % (time.time() - t0, path),
              flush=True)
    return time.time() - t0


def top(counter, n=8):
    return ["    %5d  %s" % (k, m) for m, k in counter.most_common(n)]


def campaign(args):
    import torch_fuzz_cases as F
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log = tempfile.TemporaryFile("w+")
    work = Worker(args, log)
    counts = collections.Counter()
    refused = collections.Counter()
    nn_raised_refused = collections.Counter()
    nn_raised_ran = collections.Counter()
    nn_ran_refused = collections.Counter()
    checked = collections.Counter()
    nn_raised_ran_case = {}
    findings = {}
    waited = 0.0
    t0 = time.time()
    cases = 0
    try:
        while time.time() - t0 < args.seconds and \
                (not args.cases or cases < args.cases):
            case = F.build_case(F.RandomSource(rng), args.profile)
            cases += 1
            for attempt in range(3):
                before = compiler_state(args.compiler)
                out = work.run(case)
                # rnn-compile replaced meanwhile (a build next door): the
                # case runs again once it is in place, with a fresh worker.
                if before is not None and \
                        compiler_state(args.compiler) == before:
                    break
                waited += wait_for_compiler(args.compiler, args.quiet)
                work.stop()
            status = out["status"]
            counts[status] += 1
            for what in out.get("checked") or ():
                checked[what] += 1
            if status == "refused":
                counts["refused at " + out["stage"]] += 1
                refused[normalize(out["message"])] += 1
            nn_said = out.get("nn") or ""
            if nn_said.startswith("raised"):
                if status == "refused":
                    nn_raised_refused[normalize(nn_said)] += 1
                elif status == "ran":
                    nn_raised_ran[normalize(nn_said)] += 1
                    nn_raised_ran_case.setdefault(normalize(nn_said), case)
            elif nn_said == "ran" and status == "refused":
                nn_ran_refused[normalize(out["message"])] += 1
            if status == "finding":
                sig = (out["kind"], normalize(out["message"]))
                f = findings.setdefault(sig, {"count": 0, "case": case,
                                              "out": out})
                f["count"] += 1
                if not args.quiet:
                    print("[%d] %s: %s" % (cases, out["kind"],
                                           out["message"][:300]), flush=True)
            if not args.quiet and cases % 100 == 0:
                print("[%d] %.0f s: %s" % (
                    cases, time.time() - t0,
                    ", ".join("%d %s" % (n, k) for k, n in
                              sorted(counts.items()))), flush=True)
    finally:
        work.stop()
    elapsed = time.time() - t0
    ran, made = counts["ran"], counts["constructed"]
    summary = [
        "fuzz-torch: %d cases in %.0f s (seed %d, profile %s): %d ran, "
        "%d refused with RNNCError (%d at construction, %d at the call), "
        "%d made without a call (more than %d layers), %d findings "
        "(%d signatures)" % (
            cases, elapsed, args.seed, args.profile, ran, counts["refused"],
            counts["refused at construct"], counts["refused at call"], made,
            F.MAX_RUN_LAYERS, counts["finding"], len(findings))]
    if waited:
        summary.append("waited %.0f s for rnn-compile to be rebuilt" %
                       waited)
    summary.append(
        "calls that ran, compared on: values %d (%d with resets), shapes and "
        "finiteness only %d (training dropout, low precision with large "
        "values), gradients %d, torch.nn's outputs %d" % (
            checked["values"], checked["resets"], checked["shapes"],
            checked["gradients"], checked["torch.nn"]))
    summary.append("torch.nn raised, rnnc refused: %d" %
                   sum(nn_raised_refused.values()))
    summary += top(nn_raised_refused)
    summary.append("torch.nn raised, rnnc ran (checked against the "
                   "reference): %d" % sum(nn_raised_ran.values()))
    summary += top(nn_raised_ran)
    for sig, case in sorted(nn_raised_ran_case.items()):
        summary.append("    e.g. %s: %s" % (sig[:60], json.dumps(
            case, sort_keys=True)))
    summary.append("torch.nn ran, rnnc refused: %d" %
                   sum(nn_ran_refused.values()))
    summary += top(nn_ran_refused)
    summary.append("rnnc's most frequent refusals:")
    summary += top(refused, 12)
    for i, ((kind, sig), f) in enumerate(sorted(findings.items())):
        d = os.path.join(args.out, "%s-%02d" % (kind.lower(), i))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "case.json"), "w") as fh:
            fh.write(json.dumps(f["case"], indent=1, sort_keys=True) + "\n")
        with open(os.path.join(d, "outcome.txt"), "w") as fh:
            fh.write("%s: %s\n\n%s" % (kind, f["out"]["message"],
                                      f["out"].get("trace") or ""))
        summary.append("%s x%d: %s" % (kind, f["count"],
                                       f["out"]["message"][:300]))
        summary.append("    case: %s" % json.dumps(f["case"],
                                                   sort_keys=True))
        summary.append("    replay: %s --replay %s" % (
            os.path.relpath(os.path.abspath(__file__)),
            os.path.join(d, "case.json")))
    summary.append("findings: %d" % len(findings))
    with open(os.path.join(args.out, "summary.txt"), "w") as fh:
        fh.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 1 if findings else 0


def replay(args):
    import torch
    import torch_fuzz_oracle as O
    torch.set_num_threads(args.threads)
    text = args.replay
    if os.path.exists(text):
        with open(text) as fh:
            text = fh.read()
    case = json.loads(text)
    out = O.run_case(case)
    print(json.dumps({k: v for k, v in out.as_dict().items()
                      if k != "trace"}, indent=1))
    if out.trace:
        print(out.trace)
    return 1 if out.status == "finding" else 0


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=600,
                    help="stop after this long (default 600)")
    ap.add_argument("--cases", type=int, default=0,
                    help="stop after this many cases (0: --seconds only)")
    ap.add_argument("--profile", default="campaign",
                    choices=["campaign", "ci"],
                    help="the sizes drawn (ci: fewer, fewer libraries)")
    ap.add_argument("--out", default="fuzz-torch-out")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a case may take (compiling included)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch.set_num_threads in the worker")
    ap.add_argument("--recycle", type=int, default=500,
                    help="cases a worker runs before a fresh one starts")
    ap.add_argument("--rnn-compile", default=None,
                    help="rnn-compile (default: $RNNC_COMPILE, PATH, "
                         "build/bin)")
    ap.add_argument("--replay", metavar="CASE",
                    help="run one case (a case.json or its text) here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    if args.worker:
        return worker(args.threads)
    compiler = args.rnn_compile or os.environ.get("RNNC_COMPILE") or \
        shutil.which("rnn-compile") or \
        os.path.join(ROOT, "build", "bin", "rnn-compile")
    args.compiler = os.environ["RNNC_COMPILE"] = os.path.abspath(compiler)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "tests")]
        + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
           if p])
    if args.replay:
        return replay(args)
    return campaign(args)


if __name__ == "__main__":
    sys.exit(main())
