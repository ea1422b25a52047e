"""What the bench scripts share on their command lines: counts and sizes
that must be positive (argparse types, so that 0 is refused before any
run instead of giving inf, nan or an empty median), probabilities in
[0, 1], lists of known names (cells, policies, modes), the tools they run,
and the one-line exit (status 2) where a tool cannot run or refuses its
input: the tool's own last line of stderr rather than a traceback."""

import argparse
import os
import shutil
import subprocess
import sys


def _int_at_least(text, least):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if value < least:
        raise argparse.ArgumentTypeError(
            f"must be at least {least}, got {value}")
    return value


def int_at_least(least):
    """An argparse type: an integer of at least `least`."""
    def integer(text):
        return _int_at_least(text, least)
    return integer


def positive_int(text):
    """An argparse type: an integer of at least 1."""
    return _int_at_least(text, 1)


def positive_ints(text):
    """An argparse type: a comma list of integers of at least 1."""
    values = [positive_int(v) for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("no value given")
    return values


def shape_list(text):
    """An argparse type: a comma list of TxB shapes (1x8,32x64), each size
    at least 1."""
    shapes = []
    for item in text.split(","):
        sizes = item.strip().split("x")
        if len(sizes) != 2:
            raise argparse.ArgumentTypeError(f"not a TxB shape: {item!r}")
        shapes.append(tuple(positive_int(n) for n in sizes))
    return shapes


def probability(text):
    """An argparse type: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


def probabilities(text):
    """An argparse type: a comma list of numbers in [0, 1]."""
    values = [probability(v) for v in text.split(",") if v.strip()]
    if not values:
        raise argparse.ArgumentTypeError("no value given")
    return values


def name_list(choices=None):
    """An argparse type: a comma list of non-empty names, each one of
    `choices` where given."""
    def names(text):
        values = [v.strip() for v in text.split(",")]
        for v in values:
            if not v:
                raise argparse.ArgumentTypeError(
                    f"an empty name in {text!r}")
            if choices is not None and v not in choices:
                raise argparse.ArgumentTypeError(
                    f"unknown name {v!r} (expected "
                    + ", ".join(choices) + ")")
        return values
    return names


CELLS = ("lstm", "gru", "mgu", "cifg")


def nonnegative_int(text):
    """An argparse type: an integer of at least 0."""
    return _int_at_least(text, 0)


def program(text):
    """An argparse type: an executable, by path or by name on PATH."""
    found = shutil.which(text)
    if found is None:
        why = "not executable" if os.path.exists(text) else "not found"
        raise argparse.ArgumentTypeError(f"{text}: {why}")
    return found


def fail(message):
    """Exits with status 2 after one line on stderr naming the script."""
    name = os.path.basename(sys.argv[0]) or "bench"
    line = " | ".join(s.strip() for s in str(message).splitlines()
                      if s.strip())
    print(f"{name}: {line}", file=sys.stderr, flush=True)
    sys.exit(2)


def last_line(text):
    """The last line of a tool's stderr that says "error:", else its last
    non-empty line (an MLIR diagnostic is followed by the source it
    points at), or None."""
    lines = [s.strip() for s in (text or "").splitlines() if s.strip()]
    errors = [s for s in lines if "error:" in s]
    return (errors or lines or [None])[-1]


def attempt(cmd, **kwargs):
    """The CompletedProcess of `cmd` (stdout and stderr captured as text),
    whatever its exit status; a tool that cannot start at all exits the
    script (fail)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e.strerror or e}")


def run_tool(cmd, **kwargs):
    """The stdout of `cmd`; where it exits non-zero, the script exits
    (fail) with the tool's last line of stderr."""
    done = attempt(cmd, **kwargs)
    if done.returncode != 0:
        fail(last_line(done.stderr) or
             f"{os.path.basename(cmd[0])} exited with status "
             f"{done.returncode}")
    return done.stdout
