"""Tuning files (issue 19): `assocgen tune` writes one on a GPU, `assocgen SPEC --tuning FILE`
generates with it.  Here, without a GPU: reading and checking a file (a malformed, foreign or
stale one is one clear line, and generation falls back to the built-in shapes only when told to),
what a tuned instance's source and header say, the build graph's dependency on the file, the
choice of shapes from measured times, and the tune command's build of its candidates with nvcc
(its run on a GPU is tests/gpu/tune/run.py)."""

import re
import subprocess
from dataclasses import replace

import pytest

from assocgen import emit, tune, tunefile, tuning
from assocgen.spec import parse

from .util import NVCC, assert_one_error_line, at_arch, run_gen


def unwrapped(header: str) -> str:
    """`header` with each declaration's doc comment on one line (the header wraps them at 100
    columns, continued 3 spaces in)."""
    return re.sub(r"\n   (?! )", " ", header)


SPEC = """prefix = "q"
[[reduce]]
op = ["sum", "min"]
type = "f32"
[[scan]]
op = "sum"
type = "i32"
kind = ["inclusive", "exclusive"]
[[reduce]]
op = "max"
type = "f32"
items = 8
name = "given"
"""


def _spec():
    import tomllib

    return parse(tomllib.loads(SPEC), "q.toml")


def _inst(spec, name):
    return next(i for i in spec.instances if i.public_name == name)


def _file(tmp_path, spec=None, gpu="NVIDIA H100 80GB HBM3", arch="sm_90", shapes=None, edit=None):
    """A tuning file for q_reduce_sum_f32 and q_scan_sum_i32 (two and three shapes by n)."""
    spec = spec or _spec()
    red, scan = _inst(spec, "q_reduce_sum_f32"), _inst(spec, "q_scan_sum_i32")
    entries = [
        (red, shapes or ((65536, 128, 8, 0), (None, 256, 16, 0)), ["a note"]),
        (scan, ((4096, 128, 8, 0), (1 << 20, 512, 16, 0), (None, 256, 36, 6)), []),
    ]
    text = tunefile.write_text(gpu, arch, entries, "made by a test")
    for old, new in (edit or {}).items():
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "tuning.toml"
    path.write_text(text)
    return path


def test_a_tuned_instance_takes_its_shapes_by_n(tmp_path):
    spec = tunefile.apply(_spec(), tunefile.read(_file(tmp_path)))
    files = emit.render(spec, "q.h")
    red = files["q_reduce_sum_f32.cu"]
    assert re.findall(r"^namespace (ag_s\d) \{", red, re.M) == ["ag_s0", "ag_s1"]
    assert "q_k_reduce_sum_f32_b128_t8(" in red and "q_k_reduce_sum_f32_b256_t16(" in red
    assert "    if (n <= 65536)\n        return ag_s0::ag_reduce(d_in, n, d_out, d_work, work_bytes, stream);" in red
    assert "    return ag_s1::ag_reduce(d_in, n, d_out, d_work, work_bytes, stream);\n}" in red
    assert "acc_out" not in red  # a shape's entry has no accumulator out (that is the reduce across ranks')
    # the workspace: the most the shapes need up to n, a shape picked up to some size at most there
    assert "size_t most = ag_s0::ag_reduce_workspace_bytes(n < 65536 ? n : 65536), bytes;" in red
    assert "bytes = ag_s1::ag_reduce_workspace_bytes(n);" in red
    scan = files["q_scan_sum_i32.cu"]
    assert re.findall(r"if \(n <= (\d+)\)", scan) == ["4096", "1048576"]
    assert "__launch_bounds__(256, 6)" in at_arch(scan)  # the shape's blocks_per_sm
    # an instance the file does not name keeps the built-in shapes (a sized 4-byte scan)
    ex = files["q_exscan_sum_i32.cu"]
    assert [int(u) for u in re.findall(r"if \(n <= (\d+)\)", ex)] == [u for u, _, _ in tuning.SCAN_SIZE_SHAPES]
    header = unwrapped(files["q.h"])
    assert '#define Q_TUNING "tuned on NVIDIA H100 80GB HBM3 (sm_90), tuning file sha256:' in header
    assert "n <= 65536 128 x 8, larger n 256 x 16" in header
    assert "larger n 256 x 36 (6 a SM)" in header
    # the same file and spec, the same bytes
    assert emit.render(tunefile.apply(_spec(), tunefile.read(_file(tmp_path))), "q.h") == files


def test_without_a_tuning_file_the_header_says_built_in():
    header = emit.render(_spec(), "q.h")["q.h"]
    assert '#define Q_TUNING "built-in"' in header
    assert "`assocgen tune SPEC` measures" in header


