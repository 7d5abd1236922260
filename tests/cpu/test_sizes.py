"""Shapes by size (tuning.size_shapes): a plain scan of 4-byte elements in its default shape gets
several shapes, each in a namespace of its own, and a public function that picks one by n, in
the order of tuning.SCAN_SIZE_SHAPES; a shape the spec gives, another element size, the
segmented forms and the functions across ranks keep one; what the shapes' code holds alike is
written once.  (The GPU test runs the sized scans just below, at and above each threshold.)"""

import re
import subprocess

from assocgen import emit, tuning
from assocgen.spec import parse


def unwrapped(header: str) -> str:
    """`header` with each declaration's doc comment on one line (the header wraps them at 100
    columns, continued 3 spaces in)."""
    return re.sub(r"\n   (?! )", " ", header)


def _render(*scans, **top):
    return emit.render(parse({"prefix": "q", "scan": list(scans), **top}, "s.toml"), "q.h")


def test_a_default_shaped_4_byte_scan_picks_its_shape_by_n():
    files = _render({"op": "sum", "type": "f32", "kind": ["inclusive", "exclusive"]})
    src = files["q_scan_sum_f32.cu"]
    # one namespace a distinct shape, each with its kernel, in the order they are first picked
    assert re.findall(r"^namespace (ag_s\d) \{", src, re.M) == ["ag_s0", "ag_s1", "ag_s2", "ag_s3"]
    for block, items in ((256, 16), (256, 8), (128, 36), (256, 36)):
        assert f"q_k_scan_sum_f32_b{block}_t{items}(" in src
    picks = re.findall(r"if \(n <= (\d+)\)\n        return (ag_s\d)::ag_scan\(", src)
    spaces = ["ag_s0", "ag_s1", "ag_s0", "ag_s1", "ag_s2", "ag_s0"]
    want = [(str(upto), ns) for (upto, _, _), ns in zip(tuning.SCAN_SIZE_SHAPES, spaces, strict=True)]
    assert picks == want
    assert "    return ag_s3::ag_scan(d_in, n, d_out, d_work, work_bytes, stream);\n}" in src  # the rest
    assert "carry" not in src  # a shape's entry has no carry in (that is the scan across ranks')
    # what the shapes hold alike is written once, before them; what reads their tile, in each
    shared = src[: src.index("namespace ag_s0")]
    for helper in ("float ag_shfl_up(", "float ag_warp_scan(", "float ag_look_back(", "void ag_copy_async16("):
        assert src.count(helper) == shared.count(helper) == 1, helper
    assert src.count("#define AG_GROUP ") == shared.count("#define AG_GROUP ") == 1
    assert src.count("#define AG_TILE ") == 4 and "#define AG_TILE" not in shared
    assert src.count("float ag_block_scan(") == 4  # 256 threads in three shapes, 128 in one: not alike
    # the workspace: the most the shapes picked up to n need, each at most at the largest n it is
    # picked for (the rest's at n), so that it grows with n but not past what a call can use
    ups = {}
    for (upto, _, _), ns in zip(tuning.SCAN_SIZE_SHAPES, spaces, strict=True):
        ups[ns] = max(ups.get(ns, 0), upto)
    got = re.findall(r"(ag_s\d)::ag_scan_workspace_bytes\((?:n < (\d+) \? n : \d+|n)\)[,;]", src)
    assert got == [(ns, str(ups[ns])) for ns in ("ag_s0", "ag_s1", "ag_s2")] + [("ag_s3", "")]
    assert "    return most;\n}" in src
    ex = files["q_exscan_sum_f32.cu"]
    assert "return ag_s3::ag_scan(d_in, n, d_out, init, d_work, work_bytes, stream);" in ex
    note = "shapes (block x items a thread) by n: n <= 8192 256 x 16, n <= 65536 256 x 8, n <= 131072 256 x 16,"
    assert note in unwrapped(files["q.h"])


def test_a_shape_the_spec_gives_or_another_form_keeps_one():
    files = _render(
        {"op": "sum", "type": "i32", "items": 36, "name": "given_items"},
        {"op": "sum", "type": "i32", "block": 128, "name": "given_block"},
        {"op": "sum", "type": "i32", "blocks_per_sm": 2, "name": "given_occupancy"},
        {"op": "sum", "type": ["f64", "u8"]},
        {"op": "argmin", "type": "f32"},
    )
    for name in ("q_given_items", "q_given_block", "q_given_occupancy", "q_scan_sum_f64", "q_scan_sum_u8"):
        assert "namespace ag_s0" not in files[f"{name}.cu"], name
    assert "namespace ag_s0" not in files["q_scan_argmin_f32.cu"]  # an 8-byte accumulator
    across = _render({"op": "sum", "type": "f32"}, nccl=True)
    assert "namespace ag_s0" not in across["q_scan_sum_f32.cu"] and "by n" not in across["q.h"]


def test_a_segmented_scan_takes_smaller_tiles_up_to_2_21():
    # flags or keys, inclusive or exclusive: 256 x 16 up to 2^13, 256 x 4 up to 2^15, 512 x 8 up to
    # 2^16, 256 x 16 up to 2^17, 1024 x 8 up to 2^18, 1024 x 4 up to 2^19, 1024 x 8 up to 2^20,
    # 256 x 16 up to 2^21 (tuning.SEGSCAN_SIZE_SHAPES), then its default: a shape picked in several
    # ranges is one namespace
    spec = {
        "prefix": "q",
        "segscan": [{"op": "sum", "type": "f32"}, {"op": "sum", "type": "f32", "heads": "keys", "key": "i32"}],
    }
    seg = emit.render(parse(spec, "s"), "q.h")
    shapes = tuning.SEGSCAN_SIZE_SHAPES
    assert [u for u, _, _ in shapes] == [1 << 13, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21]
    distinct = len({(block, items) for _, block, items in shapes})
    for name, text in seg.items():
        if name.endswith(".cu"):
            assert f"namespace ag_s{distinct}" in text and f"namespace ag_s{distinct + 1}" not in text, name
            for upto, block, items in shapes:
                assert f"if (n <= {upto})" in text and f"_b{block}_t{items}" in text, name
    one = emit.render(parse({"prefix": "q", "segscan": [{"op": "sum", "type": "f32", "items": 8}]}, "s"), "q.h")
    assert "namespace ag_s0" not in one["q_segscan_sum_f32.cu"]  # a shape the spec gives


def test_the_workspace_grows_with_n(tmp_path, nvcc):
    """The header's contract: a workspace sized for n serves every smaller n, across the shapes'
    thresholds too (a smaller tile needs more look-back slots); the size functions run on the host."""
    files = _render({"op": "sum", "type": "f32"})
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "main.cu").write_text(
        '#include <stdio.h>\n#include "q.h"\nint main(void) {\n'
        "    size_t before = 0;\n"
        "    for (size_t n = 0; n <= ((size_t)1 << 23); n += n < 4096 ? 1 : 97) {\n"
        "        const size_t b = q_scan_sum_f32_workspace_bytes(n);\n"
        '        if (b < before) { printf("shrinks at %zu: %zu < %zu\\n", n, b, before); return 1; }\n'
        "        before = b;\n    }\n"
        '    printf("grows\\n");\n    return 0;\n}\n'
    )
    exe = tmp_path / "ws"
    cmd = [nvcc, "-arch=sm_90", "-I", str(tmp_path), str(tmp_path / "main.cu"), str(tmp_path / "q_scan_sum_f32.cu")]
    subprocess.run([*cmd, "-o", str(exe)], check=True, capture_output=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "grows\n", r.stdout + r.stderr
