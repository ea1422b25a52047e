"""Shared by the test modules: compiled libraries go to a fresh cache
directory per test session, never to the user's cache."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def cache(tmp_path_factory):
    os.environ["RNNC_CACHE_DIR"] = str(tmp_path_factory.mktemp("rnnc-cache"))
