#!/usr/bin/env bash
# The README's first command: install the generator (`pip install -e .`: the `assocgen` command
# and package) and what the build and tests need, then generate and build the examples (and
# refresh the default header).  Needs the CUDA Toolkit (nvcc) already installed.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install -q --root-user-action=ignore -r requirements.txt
python3 -m pip install -q --root-user-action=ignore -e .
if ! command -v ninja >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get -qq update && apt-get -qq install -y ninja-build >/dev/null
    else
        python3 -m pip install -q ninja
    fi
fi
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
ninja "$@"
