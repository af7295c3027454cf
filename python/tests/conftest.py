"""Shared paths and helpers of the Python tests (run from ctest, or with PYTHONPATH=build/release/python)."""
import os
import subprocess

import pytest

SOURCE = os.environ.get("GEXEC_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
GEXEC_BIN = os.environ.get("GEXEC_BIN", os.path.join(SOURCE, "build", "release", "gexec"))


def graph_path(name):
    return os.path.join(SOURCE, "graphs", name)


def bad_path(name):
    return os.path.join(SOURCE, "tests", "data", "bad", name)


def cli(*args):
    """The command line's exit status, stdout and stderr."""
    if not os.path.exists(GEXEC_BIN):
        pytest.skip(f"the gexec binary is not at {GEXEC_BIN} (set GEXEC_BIN)")
    p = subprocess.run([GEXEC_BIN, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr
