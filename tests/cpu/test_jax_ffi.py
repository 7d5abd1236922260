"""The JAX functions without a GPU (docs/python.md, "JAX"): the XLA FFI handlers rendered from the
functions' description (one a function, its attributes the C function's sizes), a call's plan on
abstract arrays (output shapes and dtypes, attributes, the checks naming the argument), and, where
jax is installed, the handlers compiled against jax.ffi.include_dir(), `assocgen build --jax`, the
targets registered and a jitted call lowered for CUDA.  CI does not install jax: those tests skip
saying so.  Nothing here runs a handler (tests/gpu/python/run_jax.py does, on a GPU)."""

import importlib.util
import json
import re
import shutil
import subprocess

import pytest

import assocgen
from assocgen import cuda, emit, jaxffi, pybuild, pymodel

from .test_python_api import SMALL, _full_spec_text
from .util import NVCC, run_gen

HAVE_JAX = importlib.util.find_spec("jax") is not None
needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="jax is not installed (CI does not install it)")


@pytest.fixture(scope="module")
def description():
    return json.loads(json.dumps(pybuild.describe(pybuild.read_spec(_full_spec_text()))))


@pytest.fixture(scope="module")
def full(description):
    return {fn.short: fn for fn in jaxffi.model(description)}


@pytest.fixture(scope="module")
def source(description):
    return jaxffi.render(description)


def _impl(source: str, name: str) -> str:
    """One handler's function and its binding in the rendered file."""
    start = source.index(f"static ffi::Error ag_jax_{name}_impl(")
    return source[start : source.index(");\n", source.index("XLA_FFI_DEFINE_HANDLER_SYMBOL", start)) + 3]


# ---- the handlers' C++ ----


def test_one_handler_a_function(description, source):
    names = [f["name"] for f in description["functions"]]
    assert re.findall(r"^XLA_FFI_DEFINE_HANDLER_SYMBOL\((\w+),", source, re.M) == [f"ag_jax_{n}" for n in names]
    assert '#include "mat.h"' in source and '#include "xla/ffi/api/ffi.h"' in source


def test_attributes_are_the_c_sizes(full, source):
    for fn in full.values():
        text = _impl(source, fn.name)
        attrs = re.findall(r'\.Attr<([\w:<> ]+)>\("(\w+)"\)', text)
        sizes = [("uint64_t", n) for t, n in fn.params if t == "size_t" and n != "work_bytes"]
        want = sizes + [("bool", f) for f in fn.flags] + [("ffi::Span<const uint8_t>", h) for h in fn.host]
        want += [("bool", f"{h}_given") for h in fn.host]
        assert sorted(attrs) == sorted(want), fn.name
        assert text.count(".Arg<ffi::AnyBuffer>()") == len(fn.inputs)
        assert text.count(".Ret<ffi::AnyBuffer>()") == len(fn.outputs)
        assert f"{fn.name}_workspace_bytes({', '.join(fn.work)})" in text


def test_handler_checks_bytes_and_calls_in_c_order(source):
    text = _impl(source, "mat_segreduce_sum_f32")
    assert '{"offsets", d_offsets.size_bytes(), (n_segments + 1) * sizeof(int32_t)}' in text
    assert '{"out", d_out->size_bytes(), n_segments * sizeof(float)}' in text
    call = text[text.index("mat_segreduce_sum_f32(\n") :]
    assert re.sub(r"\s+", " ", call).startswith(
        "mat_segreduce_sum_f32( (const float *)d_in.untyped_data(), n, (const int32_t *)d_offsets.untyped_data(), "
        "n_segments, (float *)d_out->untyped_data(), work, work_bytes, stream));"
    )
    reduce = _impl(source, "mat_reduce_sum_f32")
    assert '{"out", d_out->size_bytes(), sizeof(float)}' in reduce  # no `1 *`
    assert "* 1" not in source and "1 *" not in source


def test_exclusive_scan_init_and_accumulate(source):
    ex = _impl(source, "mat_exscan_mat2mul_mat2u")
    assert "mat2u init_value;" in ex and "init_given ? &init_value : nullptr" in ex
    mm = _impl(source, "mat_matmul_plus_times_f32")
    assert ".OptionalArg<ffi::AnyBuffer>()" in mm and "accumulate &&" in mm
    assert "OptionalArg" not in _impl(source, "mat_reduce_sum_f32")


def test_workspace_is_xla_scratch_zeroed_on_the_stream(source):
    assert "scratch.Allocate(bytes + 256, 16)" in source  # XLA refuses an alignment past 16
    assert "(uintptr_t)*p + 256 - 1) / 256 * 256" in source
    assert "cudaMemsetAsync(*work, 0, bytes, stream)" in source
    assert "cudaGetErrorName(e)" in source


def test_the_same_description_gives_the_same_bytes(description, source):
    assert jaxffi.render(description) == source


# ---- a call's plan on abstract arrays (no jax) ----


def a(shape, dtype="f4"):
    return jaxffi.abstract("x", shape, dtype[0], int(dtype[1:]))


def test_plan_reduce_and_user_types(full):
    p = jaxffi.plan(full["reduce_sum_f32"], [a((1001,))], None, None, False, False)
    assert p.results == (((1,), "f4"),) and p.attrs == {"n": ("uint64", 1001)}
    p = jaxffi.plan(full["scan_mat2mul_mat2u"], [a((7, 2, 2), "u4")], None, None, False, False)
    assert p.results == (((7, 2, 2), "u4"),)  # a user type's output as its input holds it
    p = jaxffi.plan(full["exscan_mat2mul_mat2u"], [a((0, 4), "u4")], None, bytes(16), False, False)
    assert p.results == (((0, 4), "u4"),) and p.attrs["init"] == ("uint8", bytes(16))
    assert p.attrs["init_given"] == ("bool", True)
    p = jaxffi.plan(full["exscan_mat2mul_mat2u"], [a((1, 4), "u4")], None, None, False, False)
    assert p.attrs["init"] == ("uint8", bytes(16)) and p.attrs["init_given"] == ("bool", False)  # never empty


def test_plan_segments_keys_rows_transpose(full):
    p = jaxffi.plan(full["segreduce_sum_f32"], [a((100,)), a((6,), "i4")], None, None, False, False)
    assert p.results == (((5,), "f4"),) and p.attrs == {"n": ("uint64", 100), "n_segments": ("uint64", 5)}
    by_key = full["reduce_sum_f32_by_i32"]
    p = jaxffi.plan(by_key, [a((9,)), a((9,), "i4")], None, None, False, False)
    assert p.results == (((9,), "f4"), ((9,), "i4"), ((1, 2), "u4")) and p.low_words == (False, False, True)
    p = jaxffi.plan(by_key, [a((9,)), a((9,), "i4")], None, None, False, True)  # jax_enable_x64
    assert p.results[2] == ((1,), "u8") and p.low_words == (False, False, False)
    p = jaxffi.plan(full["rows_scan_sum_f32"], [a((3, 5))], None, None, False, False)
    assert p.results == (((3, 5), "f4"),)
    assert p.attrs == {n: ("uint64", v) for n, v in dict(rows=3, cols=5, pitch=5, out_pitch=5).items()}
    p = jaxffi.plan(full["transpose_f32"], [a((3, 5))], None, None, False, False)  # batch left out
    assert p.results == (((5, 3), "f4"),) and p.attrs["batch"] == ("uint64", 1)
    p = jaxffi.plan(full["transpose_mat2u"], [a((2, 3, 5, 4), "u4")], None, None, False, False)
    assert p.results == (((2, 5, 3, 4), "u4"),)


def test_plan_matmul_accumulate(full):
    fn = full["matmul_maxtimes_witness"]
    p = jaxffi.plan(fn, [a((4, 6)), a((6, 3))], None, None, False, False)
    assert p.results == (((4, 3), "f4"), ((4, 3), "i4")) and not p.folded
    assert p.attrs["accumulate"] == ("bool", False) and p.attrs["lda"] == ("uint64", 6)
    p = jaxffi.plan(fn, [a((4, 6)), a((6, 3))], a((4, 3)), None, True, False)
    assert p.folded and p.attrs["accumulate"] == ("bool", True)
    with pytest.raises(ValueError, match="^c: shape \\(4, 2\\) gives n = 2"):
        jaxffi.plan(fn, [a((4, 6)), a((6, 3))], a((4, 2)), None, True, False)


