"""What the bench scripts share on their command lines: counts and sizes
that must be positive (argparse types, so that 0 is refused before any
run instead of giving inf, nan or an empty median), the tools they run,
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
    """The last non-empty line of a tool's stderr, or None."""
    lines = [s.strip() for s in (text or "").splitlines() if s.strip()]
    return lines[-1] if lines else None


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
