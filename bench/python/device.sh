#!/usr/bin/env bash
# The Python benchmark on the lent GPU machine: install the carried wheels (.whl/: cuda-cccl, for
# the cuda.compute column) into /tmp/site, then run bench/python/bench.py with its table, CSV
# and log under $OUT (build/pybench where $OUT is unset).  Run from anywhere:
#   bash bench/python/device.sh [--quick] [--rows affine,mat3,...]
set -u -o pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/pybench}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false   # JAX takes memory as it needs it, beside PyTorch
# one GPU: on a host of several, JAX would leave the current device on the last, and torch would
# not hand its tensors over to JAX (DLPack: "Can't export tensors on a different CUDA device index")
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
if ls .whl/*.whl > /dev/null 2>&1; then
    if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl > "$OUT/pip.log" 2>&1; then
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    else
        echo "wheels: the install failed ($OUT/pip.log); cuda.compute will be n/a" >&2
    fi
else
    echo "wheels: none in .whl/; cuda.compute will be n/a unless installed" >&2
fi
. tests/gpu/pyshim.sh   # assocgen importable (this tree's generator/)
export ASSOCGEN_CACHE=${ASSOCGEN_CACHE:-$PWD/build/assocgen-cache}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
python3 bench/python/bench.py --csv "$OUT/python-bench.csv" "$@" \
    2> >(tee "$OUT/python-bench.log" >&2) | tee "$OUT/python-bench.txt"