@pytest.mark.parametrize(
    "edit, message",
    [
        ({"format = 1": "format = 2"}, "format: 2: this generator reads tuning files of format 1"),
        ({"format = 1": "format = 1\nformat = 1"}, "not a tuning file (not valid TOML"),
        ({'arch = "sm_90"': ""}, "arch: missing"),
        ({'arch = "sm_90"': 'arch = "sm_90"\nextra = 1'}, "unknown key 'extra'"),
        ({"block = 128": "block = 96"}, "shapes[0].block: 96 is not a power of two"),
        ({"block = 128": "block = 2048"}, "shapes[0].block: 2048 is outside 32..1024"),
        ({"items = 8 }": "items = 0 }"}, "items: 0 is outside 1..64"),
        ({"upto = 65536": "upto = -1"}, "upto: -1 is outside 1.."),
        ({"upto = 1048576": "upto = 100"}, "shapes[1].upto: 100 does not grow from the shape before (4096)"),
        ({"{ upto = 65536, ": "{ "}, "shapes[0]: upto is missing"),
        ({"{ block = 256, items = 16 }": "{ upto = 9, block = 256, items = 16 }"}, "leave upto out"),
        ({"items = 8 }": 'items = 8, color = "red" }'}, "unknown key 'color'"),
        ({'name = "q_reduce_sum_f32"': 'name = "q_scan_sum_i32"'}, "'q_scan_sum_i32' is tuned twice"),
        ({'name = "q_reduce_sum_f32"': 'name = "q_nothing"'}, "no instance of that name"),
        ({'name = "q_reduce_sum_f32"': 'name = "q_given"'}, "cannot take tuned shapes: the spec gives its shape"),
        ({"reduce sum f32 -> f32": "reduce sum f32 -> f64"}, "tune it again"),
        ({"operator sha256:": "operator sha256:0"}, "tune it again"),
        ({'arch = "sm_90"': 'arch = "sm_70"'}, "'sm_70' is not an architecture the kernels run on"),
        ({'arch = "sm_90"': 'arch = "gfx90a"'}, "'gfx90a' is not an architecture the kernels run on"),
        ({"format = 1": "format = true"}, "format: True: this generator reads tuning files of format 1"),
        ({'gpu = "NVIDIA H100 80GB HBM3"': 'gpu = "a */ b"'}, "comment marks"),
        ({"blocks_per_sm = 6": "blocks_per_sm = 9"}, "blocks_per_sm: 9 is outside 0..8"),
    ],
)
def test_a_bad_tuning_file_is_one_line_and_nothing_is_written(tmp_path, edit, message):
    (tmp_path / "q.toml").write_text(SPEC)
    bad = _file(tmp_path, edit=edit)
    out = tmp_path / "out"
    r = run_gen(tmp_path / "q.toml", "-o", out, "--tuning", bad, "--no-compile-check")
    assert_one_error_line(r)
    assert message in r.stderr and str(bad) in r.stderr and "--tuning-fallback" in r.stderr
    assert not out.exists()
    # told to fall back: a note, the built-in shapes, and the header says so
    r = run_gen(tmp_path / "q.toml", "-o", out, "--tuning", bad, "--tuning-fallback", "--no-compile-check")
    assert r.returncode == 0, r.stderr
    notes = r.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("note: ") and "using the built-in shapes" in notes[0]
    assert '#define Q_TUNING "built-in"' in (out / "q.h").read_text()


def test_a_tuning_for_another_gpu_is_refused_when_the_gpu_is_named(tmp_path):
    (tmp_path / "q.toml").write_text(SPEC)
    good = _file(tmp_path)
    out = tmp_path / "out"
    r = run_gen(
        tmp_path / "q.toml", "-o", out, "--tuning", good, "--gpu", "NVIDIA A100-SXM4-80GB", "--no-compile-check"
    )
    assert_one_error_line(r)
    assert "measured on 'NVIDIA H100 80GB HBM3', not on 'NVIDIA A100-SXM4-80GB'" in r.stderr
    r = run_gen(
        tmp_path / "q.toml", "-o", out, "--tuning", good, "--gpu", "NVIDIA H100 80GB HBM3", "--no-compile-check"
    )
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "tuned on NVIDIA H100 80GB HBM3" in (out / "q.h").read_text()
    for args in (["--gpu", "x"], ["--tuning-fallback"]):  # they go with --tuning
        assert_one_error_line(run_gen(tmp_path / "q.toml", "-o", out, *args))
    missing = run_gen(tmp_path / "q.toml", "-o", out, "--tuning", tmp_path / "none.toml")
    assert_one_error_line(missing)
    assert "no such tuning file" in missing.stderr