@pytest.mark.parametrize(
    "name, inputs, kw, error, words",
    [
        ("reduce_sum_f32", [a((10,), "i4")], {}, TypeError, "in: expected float (float32), got i4"),
        ("reduce_sum_f32", [a((10, 2))], {}, ValueError, "in: expected 1 dimensions"),
        ("reduce_sum_f32", [a((10,)), a((10,))], {}, TypeError, "reduce_sum_f32() takes 1 arrays"),
        ("reduce_sum_f32", [a((10,))], dict(init=1.0), TypeError, "reduce_sum_f32: takes no init="),
        ("reduce_sum_f32", [a((10,))], dict(out=a((1,))), TypeError, "reduce_sum_f32: a JAX function returns"),
        ("scan_mat2mul_mat2u", [a((7, 3), "u4")], {}, TypeError, "in: expected mat2u (16 bytes"),
        ("exscan_mat2mul_mat2u", [a((7, 4), "u4")], dict(init=b"12"), ValueError, "init: 2 bytes for mat2u"),
        ("exscan_mat2mul_mat2u", [a((7, 4), "u4")], dict(init=3), TypeError, "init: a mat2u is given as its"),
        ("matmul_plus_times_f32", [a((2, 2)), a((2, 2))], dict(accumulate=True), TypeError, "matmul_plus_times"),
        ("reduce_dot_f32", [a((5,)), a((6,))], {}, ValueError, "in1: shape (6,) gives n = 6, the arguments"),
    ],
)
def test_plan_bad_calls(full, name, inputs, kw, error, words):
    kw = dict(dict(out=None, init=None, accumulate=False), **kw)
    with pytest.raises(error, match="^" + re.escape(words)):
        jaxffi.plan(full[name], inputs, kw["out"], kw["init"], kw["accumulate"], False)


def test_init_bytes_of_numbers():
    f32, u64 = pymodel.Elem("float", "f32", 4, "float"), pymodel.Elem("uint64_t", "u64", 8, "uint")
    pytest.importorskip("numpy", reason="numpy is not installed (it comes with jax)")
    assert jaxffi.init_bytes("init", f32, 1.5) == b"\x00\x00\xc0\x3f"
    assert jaxffi.init_bytes("init", u64, 3) == (3).to_bytes(8, "little")
    with pytest.raises(TypeError, match="^init: expected a number for float"):
        jaxffi.init_bytes("init", f32, "1")


def test_signatures(full):
    assert jaxffi.signature(full["reduce_sum_f32"]) == "reduce_sum_f32(in) -> out"
    assert jaxffi.signature(full["exscan_mat2mul_mat2u"]) == "exscan_mat2mul_mat2u(in, *, init=None) -> out"
    assert (
        jaxffi.signature(full["matmul_plus_times_f32"])
        == "matmul_plus_times_f32(a, b, *, accumulate=False, out=None) -> c"
    )


# ---- with jax: compiled against its headers, built, registered, lowered ----


