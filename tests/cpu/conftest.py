import shutil

import pytest

from .util import NVCC


def pytest_configure(config):
    try:
        import assocgen  # noqa: F401
    except ImportError:
        pytest.exit("the assocgen package is not installed: run ./setup.sh (it runs pip install -e .)", returncode=1)
    config.addinivalue_line(
        "markers", "slow: long-running test (nvcc over a broad matrix); deselect with -m 'not slow'"
    )


@pytest.fixture(scope="session")
def nvcc():
    if not shutil.which(NVCC):
        pytest.fail(f"nvcc not found at {NVCC} (set CUDA_HOME)")
    return NVCC
