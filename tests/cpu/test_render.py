"""What the generator renders: determinism, names, the shape of the kernels, the templates'
independence from operator names, stale-file cleanup and the committed default header."""

import re

import pytest

from .util import EXAMPLES, REPO, at_arch, gen_ok, matrix_spec, public_names, write_spec


def _flat(src: str) -> str:
    """`src` with argument lists and kernel heads that were wrapped at 120 columns on one line."""
    src = re.sub(r",\n\s+", ", ", at_arch(src))
    return re.sub(r"(__launch_bounds__\([^()]*\))\n", r"\1 ", src)


def _files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _gen(spec, out, *extra):
    gen_ok(spec, "-o", out, *extra)
    return _files(out)


# ---- determinism


@pytest.mark.parametrize("spec", [f"examples/{e}/spec.toml" for e in EXAMPLES] + ["specs/default.toml"])
def test_generating_twice_is_byte_identical(tmp_path, spec):
    a = _gen(spec, tmp_path / "a")
    b = _gen(spec, tmp_path / "b")
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], f"{name} differs between two runs"


def test_matrix_spec_generates_identically_twice(tmp_path):
    spec = write_spec(tmp_path / "spec.toml", matrix_spec())
    a = _gen(spec, tmp_path / "a")
    b = _gen(spec, tmp_path / "b")
    assert len(a) > 100
    assert a == b


def test_regenerating_in_place_changes_nothing(tmp_path):
    out = tmp_path / "out"
    a = _gen("examples/minmax/spec.toml", out)
    b = _gen("examples/minmax/spec.toml", out)
    assert a == b


# ---- names


def _header(out, prefix):
    return (out / f"{prefix}.h").read_text()


def test_public_and_kernel_names_encode_the_parameters(tmp_path):
    out = tmp_path / "out"
    gen_ok("examples/sum_f32/spec.toml", "-o", out)
    src = (out / "vec_reduce_sum_f32.cu").read_text()
    header = _header(out, "vec")
    # the kernel's name carries op, type, block and items; the public one op and type only
    assert re.search(r"\bvec_k_reduce_sum_f32_b256_t16\s*\(", src)
    assert re.search(r"\bcudaError_t\s+vec_reduce_sum_f32\s*\(", header)
    assert re.search(r"\bsize_t\s+vec_reduce_sum_f32_workspace_bytes\s*\(\s*size_t\b", header)
    assert re.search(r"\bcudaError_t\s+vec_reduce_sum_f32\s*\(", src)
    assert "vec_k_reduce_ksum_f32_b256_t16" in (out / "vec_reduce_ksum_f32.cu").read_text()
    # the kernel is internal: not in the header
    assert "_k_reduce_" not in re.sub(r"/\*.*?\*/", "", header, flags=re.S)


def test_list_prints_public_and_kernel_names(tmp_path):
    r = gen_ok("examples/sum_f32/spec.toml", "--list", "--reduce", "min:u8:b64:t4", "--reduce", "max:f64:b1024")
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows == [
        ["vec_reduce_sum_f32", "vec_k_reduce_sum_f32_b256_t16"],
        ["vec_reduce_ksum_f32", "vec_k_reduce_ksum_f32_b256_t16"],
        ["vec_reduce_min_u8", "vec_k_reduce_min_u8_b64_t4"],
        [rows[3][0], rows[3][1]],
    ]
    assert rows[3][0] == "vec_reduce_max_f64"
    assert re.fullmatch(r"vec_k_reduce_max_f64_b1024_t\d+", rows[3][1])
    assert not (REPO / "generated" / "vec.h").exists()  # --list writes nothing


def test_command_line_only_spec_and_prefix_override(tmp_path):
    out = tmp_path / "out"
    gen_ok("--prefix", "lib", "--reduce", "sum:i16:b128:t8", "--reduce", "xor:u64", "-o", out)
    assert sorted(_files(out)) == ["lib.h", "lib_reduce_sum_i16.cu", "lib_reduce_xor_u64.cu"]
    assert "lib_k_reduce_sum_i16_b128_t8" in (out / "lib_reduce_sum_i16.cu").read_text()
    out2 = tmp_path / "out2"
    gen_ok("examples/sum_f32/spec.toml", "--prefix", "other", "-o", out2)
    assert sorted(_files(out2)) == ["other.h", "other_reduce_ksum_f32.cu", "other_reduce_sum_f32.cu"]
    assert "other_k_reduce_sum_f32_b256_t16" in (out2 / "other_reduce_sum_f32.cu").read_text()