@needs_jax
def test_handlers_compile_against_jaxlib_headers(description, source, tmp_path):
    include = jaxffi.include_dir()
    assert include is not None and (include / "xla" / "ffi" / "api" / "ffi.h").is_file()
    (tmp_path / "mat.h").write_text(emit.render(pybuild.read_spec(_full_spec_text()))["mat.h"])
    (tmp_path / "mat_jax.cc").write_text(source)
    flags = [*jaxffi.FLAGS, "-Xcompiler", "-Wall,-Wextra,-Werror", "-isystem", str(include), "-I", str(tmp_path)]
    r = subprocess.run(
        [NVCC, *flags, "-c", str(tmp_path / "mat_jax.cc"), "-o", str(tmp_path / "mat_jax.o")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    symbols = subprocess.run(
        ["nm", "-g", "--defined-only", str(tmp_path / "mat_jax.o")], capture_output=True, text=True
    )
    exported = sorted(re.findall(r" T (ag_jax_\w+)$", symbols.stdout, re.M))
    assert exported == sorted(f"ag_jax_{f['name']}" for f in description["functions"])


@pytest.fixture(scope="module")
def built_jax(tmp_path_factory, nvcc):
    """SMALL built for sm_90 by `assocgen build --jax`."""
    folder = tmp_path_factory.mktemp("built_jax")
    (folder / "small.toml").write_text(SMALL)
    r = run_gen("build", folder / "small.toml", "-o", folder / "lib", "--arch", "90", "--jax", timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == str(folder / "lib" / "libpy_jax.so")
    return folder / "lib"


@needs_jax
def test_build_jax_links_to_the_library(built_jax):
    d = subprocess.run(["readelf", "-d", str(built_jax / "libpy_jax.so")], capture_output=True, text=True).stdout
    assert "[libpy.so]" in d and "[$ORIGIN]" in d


@needs_jax
def test_registered_and_lowered_for_cuda(built_jax):
    import jax
    import jax.numpy as jnp
    import numpy as np

    j = assocgen.load(built_jax).jax
    assert assocgen.load(built_jax).jax is j  # registered once a process
    assert sorted(j.functions) == [
        "exscan_compose_affine",
        "reduce_mat3mul_mat3u",
        "reduce_sum_f32",
        "scan_compose_affine",
    ]
    assert j.scan_compose_affine is j.py_scan_compose_affine
    assert repr(j.exscan_compose_affine) == "<assocgen JAX function exscan_compose_affine(in, *, init=None) -> out>"

    def f(maps, m3):
        init = np.array([2.0, 3.0], np.float32)
        return j.scan_compose_affine(maps), j.exscan_compose_affine(maps, init=init), j.reduce_mat3mul_mat3u(m3)

    args = (jnp.zeros((7, 2), jnp.float32), jnp.zeros((5, 3, 3), jnp.uint32))
    text = jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    calls = re.findall(r"stablehlo.custom_call @(\w+)\(.*mhlo.backend_config = \{([^}]*)\}.* -> (.*)$", text, re.M)
    assert [(re.sub(r"_[0-9a-f]{10}$", "", t), attrs, out) for t, attrs, out in calls] == [
        ("assocgen_py_scan_compose_affine", "n = 7 : ui64", "tensor<7x2xf32>"),
        (
            "assocgen_py_exscan_compose_affine",
            "init = dense<[0, 0, 0, 64, 0, 0, 64, 64]> : tensor<8xui8>, init_given = true, n = 7 : ui64",
            "tensor<7x2xf32>",
        ),
        ("assocgen_py_reduce_mat3mul_mat3u", "n = 5 : ui64", "tensor<1x3x3xui32>"),
    ]


@needs_jax
@pytest.mark.skipif(cuda.device_count() > 0, reason="a GPU is present (jax's arrays go there)")
def test_a_cpu_array_is_refused_naming_it(built_jax):
    import jax.numpy as jnp

    j = assocgen.load(built_jax).jax
    with pytest.raises(TypeError, match="^in: expected float \\(float32\\), got i4"):  # the type first
        j.reduce_sum_f32(jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="^in: a JAX array on cpu; the kernels need a CUDA device"):
        j.reduce_sum_f32(jnp.zeros(3, jnp.float32))


@needs_jax
def test_module_jax_builds_the_handlers_the_first_time(built_jax, tmp_path):
    folder = tmp_path / "lib"
    shutil.copytree(built_jax, folder)
    (folder / "libpy_jax.so").unlink()
    j = assocgen.load(folder).jax
    assert (folder / "libpy_jax.so").is_file() and not list(folder.glob(".jax.*"))
    assert j.reduce_sum_f32.target != assocgen.load(built_jax).jax.reduce_sum_f32.target  # another build


def test_build_without_jax_writes_no_handlers(tmp_path, monkeypatch):
    """--no-jax, or jax not importable, and no flag: the three files only (the flag is read first)."""
    monkeypatch.setattr(jaxffi, "available", lambda: False)
    seen = []
    monkeypatch.setattr(pybuild, "build_to", lambda spec, t, out, jax: seen.append(jax) or [])
    monkeypatch.setattr(pybuild, "target", lambda arch, nvcc: None)
    (tmp_path / "s.toml").write_text(SMALL)
    assert pybuild.main([str(tmp_path / "s.toml"), "-o", str(tmp_path / "o")]) == 0
    assert pybuild.main([str(tmp_path / "s.toml"), "-o", str(tmp_path / "o"), "--jax"]) == 0
    monkeypatch.setattr(jaxffi, "available", lambda: True)
    assert pybuild.main([str(tmp_path / "s.toml"), "-o", str(tmp_path / "o")]) == 0
    assert pybuild.main([str(tmp_path / "s.toml"), "-o", str(tmp_path / "o"), "--no-jax"]) == 0
    assert seen == [False, True, True, False]


def test_build_jax_without_jax_is_a_build_error(tmp_path, monkeypatch):
    monkeypatch.setattr(jaxffi, "include_dir", lambda: None)
    with pytest.raises(pybuild.BuildError, match="^the JAX functions need jax: it is not importable"):
        pybuild.build_jax(tmp_path)


def test_init_of_a_numpy_scalar_is_its_number():
    np = pytest.importorskip("numpy", reason="numpy is not installed (it comes with jax)")
    u32 = pymodel.Elem("uint32_t", "u32", 4, "uint")
    assert jaxffi.init_bytes("init", u32, np.float32(7.0)) == (7).to_bytes(4, "little")
    assert jaxffi.init_bytes("init", u32, np.array([7], np.uint32)) == (7).to_bytes(4, "little")  # bytes


def test_build_jax_in_a_folder_not_writable_is_a_build_error(tmp_path, monkeypatch):
    monkeypatch.setattr(jaxffi, "include_dir", lambda: tmp_path)
    monkeypatch.setattr(jaxffi, "build", lambda *a: (_ for _ in ()).throw(PermissionError("read-only")))
    (tmp_path / pybuild.DESCRIPTION).write_text("{}")
    with pytest.raises(pybuild.BuildError, match="cannot be written there \\(read-only\\): assocgen build --jax$"):
        pybuild.build_jax(tmp_path)
