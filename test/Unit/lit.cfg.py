# -*- Python -*-
# Runs the GoogleTest executables built under unittests/ (names end in
# "Tests") as lit tests, one lit test per GoogleTest case.

import os

import lit.formats

config.name = "RNNC-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.rnn_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

# Sanitizer settings of ./dev.sh test-sanitize reach the unit tests.
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
