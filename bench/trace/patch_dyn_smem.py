"""An experiment, not the generator's code: a generated resident scan whose stage is larger than
static shared memory allows (generated with tuning.STAGE_LIMIT raised, bench/trace/bigtile.sh)
rewritten to hold it in dynamic shared memory: the kernel's `__shared__ uint4 stage[W][C]` becomes
an `extern __shared__` array of the same shape, the tile kernel's launches and the occupancy
query ask for its bytes, and the kernel is allowed them once a device.

    python3 bench/trace/patch_dyn_smem.py SRC.cu OUT.cu
"""

import re
import sys


def main() -> None:
    src, dst = sys.argv[1], sys.argv[2]
    s = open(src).read()
    m = re.search(r"    __shared__ uint4 stage\[(\d+)\]\[(\d+)\];\n", s)
    assert m, "no stage"
    warps, chunks = int(m.group(1)), int(m.group(2))
    nbytes = warps * chunks * 16
    s = s.replace(
        m.group(0),
        f"    extern __shared__ uint4 ag_dyn_stage[];   /* {nbytes} bytes */\n"
        f"    uint4 (*const stage)[{chunks}] = (uint4 (*)[{chunks}])ag_dyn_stage;\n",
    )
    kernel = re.search(r"static __global__ void AG_SCAN_BOUNDS\n(\w+)\(", s).group(1)
    s = s.replace(
        "    config->dynamicSmemBytes = 0;",
        f"    config->dynamicSmemBytes = kernel == (const void *){kernel} ? {nbytes} : 0;",
    )
    old = (
        "        err = cudaFuncSetAttribute("
        + kernel
        + ",\n            cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);\n"
    )
    assert old in s, "no carveout"
    s = s.replace(
        old,
        old + f"        if (err == cudaSuccess)\n            err = cudaFuncSetAttribute({kernel}, "
        f"cudaFuncAttributeMaxDynamicSharedMemorySize, {nbytes});\n",
    )
    occ = re.search(r"cudaOccupancyMaxActiveBlocksPerMultiprocessor\(&per_sm,\n\s+" + kernel + r", (\d+), 0\)", s)
    assert occ, "no occupancy query"
    s = s.replace(occ.group(0), occ.group(0)[:-2] + f"{nbytes})")
    open(dst, "w").write(s)


if __name__ == "__main__":
    main()
