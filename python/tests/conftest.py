"""Shared by the test modules: compiled libraries go to a fresh cache
directory per test session (shared by its pytest-xdist workers), never to
the user's cache.

Strict runs (RNNC_TEST_STRICT=1, as ./dev.sh test and CI run the suite):
every dependency the README's set-up installs must import and rnn-compile
must be found before anything runs, and a test may skip only for what the
machine cannot have, a CUDA device; any other skip fails the run, so that
a failed install cannot turn into a green run of skips."""

import importlib
import os

import pytest

STRICT = os.environ.get("RNNC_TEST_STRICT") == "1"

# The modules of what ./dev.sh installs for the tests (PYTHON_PACKAGES).
REQUIRED_MODULES = ("torch", "numpy", "hypothesis", "torchrl", "tensordict",
                    "sb3_contrib", "stable_baselines3", "rsl_rl",
                    "gymnasium", "jax", "flax", "gymnax")

# The skip reasons a strict run accepts: no GPU on this machine, or the
# CPU standing in for it (RNNC_TEST_CUDA_AS_CPU=1) where only a GPU will do.
GPU_SKIPS = ("no CUDA device", "needs a real GPU")


def pytest_configure(config):
    if not STRICT:
        return
    missing = []
    for name in REQUIRED_MODULES:
        try:
            importlib.import_module(name)
        except Exception as e:  # an import that fails in any way
            missing.append(f"{name} ({type(e).__name__}: {e})")
    from rnnc import library
    try:
        library.find_compiler()
    except library.RNNCError as e:
        missing.append(str(e))
    if missing:
        raise pytest.UsageError(
            "RNNC_TEST_STRICT=1: the test set-up is incomplete: " +
            "; ".join(missing))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not STRICT or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = (report.longrepr[2] if isinstance(report.longrepr, tuple)
              else str(report.longrepr))
    if any(gpu in reason for gpu in GPU_SKIPS):
        return
    report.outcome = "failed"
    report.longrepr = (f"RNNC_TEST_STRICT=1: a test may skip only for want "
                       f"of a GPU, and this one skipped: {reason}")


@pytest.fixture(autouse=True, scope="session")
def cache(tmp_path_factory):
    # pytest-xdist's workers (./dev.sh test runs one per core) share one
    # cache, as the processes of a user's data-parallel job do: their
    # tests ask for many of the same libraries, compiled once under the
    # entry's lock. Tests that look at a cache directory's contents use
    # their own.
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "rnnc-cache"
        shared.mkdir(exist_ok=True)
        os.environ["RNNC_CACHE_DIR"] = str(shared)
    else:
        os.environ["RNNC_CACHE_DIR"] = str(
            tmp_path_factory.mktemp("rnnc-cache"))
