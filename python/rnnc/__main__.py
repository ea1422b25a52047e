"""`python3 -m rnnc`: fill, list and clear the cache of compiled libraries.

    python3 -m rnnc precompile [--cache-dir DIR] [--jobs N] [--file F] REQ...
    python3 -m rnnc cache dir|list|clear [--cache-dir DIR]

A request REQ is a JSON object of `rnnc.compile_model`'s arguments, or the
same as `key=value,...` (`cell=lstm,seq_len=32,batch=16,input_size=8,
hidden_size=32,layers=2,remat=chunk:8`; `seq_len=none,batch=none` for the
library of every shape that rnnc.torch runs on the CPU;
`entries=infer+train+fwd+bwd` for entry points other than those
rnnc.torch calls); `--file` reads a
JSON list of objects. `precompile` prints the entry directory of each request, so that
an image can be built with its cache filled for machines without the
compiler (set RNNC_CACHE_DIR to it there). `cache` acts on --cache-dir,
else on the default cache and the per-user temporary cache that stands in
for it where it cannot be written. Errors in requests and in the cache
exit with status 1, flags given bad values with argparse's status 2, an
interrupt (Ctrl-C) with 130.
"""

import argparse
import json
import os
import re
import sys

from . import _cache, library

# The types of compile_model's arguments given as key=value.
_INTEGERS = ("seq_len", "batch", "input_size", "hidden_size", "layers",
             "gemm_rows")
# None: seq_len and batch both, for a library of every shape.
_NULLABLE = ("chip", "storage", "seq_len", "batch")
_BOOLEANS = ("wavefront",)


def _parse_request(text):
    """A request from the command line: a JSON object or key=value,..."""
    text = text.strip()
    if text.startswith("{"):
        try:
            request = json.loads(text)
        except ValueError as e:
            raise library.RNNCError(f"not a JSON object: {text}: {e}")
        if not isinstance(request, dict):
            raise library.RNNCError(f"not a JSON object: {text}")
        return request
    request = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep:
            raise library.RNNCError(f"expected key=value, got {item!r} in "
                                    f"{text!r}")
        value = value.strip()
        if key in request:
            raise library.RNNCError(f"{key} is given twice in {text!r}")
        if key in _NULLABLE and value.lower() in ("", "none", "null"):
            request[key] = None
            continue
        try:
            if key in _INTEGERS:
                value = int(value)
            elif key == "dropout":
                value = float(value)
        except ValueError:
            raise library.RNNCError(f"{key}={value!r} is not a number")
        if key == "entries":
            # infer+fwd+bwd: the pairs are separated by commas.
            value = value.split("+")
        if key in _BOOLEANS:
            if value.lower() not in ("true", "false", "1", "0"):
                raise library.RNNCError(f"{key}={value!r} is not true or "
                                        f"false")
            value = value.lower() in ("true", "1")
        request[key] = value
    return request


def _human(count):
    """A size in bytes, for people."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else \
                f"{count:.1f} {unit}"
        count /= 1024


def _count(count):
    """`count` libraries, in words."""
    return f"{count} {'library' if count == 1 else 'libraries'}"


def _value(value):
    """A request's value as a request on the command line gives it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "+".join(map(str, value))
    return str(value)


def _list(directory):
    """Prints a line per library of the cache, then their count, how many
    are damaged and their size; the directories that cannot be listed are
    an RNNCError after that."""
    unlisted = []
    entries = _cache._entries(directory, unlisted)
    if not entries and not unlisted:
        print(f"{directory or library.cache_dir()}: no libraries")
    elif entries:
        _print(entries)
    if unlisted:
        raise library.RNNCError("; ".join(unlisted))


def _print(entries):
    """The lines of `_list` for `entries`."""
    total = damaged = 0
    for entry in entries:
        total += entry["bytes"]
        request = entry["request"]
        # seq_len=none batch=none: the library of every shape.
        what = "?" if request is None else " ".join(
            f"{k}={_value(v)}" for k, v in request.items()
            if (v is not None or k in ("seq_len", "batch")) and
            not (k == "dropout" and v == 0.0))
        state = "" if entry["state"] == "complete" else \
            f"  [damaged: {entry['state']}]"
        damaged += bool(state)
        copy = re.search(r"\.cuda([0-9]+)$", entry["path"])
        if copy:
            state += f"  (copy for cuda:{copy.group(1)})"
        print(f"{entry['path']}  {_human(entry['bytes'])}  {what}{state}")
    print(_count(len(entries)) +
          (f" ({damaged} damaged)" if damaged else "") +
          f", {_human(total)}")


def _directory(text):
    """--cache-dir's value: a path, not empty (an empty one would name the
    default cache)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a directory, got an "
                                         "empty path")
    return text


def _jobs(text):
    """--jobs's value: a positive int."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int, got "
                                         f"{text!r}")
    return count


def main(argv=None):
    """Runs a command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python3 -m rnnc",
        description="Fill, list and clear rnnc's cache of compiled "
                    "libraries.")
    commands = parser.add_subparsers(dest="command", required=True)
    pre = commands.add_parser(
        "precompile", help="compile libraries into the cache ahead of use")
    pre.add_argument("requests", nargs="*", metavar="REQUEST",
                     help="compile_model's arguments: a JSON object or "
                          "key=value,...")
    pre.add_argument("--file", action="append", default=[],
                     help="a JSON file holding a list of requests")
    pre.add_argument("--cache-dir", type=_directory,
                     help="the cache directory to fill (default: "
                          "$RNNC_CACHE_DIR, else ~/.cache/rnnc)")
    pre.add_argument("--jobs", type=_jobs, default=1,
                     help="compiles to run at once (default 1)")
    cache = commands.add_parser("cache", help="show or clear the cache")
    cache.add_argument("action", choices=("dir", "list", "clear"))
    cache.add_argument("--cache-dir", type=_directory,
                       help="the cache directory (default: "
                            "$RNNC_CACHE_DIR, else ~/.cache/rnnc; list "
                            "and clear also the per-user temporary cache)")
    args = parser.parse_args(argv)
    try:
        if args.command == "precompile":
            requests = [_parse_request(text) for text in args.requests]
            for name in args.file:
                try:
                    f = open(name)
                except OSError as e:
                    pre.error(f"argument --file: cannot read {name}: "
                              f"{e.strerror or e}")
                with f:
                    try:
                        listed = json.load(f)
                    except ValueError as e:
                        raise library.RNNCError(f"{name}: not JSON: {e}") \
                            from None
                if not isinstance(listed, list) or \
                        not all(isinstance(r, dict) for r in listed):
                    raise library.RNNCError(f"{name}: expected a JSON list "
                                            f"of requests (objects)")
                requests.extend(listed)
            if not requests:
                pre.error("no requests (give REQUEST or --file)")
            for directory in library.precompile(requests, args.cache_dir,
                                                jobs=args.jobs):
                print(directory)
        elif args.action == "dir":
            print(os.path.abspath(args.cache_dir) if args.cache_dir
                  else library.cache_dir())
            reason = None if args.cache_dir else \
                _cache._unwritable(library.cache_dir(), create=False)
            if reason:
                print(f"rnnc: it cannot be written ({reason}): compiled "
                      f"libraries go to {_cache._fallback_path()}",
                      file=sys.stderr)
        elif args.action == "list":
            _list(args.cache_dir)
        else:
            print(f"removed {_count(_cache._clear(args.cache_dir)[1])}")
    except (library.RNNCError, OSError, ValueError) as e:
        print(f"rnnc: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        # A compile cut short leaves nothing at an entry's name (each is
        # written under a temporary name, removed on the way out).
        print("rnnc: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
