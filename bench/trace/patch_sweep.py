# bench/trace/sweep.sh: from the generated sources of sweep_spec.toml, (1) a copy of ss_b256_t16
# without its look-back (each tile's prefix the identity: wrong results past the first tile, the
# ceiling of the tile work), public name sw_nolb_b256_t16; (2) the segmented reduce's spans choice
# overridable: sw_force_span >= 0 picks that row of the spans table.  Stops with a message if the
# generated code no longer has the lines it hooks into.  Also (3) a traced copy of ss_b256_t16
# (patch_trace.py's stamps, into sw_trace), sw_tr_b256_t16, and (4) one taking its tiles in
# blockIdx order instead of by ticket, sw_nt_b256_t16.
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_trace import traced  # noqa: E402

d = sys.argv[1]

s = open(f"{d}/sw_ss_b256_t16.cu").read()
call = re.search(r"ag_look_back\(warp_totals\[\d+\], slots, n_tiles, tile, lane\)", s)
if not call:
    sys.exit("patch_sweep: no look-back call in sw_ss_b256_t16.cu")
s = s.replace(call.group(0), "ag_seg_identity()")
s = s.replace("sw_ss_b256_t16", "sw_nolb_b256_t16")
open(f"{d}/sw_nolb_b256_t16.cu", "w").write(s)
s = open(f"{d}/sw_ss_b256_t16.cu").read()
setter = 'extern "C" cudaError_t sw_set_trace(unsigned long long *p) { return cudaMemcpyToSymbol(sw_trace, &p, sizeof p); }\n'
open(f"{d}/sw_tr_b256_t16.cu", "w").write(traced(s, "sw_trace").replace("sw_ss_b256_t16", "sw_tr_b256_t16") + setter)
ticket = "tile_ticket = n_tiles == 1 ? 0u : atomicAdd(work, 1u);"
if ticket not in s:
    sys.exit("patch_sweep: no ticket in sw_ss_b256_t16.cu")
open(f"{d}/sw_nt_b256_t16.cu", "w").write(
    s.replace(ticket, "tile_ticket = blockIdx.x;").replace("sw_ss_b256_t16", "sw_nt_b256_t16")
)

s = open(f"{d}/sw_sr.cu").read()
loop = "        unsigned int k = 0;\n        while (k + 1 < sizeof spans / sizeof spans[0] && avg > spans[k].most)\n            ++k;\n"
n = s.count(loop)
if n == 0:
    sys.exit("patch_sweep: no spans choice in sw_sr.cu")
s = s.replace(loop, loop + "        if (sw_force_span >= 0)\n            k = (unsigned int)sw_force_span;\n")
s = s.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\nint sw_force_span = -1;\n", 1)
open(f"{d}/sw_sr.cu", "w").write(s)
print(f"patched: the look-back-free, traced and blockIdx copies of ss_b256_t16; {n} spans choices")
