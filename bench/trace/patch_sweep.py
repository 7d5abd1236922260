# bench/trace/sweep.sh: from the generated sources of sweep_spec.toml, (1) a copy of ss_b256_t16
# without its look-back (each tile's prefix the identity: wrong results past the first tile, the
# ceiling of the tile work), public name sw_nolb_b256_t16; (2) the segmented reduce's spans choice
# overridable: sw_force_span >= 0 picks that row of the spans table.  Stops with a message if the
# generated code no longer has the lines it hooks into.  Also (3) a traced copy of ss_b256_t16
# (patch_trace.py's stamps, into sw_trace), sw_tr_b256_t16, and (4) one taking its tiles by ticket
# even where they all fit at once, sw_nt_b256_t16; (5) part E's copies of ss_b512_t8 (below).
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from patch_trace import BY_BLOCK, ticket_order, traced  # noqa: E402

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
open(f"{d}/sw_nt_b256_t16.cu", "w").write(ticket_order(s, "patch_sweep").replace("sw_ss_b256_t16", "sw_nt_b256_t16"))

# (5) part E, a waterfall of 512 x 8: each copy leaves out one more part of the call (wrong results
# from the first: diagnostics of what each part costs), and two single changes to the whole call
s512 = open(f"{d}/sw_ss_b512_t8.cu").read()
look_back = re.search(r"ag_look_back\(warp_totals\[\d+\], slots, n_tiles, tile, lane\)", s512)
heads = re.search(
    r"    /\* segment heads, one bit an item.*?\n(?=    if \(staged\) \{\n        ag_copy_async_wait)", s512, re.S
)
clear = "    if (tiles > 1) {\n        /* the ticket counter and every slot's flags start at zero */"
keys_path = "        if (staged && full) {\n            /* keys: coalesced 16-byte loads"
pdl = "config->numAttrs = allowed && early > 0 ? 1 : 0;"
KEYS_ONLY = """    unsigned int head_mask = 0;
    {
        const uint4 *ksrc = (const uint4 *)(keys + tile_base + warp * 256);
        const uint4 a = ksrc[lane], b = ksrc[32 + lane];
        head_mask = (a.x ^ b.w) == 0x7fffffffu;
    }
"""
if "        __nanosleep(32);\n" not in s512:
    sys.exit("patch_sweep: sw_ss_b512_t8.cu's look-back no longer sleeps 32 ns between polls")
if (
    not look_back
    or not heads
    or clear not in s512
    or keys_path not in s512
    or pdl not in s512
    or not BY_BLOCK.search(s512)
):
    sys.exit("patch_sweep: sw_ss_b512_t8.cu no longer has the lines part E changes")
changes = {
    "nolb": (look_back.group(0), "ag_seg_identity()"),
    "noclear": (clear, clear.replace("if (tiles > 1)", "if (0)")),
    "noheads": (heads.group(0), "    unsigned int head_mask = 0;\n"),
    "ballot": (keys_path, keys_path.replace("if (staged && full)", "if (0)")),
    "nopdl": (pdl, "config->numAttrs = 0;"),
    # the look-back polls without sleeping between loads
    "nosleep": ("        __nanosleep(32);\n", ""),
    # no head bits, but the keys still loaded (an unlikely test of them keeps the loads)
    "keysonly": (heads.group(0), KEYS_ONLY),
}
for name, parts in (
    ("e1", ["nolb"]),
    ("e3", ["nolb", "noclear"]),
    ("e4", ["nolb", "noclear", "noheads"]),
    ("eb", ["ballot"]),
    ("ep", ["nopdl"]),
    ("ei", ["ticket"]),
    ("en", ["nosleep"]),
    ("ek", ["nolb", "noclear", "keysonly"]),
):
    v = s512
    for c in parts:
        v = ticket_order(v, "patch_sweep") if c == "ticket" else v.replace(*changes[c])
    open(f"{d}/sw_{name}_b512_t8.cu", "w").write(v.replace("sw_ss_b512_t8", f"sw_{name}_b512_t8"))

s = open(f"{d}/sw_sr.cu").read()
loop = "        unsigned int k = 0;\n        while (k + 1 < sizeof spans / sizeof spans[0] && avg > spans[k].most)\n            ++k;\n"
n = s.count(loop)
if n == 0:
    sys.exit("patch_sweep: no spans choice in sw_sr.cu")
s = s.replace(loop, loop + "        if (sw_force_span >= 0)\n            k = (unsigned int)sw_force_span;\n")
s = s.replace("#include <cuda_runtime.h>\n", "#include <cuda_runtime.h>\nint sw_force_span = -1;\n", 1)
open(f"{d}/sw_sr.cu", "w").write(s)
print(
    f"patched: the look-back-free, traced and ticket copies of ss_b256_t16; part E's copies of ss_b512_t8; {n} spans choices"
)
