"""assocgen: a generator of specialized CUDA C kernels for any associative operator.

A spec (TOML file or command line) names a symbol prefix, user types and operators, and the
kernel instances wanted.  The generator validates it, turns it into a list of instance
descriptions (operations are data), and renders each through the templates in `templates/`
into plain CUDA C sources plus one C header (or one single header in the stb style), and
optionally the build edges for Ninja.  Command line: `assocgen` or `python3 -m assocgen`.
"""

import importlib

__version__ = "0.2.0"

# the Python API (generator/pyload.py), imported at first use: `import assocgen` and the generator's
# command line stay without it (it imports ctypes and the builder, which needs jinja2; cli.main
# reports a missing jinja2 in one line)
_PYTHON_API = ("load", "Module", "Wrapper", "BuildError", "CudaError", "NoDeviceError")


def __getattr__(name: str) -> object:
    if name in _PYTHON_API:
        return getattr(importlib.import_module(f"{__name__}.pyload"), name)
    raise AttributeError(f"module 'assocgen' has no attribute {name!r}")