def test_command_line_scans(tmp_path):
    out = tmp_path / "out"
    gen_ok(
        "--prefix", "lib", "--scan", "sum:f32", "--scan", "max:i32:b128:t8:exclusive", "--reduce", "sum:u8", "-o", out
    )
    assert sorted(_files(out)) == ["lib.h", "lib_exscan_max_i32.cu", "lib_reduce_sum_u8.cu", "lib_scan_sum_f32.cu"]
    assert "lib_k_exscan_max_i32_b128_t8" in (out / "lib_exscan_max_i32.cu").read_text()
    assert "const int32_t *init" in (out / "lib.h").read_text()


def test_given_name_is_the_public_name(tmp_path):
    spec = write_spec(
        tmp_path / "s.toml",
        {
            "prefix": "v",
            "reduce": [
                {"op": "sum", "type": "f32", "block": 64, "items": 4, "name": "small_sum"},
                {"op": "sum", "type": "f32"},
            ],
        },
    )
    assert public_names(spec) == ["v_small_sum", "v_reduce_sum_f32"]
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    assert (out / "v_small_sum.cu").exists()
    assert "v_k_reduce_sum_f32_b64_t4" in (out / "v_small_sum.cu").read_text()
    assert re.search(r"\bcudaError_t\s+v_small_sum\s*\(", _header(out, "v"))


def test_header_dir_separates_header_from_sources(tmp_path):
    gen_ok("examples/minmax/spec.toml", "-o", tmp_path / "src", "--header-dir", tmp_path / "inc")
    assert sorted(_files(tmp_path / "inc")) == ["mm.h"]
    assert "mm.h" not in _files(tmp_path / "src")
    assert sorted(_files(tmp_path / "src")) == [
        "mm_reduce_argmin_f32.cu",
        "mm_reduce_max_f32.cu",
        "mm_reduce_min_f32.cu",
        "mm_reduce_minmax_f32.cu",
    ]


# ---- the shape of the kernels


def _function(src, name):
    """The text of a C function definition from its name to its closing brace at column 0."""
    m = re.search(r"^[^\n;]*\b" + re.escape(name) + r"\s*\([^;{]*\)\s*\{.*?^\}", src, re.S | re.M)
    assert m, f"no definition of {name}"
    return m.group(0)


def _block_fold_shuffles(tmp_path, block, op="sum", ty="f32"):
    out = tmp_path / f"b{block}"
    gen_ok("--prefix", "t", "--reduce", f"{op}:{ty}:b{block}", "-o", out)
    src = (out / f"t_reduce_{op}_{ty}.cu").read_text()
    # the block's fold is named steps: the warp's (ag_warp_fold), then the warps' (ag_warps_fold)
    block = _function(src, "ag_block_fold")
    assert "ag_warp_fold(" in block
    fold = _function(src, "ag_warp_fold") + (_function(src, "ag_warps_fold") if "ag_warps_fold(" in block else "")
    offsets = [int(o) for o in re.findall(r"ag_shfl_down\(\s*\w+\s*,\s*(\d+)\s*\)", fold)]
    return src, fold, offsets


@pytest.mark.parametrize("block,steps", [(64, 1), (128, 2), (256, 3), (512, 4), (1024, 5)])
def test_block_stage_is_unrolled_one_shuffle_per_halving(tmp_path, block, steps):
    _, fold, offsets = _block_fold_shuffles(tmp_path, block)
    # the warp stage: 5 shuffles (32 lanes); then the block stage: log2(block / 32) shuffles
    assert offsets[:5] == [1, 2, 4, 8, 16]
    assert offsets[5:] == [1 << k for k in range(steps)], offsets
    assert "__syncthreads" in fold
    assert not re.search(r"\bfor\s*\(", fold), "the steps are unrolled at generation time"


def test_block_256_has_three_block_steps_and_1024_five(tmp_path):
    _, _, o256 = _block_fold_shuffles(tmp_path, 256)
    _, _, o1024 = _block_fold_shuffles(tmp_path, 1024)
    assert len(o256) - 5 == 3
    assert len(o1024) - 5 == 5


