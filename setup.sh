#!/usr/bin/env bash
# The README's first command: install what the build needs, then generate and build the
# examples (and refresh the default header).  Needs the CUDA Toolkit (nvcc) already installed.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m pip install -q -r requirements.txt
if ! command -v ninja >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get -qq update && apt-get -qq install -y ninja-build >/dev/null
    else
        python3 -m pip install -q ninja
    fi
fi
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"
ninja "$@"
