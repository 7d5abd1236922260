"""assocgen: a generator of specialized CUDA C kernels for any associative operator.

A spec (TOML file or command line) names a symbol prefix, user types and operators, and the
kernel instances wanted.  The generator validates it, turns it into a list of instance
descriptions (operations are data), and renders each through the templates in `templates/`
into plain CUDA C sources plus one C header (or one single header in the stb style), and
optionally the build edges for Ninja.  Command line: `assocgen` or `python3 -m assocgen`.
"""

__version__ = "0.2.0"
