import shutil

import pytest

from .util import NVCC


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: long-running test (nvcc over a broad matrix); deselect with -m 'not slow'")


@pytest.fixture(scope="session")
def nvcc():
    if not shutil.which(NVCC):
        pytest.fail(f"nvcc not found at {NVCC} (set CUDA_HOME)")
    return NVCC