def test_a_tuning_is_for_any_architecture_from_sm_80_and_not_for_functions_across_ranks(tmp_path):
    spec = tunefile.apply(_spec(), tunefile.read(_file(tmp_path, gpu="NVIDIA GeForce RTX 4090", arch="sm_89")))
    assert "tuned on NVIDIA GeForce RTX 4090 (sm_89)" in emit.render(spec, "q.h")["q.h"]
    with pytest.raises(tunefile.TuningError, match="across ranks"):
        tunefile.apply(replace(_spec(), nccl=True), tunefile.read(_file(tmp_path)))


def test_the_build_graph_reruns_the_generator_when_the_tuning_changes(tmp_path):
    (tmp_path / "q.toml").write_text(SPEC)
    good = _file(tmp_path)
    frag = tmp_path / "q.ninja"
    r = run_gen(tmp_path / "q.toml", "-o", tmp_path / "out", "--tuning", good, "--ninja", frag, "--no-compile-check")
    assert r.returncode == 0, r.stderr
    text = frag.read_text()
    assert f"--tuning {good}" in text
    assert str(good).replace(":", "$:") in text.split("| ", 1)[1]  # an implicit input of the edge


def test_tuned_sources_compile(tmp_path, nvcc):
    spec = tunefile.apply(_spec(), tunefile.read(_file(tmp_path)))
    files = emit.render(spec, "q.h")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for name in ("q_reduce_sum_f32.cu", "q_scan_sum_i32.cu"):
        r = subprocess.run(
            [
                NVCC,
                "-O3",
                "-arch=sm_90",
                "-Xcompiler",
                "-Wall,-Wextra",
                "-I",
                str(tmp_path),
                "-c",
                name,
                "-o",
                name + ".o",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0 and "warning" not in r.stderr.lower(), r.stderr


def test_choose_keeps_the_built_in_shape_unless_another_is_clearly_faster():
    sizes = [1 << 12, 1 << 14, 1 << 16, 1 << 18]
    # candidate 0 built in; 1 faster at the small sizes by 30%, 2 by 1% (noise) at 2^18
    scores = [[10, 10, 10, 10], [7, 7, 11, 12], [12, 12, 12, 9.9]]
    picks = tune.choose(sizes, scores, [0, 0, 0, 0])
    assert picks == [(1 << 15, 1), (None, 0)]  # the threshold halfway (geometrically) between 2^14 and 2^16
    # every size its own winner, but at most max_shapes shapes: the cheapest run is merged
    scores = [[10, 10, 10, 10], [5, 10, 10, 10], [10, 5, 10, 10], [10, 10, 5, 9]]
    picks = tune.choose(sizes, scores, [0, 0, 0, 0], max_shapes=3)
    assert len({c for _, c in picks}) <= 3 and picks[-1][0] is None
    assert [u for u, _ in picks[:-1]] == sorted(u for u, _ in picks[:-1])
    # the shape of the size before is kept only where it, too, is clear of the built-in one
    picks = tune.choose([1, 2], [[10.5, 10.5], [9, 10.35], [12, 10.0]], [0, 0])
    assert picks == [(1, 1), (None, 2)]
    # a candidate that could not be timed at a size is never taken there
    picks = tune.choose(sizes[:1], [[10], [None]], [0])
    assert picks == [(None, 0)]


def test_candidates_include_the_built_in_shapes_and_fit():
    spec = _spec()
    for name in ("q_reduce_sum_f32", "q_scan_sum_i32"):
        inst = _inst(spec, name)
        cands = tuning.tune_candidates(inst)
        keys = [(c.block, c.items, c.blocks_per_sm) for c in cands]
        assert len(keys) == len(set(keys)) >= 10
        builtin = [s for _, s in tuning.size_shapes(inst)] or [inst]
        for s in builtin:
            assert (s.block, s.items, s.blocks_per_sm) in keys
        assert all(not tuning.items_problem(c, c.items) for c in cands)


SEG_SPEC = """prefix = "q"
[[segscan]]
op = "sum"
type = "f32"
heads = "flags"
[[segscan]]
op = "sum"
type = "f32"
heads = "keys"
key = "i32"
kind = "exclusive"
[[segreduce]]
op = "sum"
type = "f32"
offset = "i32"
"""


def _seg_spec():
    import tomllib

    return parse(tomllib.loads(SEG_SPEC), "s.toml")


def test_segmented_scans_are_tuned_by_their_heads(tmp_path):
    spec = _seg_spec()
    flags, keys = _inst(spec, "q_segscan_sum_f32"), _inst(spec, "q_exsegscan_sum_f32_by_i32")
    assert tunefile.tunable(flags, spec) == tunefile.tunable(keys, spec) == ""
    # a segmented reduce by offsets runs by spans: its tables are not a block and items
    assert "only reduces and scans" in tunefile.tunable(_inst(spec, "q_segreduce_sum_f32"), spec)
    # what a tuning file records names the heads (and the key type): a tuning by flags is not one by keys
    assert " by flags (operator sha256:" in tunefile.what(flags)
    assert " by keys i32 (operator sha256:" in tunefile.what(keys)
    assert tunefile.what(flags).replace(" by flags", "") == tunefile.what(_inst(_spec(), "q_reduce_sum_f32")).replace(
        "reduce", "segscan"
    )
    for inst in (flags, keys):
        cands = tuning.tune_candidates(inst)
        keyset = [(c.block, c.items, c.blocks_per_sm) for c in cands]
        assert len(keyset) == len(set(keyset)) >= 10
        for _, s in tuning.size_shapes(inst):
            assert (s.block, s.items, s.blocks_per_sm) in keyset
        assert all(not tuning.items_problem(c, c.items) for c in cands)
    shapes = ((4096, 128, 8, 0), (None, 256, 16, 0))
    text = tunefile.write_text("NVIDIA H100 80GB HBM3", "sm_90", [(flags, shapes, []), (keys, shapes, [])])
    path = tmp_path / "t.toml"
    path.write_text(text)
    files = emit.render(tunefile.apply(spec, tunefile.read(path)), "q.h")
    for name in ("q_segscan_sum_f32.cu", "q_exsegscan_sum_f32_by_i32.cu"):
        assert re.findall(r"if \(n <= (\d+)\)", files[name]) == ["4096"], name
        assert "_b128_t8(" in files[name] and "_b256_t16(" in files[name]
    path.write_text(text.replace("by keys i32", "by keys u32"))
    with pytest.raises(tunefile.TuningError, match="tune it again"):
        tunefile.apply(spec, tunefile.read(path))


def test_the_measuring_program_of_a_segmented_scan_compiles(tmp_path, nvcc):
    spec = _seg_spec()
    files = emit.render(spec, "q.h")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for p in ("q_segscan_sum_f32", "q_exsegscan_sum_f32_by_i32"):
        inst = _inst(spec, p)
        src = tune.harness_source(inst, [p], "q.h", "test")
        # the heads filled on the GPU, the reference restarting at them, the function called with them
        assert "agt_fill_heads<<<" in src and "acc = agt_op_identity();" in src
        assert f"return {p}(x, h, n, y, {'NULL, ' if inst.exclusive else ''}w, wb, s);" in src
        (tmp_path / f"check_{p}.cu").write_text(src)
        r = subprocess.run(
            [NVCC, "-O3", "-arch=sm_90", "-Xcompiler", "-Wall,-Wextra", "-I", str(tmp_path), "-c", f"check_{p}.cu"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0 and "warning" not in r.stderr.lower(), r.stderr


def _tune(*args):
    return run_gen("tune", *args, timeout=600)


def test_tune_refuses_what_it_cannot_tune_in_one_line(tmp_path):
    (tmp_path / "q.toml").write_text('prefix = "q"\n[[reduce]]\nop = "max"\ntype = "f32"\nitems = 8\n')
    r = _tune(tmp_path / "q.toml", "-o", tmp_path / "t.toml")
    assert_one_error_line(r)
    assert "no instance to tune" in r.stderr and "the spec gives its shape" in r.stderr
    assert_one_error_line(_tune(tmp_path / "none.toml"))
    assert_one_error_line(_tune(tmp_path / "q.toml", "--sizes", "12,abc"))
    assert_one_error_line(_tune(tmp_path / "q.toml", "--bogus"))
    (tmp_path / "ok.toml").write_text(SPEC)
    for out in (".", tmp_path, tmp_path / "no" / "t.toml"):  # checked before anything is measured
        assert_one_error_line(_tune(tmp_path / "ok.toml", "-o", out))
    assert not (tmp_path / "t.toml").exists()


@pytest.mark.slow
def test_tune_builds_its_candidates_and_stops_without_a_gpu(tmp_path, nvcc):
    (tmp_path / "q.toml").write_text(SPEC)
    r = _tune(
        tmp_path / "q.toml", "--only", "q_exscan_sum_i32", "--build-only", "--arch", "sm_90", "--work", tmp_path / "w"
    )
    assert r.returncode == 0, r.stderr
    assert re.search(r"built \d+ candidates and 1 measuring programs", r.stdout)
    assert (tmp_path / "w" / "harness0").exists()
    # on this machine there is no GPU: one line, exit 1, no tuning file
    r = _tune(tmp_path / "q.toml", "--only", "q_reduce_sum_f32", "-o", tmp_path / "t.toml")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and "no GPU" in errors[0], r.stderr
    assert not (tmp_path / "t.toml").exists()