@pytest.mark.parametrize("op,ty", [("sum", "f32"), ("argmax", "i64"), ("ksum", "f64")])
def test_block_32_has_no_block_stage(tmp_path, op, ty):
    src, fold, offsets = _block_fold_shuffles(tmp_path, 32, op, ty)
    assert offsets == [1, 2, 4, 8, 16]
    assert "__syncthreads" not in fold
    assert "warp_totals[warp]" not in fold
    assert "__launch_bounds__(32, 32)" in at_arch(src)


@pytest.mark.parametrize("block", [32, 64, 128, 256, 512, 1024])
def test_launch_bounds_and_launch_use_the_block(tmp_path, block):
    out = tmp_path / "out"
    gen_ok("--prefix", "t", "--reduce", f"min:i32:b{block}:t4", "-o", out)
    src = (out / "t_reduce_min_i32.cu").read_text()
    # at least half the SM's threads: ptxas then keeps a lane's 16-byte loads in flight together
    assert f"__launch_bounds__({block}, {max(1, 1024 // block)})" in at_arch(src)
    # launched with that block (through ag_launch: programmatic dependent launch)
    assert re.search(
        r"ag_launch\(t_k_reduce_min_i32_b%d_t4,\s+\(unsigned int\)grid,\s+%d,\s+stream," % (block, block),
        src,
    )
    assert "cudaLaunchKernelEx(&config, kernel, args...)" in src
    if block > 32:
        assert re.search(r"warp_totals\[\s*%d\s*\]" % (block // 32), src)
    else:  # one warp: no slots for the warps' totals
        assert "warp_totals" not in src


def test_pdl_where_measured_faster(tmp_path):
    """Programmatic dependent launch for the scans and the small reduces; the segmented reduce by
    offsets launches the usual way (slower with PDL, bench/notes/graphs-pdl.md)."""
    gen_ok("--prefix", "t", "--reduce", "sum:f32", "--scan", "sum:f32", "-o", tmp_path / "a")
    red = (tmp_path / "a" / "t_reduce_sum_f32.cu").read_text()
    scan = (tmp_path / "a" / "t_scan_sum_f32.cu").read_text()
    for src in (red, scan):
        assert "cudaLaunchAttributeProgrammaticStreamSerialization" in src
        assert "__CUDA_ARCH__ >= 900" in src and "ptxVersion >= 90" in src
    # the commutative reduce lets the next kernel in at its start, then waits
    red_kernel = red[red.index("__global__") : red.index("/* host side */")]
    assert (
        red_kernel.index("ag_start_next();")
        < red_kernel.index("ag_follow_stream();")
        < red_kernel.index("for (size_t tile")
    )
    assert "n <= AG_PDL_MAX_ELEMS" in red
    # the scan's slots are cleared by a kernel (a memset node costs ~2 us in a graph)
    assert re.search(r"ag_launch\(\w+_clear,\s", scan) and "cudaMemsetAsync" not in scan
    # where the tiles load early (blockIdx order, aligned data), the clear waits, then lets the
    # tile kernel in; its whole aligned tiles issue their loads before they wait for the clear
    clear = scan[scan.index("_clear(unsigned int *work, unsigned int n_tiles, int tiles_early)") :]
    assert clear.index("if (tiles_early)\n        ag_start_next();") < clear.index("ag_zero_slots(")
    assert clear.index("ag_follow_stream();") < clear.index("if (tiles_early)\n        ag_start_next();")
    assert clear.index("if (!tiles_early)\n        ag_start_next();") < clear.index("ag_follow_stream();")
    assert "(unsigned int)tiles, by_block && (any_bits & 15) == 0);" in scan
    tile = scan[scan.index("__global__") : scan.index("_clear(unsigned int *work")]
    early = "const int early = by_block && n_tiles > 1 && aligned16 && (size_t)(blockIdx.x + 1) * AG_TILE <= n;"
    assert (
        tile.index("ag_start_next();")
        < tile.index(early)
        < tile.index("if (!early)\n        ag_follow_stream();")
        < tile.index("ag_load_run(")
        < tile.index("if (early)\n        ag_follow_stream();")
        < tile.index("ag_copy_async_wait();")
        < tile.index("ag_fold_chunks(")
        < tile.index("ag_tile_prefix(")
    )
    assert "if (tiles >= 2 && tiles <= (size_t)at_once)" in scan
    gen_ok("examples/mat2/spec.toml", "-o", tmp_path / "m")
    mat = (tmp_path / "m" / "mat_reduce_mat2mul_mat2u.cu").read_text()
    # the ordered reduce waits first but lets the next call in only once its blocks have folded
    # their runs, so the next call's blocks fill the SMs during the hand-off (at the start they
    # took SMs this call needed); up to 16 MiB of input
    assert r"griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;" not in mat
    kernel = mat[mat.index("__global__") : mat.index("/* host side */")]
    assert (
        kernel.index("ag_follow_stream();")
        < kernel.index("for (size_t round")
        < kernel.index("ag_start_next();")
        < kernel.index("if (gridDim.x == 1)")
    )
    assert "#define AG_PDL_MAX_ELEMS ((size_t)16777216 / sizeof(mat2u))" in mat and "n <= AG_PDL_MAX_ELEMS" in mat


def test_a_reduce_in_a_graph_folds_its_totals_by_a_kernel_of_their_own(tmp_path):
    """Captured into a graph, the reduce's blocks write their totals and a fold kernel of one block
    (PDL: it waits for them, then lets the next call in) folds them in block order; called directly,
    the last block to take a ticket does, in the same order (ag_grid_fold, once)."""
    gen_ok("--prefix", "t", "--reduce", "sum:f32", "-o", tmp_path / "a")
    gen_ok("examples/mat2/spec.toml", "-o", tmp_path / "m")
    for src in (
        (tmp_path / "a" / "t_reduce_sum_f32.cu").read_text(),
        (tmp_path / "m" / "mat_reduce_mat2mul_mat2u.cu").read_text(),
    ):
        host = _flat(src[src.index("/* host side */") :])
        assert "cudaStreamIsCapturing(stream, &capture)" in host
        assert "apart = capture == cudaStreamCaptureStatusActive;" in host
        # the kernel first, then the fold kernel of one block where apart
        assert host.index("err = ag_launch(") < host.index("if (apart) {")
        assert "_fold, 1, 256, stream, 1, (const unsigned int *)d_work, (unsigned int)grid, d_out);" in host
        kernel = src[src.index("__global__") : src.index("/* host side */")]
        assert kernel.index("ag_store_slot(") < kernel.index("if (apart)") < kernel.index("atom.acq_rel.gpu")
        fold = kernel[kernel.index("_fold(const unsigned int *__restrict__ work, unsigned int blocks") :]
        assert (
            fold.index("ag_follow_stream();") < fold.index("ag_start_next();") < fold.index("ag_grid_fold(work, blocks")
        )
        assert src.count("ag_grid_fold(") == 3  # defined once, called by the last block and the fold kernel
        assert "work[0] = 0;" not in fold  # the ticket is the last block's only


def test_only_resident_scans_load_early(tmp_path):
    """Early loads (before the tile kernel waits for the clear) only where every load before the
    wait reads L2: resident tiles of plain and segmented scans (heads by __ldcg), not register
    tiles, scans along rows (a memset before them) or across ranks (the carry)."""
    spec = tmp_path / "s.toml"
    spec.write_text(
        'prefix = "t"\n'
        '[[segscan]]\nop = "sum"\ntype = "f32"\n'
        '[[segscan]]\nop = "sum"\ntype = "i32"\nheads = "keys"\nkey = "i32"\n'
        '[[scan]]\nop = "sum"\ntype = "i32"\nitems = 3\nname = "scan_t3"\n'
        '[[rows]]\nop = "sum"\ntype = "f32"\nkind = "inclusive"\n'
    )
    gen_ok(spec, "-o", tmp_path / "o")
    for name in ("t_segscan_sum_f32.cu", "t_segscan_sum_i32_by_i32.cu"):
        src = (tmp_path / "o" / name).read_text()
        assert "const int early = by_block && n_tiles > 1 && aligned16" in src, name
        assert "tiles_early" in src, name
    seg = (tmp_path / "o" / "t_segscan_sum_f32.cu").read_text()
    assert "__ldcg(&flags[i]) != 0" in seg
    keyed = (tmp_path / "o" / "t_segscan_sum_i32_by_i32.cu").read_text()
    assert "__ldcg(&ksrc[j * 32 + lane])" in keyed and "__ldcg(&keys[run - 1])" in keyed
    for name in ("t_scan_t3.cu", "t_rows_scan_sum_f32.cu"):
        src = (tmp_path / "o" / name).read_text()
        assert "const int early" not in src and "tiles_early" not in src and "ag_start_next" not in src, name
    gen_ok(REPO / "tests" / "gpu" / "nccl" / "spec.toml", "-o", tmp_path / "n")
    for f in sorted((tmp_path / "n").glob("*scan*.cu")):
        src = f.read_text()
        across = src[src.index("static cudaError_t ag_scan(") :] if "static cudaError_t ag_scan(" in src else ""
        assert "const int early" not in across, f.name


def test_ordered_reduce_reads_a_block_window_at_a_time(tmp_path):
    """The ordered reduce gives each block a contiguous run of whole rounds, one warp tile a warp a
    round, folds the warps' totals of a round in warp order, and holds its grid to the blocks an SM
    that its launch bounds ask for (bench/notes/reduce.md: more blocks measured slower)."""
    gen_ok("examples/mat2/spec.toml", "-o", tmp_path / "m")
    mat = (tmp_path / "m" / "mat_reduce_mat2mul_mat2u.cu").read_text()
    assert "__launch_bounds__(256, 4)" in at_arch(mat)
    assert "for (size_t round = first, parity = 0; round < end; round += 8, parity ^= 1)" in mat
    assert "const size_t tile = round + warp;" in mat
    assert "warp_acc = ag_warps_fold(warp_acc, round_totals[parity], lane, warp);" in mat
    assert "if (per_sm > threads / 512)\n        per_sm = threads / 512;" in mat  # half the SM's threads
    assert "rounds / grid, (unsigned int)(rounds % grid)" in mat
    # one warp a block: rounds of one tile, no round totals in shared memory
    spec = (REPO / "examples" / "mat2" / "spec.toml").read_text().split("[[reduce]]")[0]
    (tmp_path / "w.toml").write_text(spec + '[[reduce]]\nop = "mat2mul"\nblock = 32\nitems = 4\n')
    gen_ok(tmp_path / "w.toml", "-o", tmp_path / "w")
    one = (tmp_path / "w" / "mat_reduce_mat2mul_mat2u.cu").read_text()
    assert "for (size_t round = first; round < end; ++round)" in one and "round_totals" not in one
    assert "const size_t tile = round;" in one


def test_reduce_blocks_per_sm_and_grid_sweep(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('prefix = "t"\n[[reduce]]\nop = "sum"\ntype = "f32"\nblock = 256\nblocks_per_sm = 3\n')
    gen_ok(spec, "-o", tmp_path / "o")
    src = (tmp_path / "o" / "t_reduce_sum_f32.cu").read_text()
    assert "__launch_bounds__(256, 3)" in at_arch(src)
    # commutative: block b folds tiles b, b + grid, ... (the grid sweeps memory together)
    assert "tile += gridDim.x" in src and "size_t share" not in src


def test_non_commutative_operator_is_lane_blocked_and_sum_lane_striped(tmp_path):
    out = tmp_path / "mat"
    gen_ok("examples/mat2/spec.toml", "-o", out)
    mat2 = (out / "mat_reduce_mat2mul_mat2u.cu").read_text()
    mat3 = (out / "mat_reduce_mat3mul_mat3u.cu").read_text()
    welford = (out / "mat_reduce_welford_f32.cu").read_text()
    for src in (mat2, mat3):
        assert "lane-blocked" in src and "lane-striped" not in src
        assert "NOT commutative" in src
    out2 = tmp_path / "vec"
    gen_ok("examples/sum_f32/spec.toml", "-o", out2)
    for src in ((out2 / "vec_reduce_sum_f32.cu").read_text(), welford):
        assert "lane-striped" in src and "lane-blocked" not in src
    # the header tells the caller about the order
    header = (out / "mat.h").read_text()
    decl = re.search(r"/\*[^\n]*\*/\s*\n\s*size_t mat_reduce_mat2mul_mat2u_workspace_bytes", header).group(0)
    assert "input order" in decl


def test_the_stripes_use_16_byte_loads_where_the_type_allows(tmp_path):
    out = tmp_path / "out"
    gen_ok("--prefix", "t", "--reduce", "sum:f32:b256:t16", "--reduce", "sum:u8:b256:t1", "-o", out)
    assert "uint4" in (out / "t_reduce_sum_f32.cu").read_text()


def test_scans_keep_tiles_in_shared_memory_where_results_fit_over_inputs(tmp_path):
    # resident: the inputs go to shared memory by cp.async and the results are written over them,
    # so only instances whose output type is the input type (and whose runs are whole 16-byte words)
    spec = write_spec(
        tmp_path / "spec.toml",
        """
prefix = "t"
[[scan]]
op = ["sum", "argmin"]
type = "f32"
[[scan]]
op = "sum"
type = "i32"
items = 3
name = "scan_i32_t3"
[[segscan]]
op = "sum"
type = "f32"
heads = "keys"
key = "i32"
[[segreduce]]
op = ["sum", "ksum"]
type = "f32"
""",
    )
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    text = {p.stem: p.read_text() for p in out.glob("*.cu")}
    resident = {name for name, src in text.items() if "cp.async.cg.shared.global" in src}
    assert resident == {"t_scan_sum_f32", "t_segscan_sum_f32_by_i32", "t_segreduce_sum_f32"}
    # 144 bytes of inputs a thread by default for plain scans (nine 16-byte words: no pad), 128 for
    # segmented ones (a bit an item in 32), keyed scans 112 (their keys pass through registers,
    # so they get 40 registers: 6 blocks an SM)
    assert "_b256_t36(" in text["t_scan_sum_f32"] and "_b256_t28(" in text["t_segscan_sum_f32_by_i32"]
    assert "__launch_bounds__(256, 6)" in at_arch(text["t_segscan_sum_f32_by_i32"])
    assert "_b256_t32(" in text["t_segreduce_sum_f32"]
    # no pad: a word's place is its index (no identity helper); a pad word in eight otherwise
    assert "warp_stage[lane * 9 + c]" in text["t_scan_sum_f32"] and "return k + k / 8;" in text["t_segreduce_sum_f32"]
    # a warp's run of results lies in shared memory as in global memory where there is no pad:
    # one bulk copy (TMA, sm_90) stores it, for accumulators of up to 8 bytes (wider ones spill
    # under the register cap); the segmented reduce stores no tile
    bulk = "cp.async.bulk.global.shared::cta"
    assert bulk in text["t_scan_sum_f32"] and bulk in text["t_segscan_sum_f32_by_i32"]
    assert bulk not in text["t_segreduce_sum_f32"]
    more = {
        "prefix": "t",
        "scan": [
            {"op": ["sum", "ksum"], "type": "f64", "items": 18},
            {"op": "sum", "type": "f32", "items": 32, "name": "scan_f32_t32"},
        ],
        "segscan": [{"op": "sum", "type": "f64", "heads": "keys", "key": "i32"}],
    }
    gen_ok(write_spec(tmp_path / "more.toml", more), "-o", tmp_path / "more")
    text.update({p.stem: p.read_text() for p in (tmp_path / "more").glob("*.cu")})
    # 8-byte values: unpadded either way, the bulk store only with an accumulator of 8 bytes
    # (not the compensated sum's 16, nor a segmented f64's value and head flag)
    unpadded = "an odd count, are already spread"  # the stage's comment where word k is at k
    assert all(unpadded in text[name] for name in ("t_scan_sum_f64", "t_scan_ksum_f64", "t_segscan_sum_f64_by_i32"))
    assert bulk in text["t_scan_sum_f64"] and bulk not in text["t_scan_ksum_f64"]
    assert bulk not in text["t_segscan_sum_f64_by_i32"]
    # a padded run (eight 16-byte words a lane) is not laid out as in global memory
    assert "return k + k / 8;" in text["t_scan_f32_t32"] and bulk not in text["t_scan_f32_t32"]
    assert all(unpadded in src for src in text.values() if bulk in src)
    # the segmented reduce that holds its tile needs no look-back: a carry kernel after the tiles
    # (launched with PDL on inputs up to SEGMENT_PDL_MAX_BYTES)
    assert "_carry, 1, 1024, stream, n <= AG_PDL_MAX_ELEMS, d_out," in _flat(text["t_segreduce_sum_f32"])
    assert "ag_wait_for(" not in text["t_segreduce_sum_f32"]
    assert "_carry" not in text["t_segreduce_ksum_f32"] and "ag_wait_for(" in text["t_segreduce_ksum_f32"]
    # and up to 2^21 elements takes 256 x 8 tiles (tuning.SEGMENT_SIZE_SHAPES); up to 4 tiles a
    # thread of its block, one launch: each tile searches its segments, the last one carries
    seg = text["t_segreduce_sum_f32"]
    assert "_b256_t8(" in seg and "if (n <= 2097152)" in seg
    assert "#define AG_ONE_LAUNCH_TILES 1024" in seg and "tiles <= AG_ONE_LAUNCH_TILES" in seg
    assert "ag_warp_search(" in seg and "ag_carry_tiles(out, work, n_tiles, warp_totals);" in seg


@pytest.mark.parametrize("prim", ["scan", "segreduce"])
def test_default_tile_of_a_512_block_still_fits_shared_memory(tmp_path, prim):
    # 128 bytes a thread would not fit at 512 threads: the default falls back to 64, still resident
    spec = write_spec(tmp_path / "spec.toml", {"prefix": "t", prim: [{"op": "sum", "type": "f32", "block": 512}]})
    out = tmp_path / "out"
    gen_ok(spec, "-o", out)
    (src,) = out.glob("*.cu")
    text = src.read_text()
    assert "_b512_t16" in text and "cp.async.cg.shared.global" in text


# ---- templates are operator-agnostic


TEMPLATE_FILES = sorted((REPO / "templates").rglob("*.j2"))
OPERATOR_WORDS = [
    "sum",
    "prod",
    "min",
    "max",
    "xor",
    "argmin",
    "argmax",
    "ksum",
    "mat2",
    "mat2mul",
    "mat3mul",
    "welford",
    "minmax",
]


def test_templates_exist():
    assert len(TEMPLATE_FILES) >= 2


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: str(p.relative_to(REPO / "templates")))
def test_templates_never_branch_on_operator_names(path):
    """Operators are data: template logic reads an operator's fields, never its name."""
    text = path.read_text()
    assert not re.search(r"\{%-?\s*(el)?if\s+op\.name", text)
    for tag in re.findall(r"\{%-?(.*?)-?%\}", text, re.S):
        assert not re.search(r"\.name\b", tag), f"template logic reads a name: {{%{tag}%}}"
    # no operator name anywhere in template code ({% %} or {{ }}), string literals included
    for code in re.findall(r"\{[{%]-?(.*?)-?[}%]\}", text, re.S):
        for word in OPERATOR_WORDS:
            assert not re.search(r"\b%s\b" % word, code), f"operator name {word!r} in template code: {code}"


def test_template_check_catches_a_name_branch(tmp_path):
    """The check above would see the usual ways of special-casing an operator."""
    for bad in [
        '{% if op.name == "sum" %}x{% endif %}',
        '{% if "min" in op.summary %}x{% endif %}',
        '{%- elif op.in_type.name == "f32" %}',
        '{{ "fminf" if op.commutative else "welford" }}',
    ]:
        p = tmp_path / "t.j2"
        p.write_text(bad)
        with pytest.raises(AssertionError):
            test_templates_never_branch_on_operator_names(p)


# ---- stale-file cleanup


def test_stale_sources_are_removed(tmp_path):
    out = tmp_path / "out"
    big = write_spec(
        tmp_path / "big.toml", {"prefix": "v", "reduce": [{"op": ["sum", "min", "max"], "type": ["f32", "i32"]}]}
    )
    small = write_spec(
        tmp_path / "small.toml", {"prefix": "v", "reduce": [{"op": "sum", "type": "f32"}, {"op": "max", "type": "i32"}]}
    )
    gen_ok(big, "-o", out)
    assert len(list(out.glob("*.cu"))) == 6
    # not ours: a hand-written source, and sources generated for another header
    (out / "mine.cu").write_text("/* hand written */\n__global__ void k(void) {}\n")
    gen_ok("--prefix", "w", "--reduce", "sum:f32", "-o", out)
    other = (out / "w_reduce_sum_f32.cu").read_bytes()
    gen_ok(small, "-o", out)
    assert sorted(_files(out)) == [
        "mine.cu",
        "v.h",
        "v_reduce_max_i32.cu",
        "v_reduce_sum_f32.cu",
        "w.h",
        "w_reduce_sum_f32.cu",
    ]
    assert (out / "w_reduce_sum_f32.cu").read_bytes() == other
    assert not list(out.glob("*.tmp"))


def test_stale_sources_are_removed_with_separate_header_dir(tmp_path):
    src, inc = tmp_path / "src", tmp_path / "inc"
    gen_ok("examples/minmax/spec.toml", "-o", src, "--header-dir", inc)
    small = write_spec(tmp_path / "small.toml", {"prefix": "mm", "reduce": [{"op": "min", "type": "f32"}]})
    gen_ok(small, "-o", src, "--header-dir", inc)
    assert sorted(_files(src)) == ["mm_reduce_min_f32.cu"]
    assert sorted(_files(inc)) == ["mm.h"]
    assert "mm_reduce_max_f32" not in (inc / "mm.h").read_text()


def test_output_lists_the_written_files(tmp_path):
    out = tmp_path / "out"
    r = gen_ok("examples/sum_f32/spec.toml", "-o", out)
    written = sorted(line for line in r.stdout.splitlines() if line.strip())
    assert all(str(out) in line for line in written)
    assert len(written) == 3


# ---- the committed default header is up to date


def test_default_header_is_up_to_date(tmp_path):
    src, inc = tmp_path / "src", tmp_path / "inc"
    gen_ok("specs/default.toml", "-o", src, "--header-dir", inc)
    committed_src = _files(REPO / "generated" / "assoc")
    fresh_src = _files(src)
    assert sorted(fresh_src) == sorted(committed_src), "generated/assoc/ has extra or missing files"
    stale = [n for n in fresh_src if fresh_src[n] != committed_src[n]]
    assert not stale, f"generated/assoc/ is stale (run ninja): {stale}"
    assert sorted(_files(inc)) == ["assoc.h"]
    assert (inc / "assoc.h").read_bytes() == (REPO / "include" / "assoc.h").read_bytes(), (
        "include/assoc.h is stale (run ninja)"
    )


# ---- internal names and simplified output (issue 14)


def _gpu_matrix_sources():
    from assocgen import emit
    from assocgen.spec import parse

    from .util import gpu_runner

    run = gpu_runner()
    files = emit.render(parse(run.spec_dict(), "tests/gpu/run.py"), "t.h")
    return {name: text for name, text in files.items() if name.endswith(".cu")}


def test_generated_file_scope_names_carry_the_internal_prefix():
    """Every function, macro, static and type the generated code defines at file scope is ag_...
    (AG_ for macros) or the spec's own prefix, so no user type or operator name can meet them."""
    bad = set()
    for name, text in _gpu_matrix_sources().items():
        for m in re.finditer(r"^static [^;{=]*?\b([A-Za-z_]\w*)\s*\(", text, re.M):
            if not re.match(r"ag_|t_k_|__launch_bounds__$", m.group(1)):
                bad.add((name, m.group(1)))
        for m in re.finditer(r"^#define (\w+)", text, re.M):
            if not m.group(1).startswith("AG_"):
                bad.add((name, m.group(1)))
        for m in re.finditer(r"^static (?:int|signed char|unsigned int) (\w+)\[", text, re.M):
            if not m.group(1).startswith("ag_"):
                bad.add((name, m.group(1)))
        for m in re.finditer(r"^typedef struct[^{]*\{[^}]*\}\s*(\w+);", text, re.M):
            if not m.group(1).startswith("ag_"):
                bad.add((name, m.group(1)))
    assert not bad, sorted(bad)[:10]


def test_generated_code_has_no_trivial_arithmetic():
    """Folded as written: no `/ 1`, `% 1` or `+ 0` anywhere, and no `* 1` nor one-trip chunk loop in
    the shapes that run by default."""
    sources = _gpu_matrix_sources()
    for name, text in sources.items():
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for pattern in (r"/ 1\b(?![.0-9])", r"% 1\b(?![.0-9])", r"\+ 0\b(?![.x0-9])"):
            assert not re.search(pattern, code), f"{name}: {pattern}"
    for name in (
        "t_reduce_sum_f32.cu",
        "t_scan_sum_f32.cu",
        "t_exscan_sum_i32.cu",
        "t_segscan_sum_f32.cu",
        "t_mat2mul_b256_t4.cu",
        "t_segreduce_sum_f32.cu",
    ):
        code = re.sub(r"/\*.*?\*/", "", sources[name], flags=re.S)
        assert not re.search(r"\* 1\b(?![.0-9])", code), name
        assert not re.search(r"for \(int q = 0; q < 1;", code), name
