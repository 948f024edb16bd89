"""The loop benchmark's intervals against published values, so its table's CIs can be trusted."""

import importlib.util
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("loop_bench", Path(__file__).parent.parent / "benchmarks" / "loop.py")
loop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loop)


def test_wilson_matches_the_closed_forms():
    # 0 of n: the upper bound is z^2 / (n + z^2) = 3.8416 / 11.8416
    assert loop.wilson(0, 8) == (0.0, pytest.approx(0.3244, abs=1e-4))
    # 4 of 8: symmetric about 0.5, the textbook 0.2152-0.7848
    lo, hi = loop.wilson(4, 8)
    assert lo == pytest.approx(0.2152, abs=1e-4) and hi == pytest.approx(0.7848, abs=1e-4)
    assert loop.wilson(0, 0) == (0.0, 0.0)


def test_newcombe_matches_his_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873-890, example (a): 56/70 - 48/80, method 10: 0.0524 to 0.3339
    d, lo, hi = loop.newcombe(56, 70, 48, 80)
    assert d == pytest.approx(0.2)
    assert lo == pytest.approx(0.0524, abs=1e-4) and hi == pytest.approx(0.3339, abs=1e-4)
    # 9/10 - 3/10, his example (b): 0.1705 to 0.8090
    d, lo, hi = loop.newcombe(9, 10, 3, 10)
    assert lo == pytest.approx(0.1705, abs=1e-4) and hi == pytest.approx(0.8090, abs=1e-4)
