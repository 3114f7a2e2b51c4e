"""numpy's OpenBLAS runs on one thread once xmemo is imported (its spinning workers cost
the vector leg twice its CPU), unless the environment chose a number."""

import os
import subprocess
import sys

import pytest

PROBE = """
import ctypes, glob, os, xmemo, numpy
lib = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*.so*"))[0])
print(lib.scipy_openblas_get_num_threads64_())
"""


def blas_threads(env_value: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def test_openblas_gets_one_thread_by_default():
    assert blas_threads(None) == 1


def test_an_explicit_setting_is_kept():
    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS caps its threads at the cores it sees")
    assert blas_threads("2") == 2
