"""Compiling the spec's own C at generation time, so that a mistake in it is reported against the
spec key it came from instead of failing later inside nvcc on a generated file.

Two small probes, each piece of the user's code behind a `#line 1 "KEY"` so that the compiler's
first error names its key:
  - C (the host's `cc`): the types as the C header declares them (each name a typedef), and each
    identity as an initializer of its type, which catches one with too many or too few fields;
  - CUDA (`nvcc -ptx`): the types, a sizeof check against each type's `size`, and each operator's
    identity, combine and lift as the generated kernels define them, every warning an error (one
    in the user's code is reported as its error: a missing return, a narrowing, a result unused).
Without a compiler the check is skipped and a note says so.
"""

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from .spec import Spec, SpecError

_C_ERROR = re.compile(r"^(.+?):(\d+):(?:\d+:)? error: (.*)$", re.M)
# an error, or a warning made one (`error #940-D: ...`: -Werror all-warnings)
_NVCC_ERROR = re.compile(r"^(.+?)\((\d+)\): error(?: #\d+(?:-D)?)?: (.*)$", re.M)
_HEAD = "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"
_AFTER = "assocgen-probe after "  # the probe's lines after a snippet: an error there is the snippet's
_DEFINES = "assocgen-probe defines "  # a use of a type's name as a C type: an error there is the type's


def _cuda_include() -> str:
    """The CUDA Toolkit's include folder (the header includes cuda_runtime_api.h), or ''."""
    nvcc = shutil.which("nvcc")
    for d in ([str(Path(nvcc).resolve().parents[1] / "include")] if nvcc else []) + ["/usr/local/cuda/include"]:
        if (Path(d) / "cuda_runtime_api.h").is_file():
            return d
    return ""


def _at(key: str) -> str:
    return f'#line 1 "{key}"\n'


def _c_probe(spec: Spec, include: str) -> str:
    parts = [_HEAD + ("#include <cuda_runtime_api.h>\n" if include else "")]
    for n, code in enumerate(c for c in spec.user_code if c.kind == "type"):
        parts.append(_at(code.key) + code.text + "\n" + _at(_AFTER + code.key))
        parts.append(_at(_DEFINES + code.key) + f"typedef {code.type.c} assocgen_probe_type_{n};\n")
    for n, code in enumerate(c for c in spec.user_code if c.kind == "identity"):
        init = code.text[: code.text.rindex("return")].strip()  # `T r = {...};`
        parts.append(
            f'#line 1 "assocgen-probe"\nvoid assocgen_probe_{n}(void);\n'
            f"void assocgen_probe_{n}(void)\n{{\n{_at(code.key)}{init}\n"
            f"{_at(_AFTER + code.key)}(void)r;\n}}\n"
        )
    return "".join(parts)


def _cuda_probe(spec: Spec) -> str:
    parts = [_HEAD + "#include <cuda_runtime.h>\n"]
    for code in spec.user_code:
        if code.kind == "type":
            t = code.type
            parts.append(_at(code.key) + code.text + "\n" + _at(_AFTER + code.key))
            parts.append(
                _at(code.key.replace(": c", ": size"))
                + f'static_assert(sizeof({t.c}) == {t.size}, "sizeof({t.c}) is not the spec\'s size, {t.size}");\n'
            )
    for n, code in enumerate(spec.user_code):
        acc = code.type.c if code.type is not None else ""
        a_c = code.in_type.c if code.in_type else ""
        b_c = code.b_type.c if code.b_type else ""
        head = {
            "identity": f"static __host__ __device__ {acc} assocgen_f{n}(void)",
            "combine": f"static __device__ {acc} assocgen_f{n}({acc} a, {acc} b)",
            "lift": f"static __device__ {acc} assocgen_f{n}({a_c} x, size_t i)",
            "sr_zero": f"static __device__ {acc} assocgen_f{n}(void)",
            "sr_add": f"static __device__ {acc} assocgen_f{n}({acc} x, {acc} y)",
            "sr_mul": f"static __device__ {acc} assocgen_f{n}({a_c} a, {b_c} b)",
            "sr_step": f"static __device__ {acc} assocgen_f{n}({acc} c, {a_c} a, {b_c} b)",
            "sr_fast": f"static __device__ bool assocgen_f{n}({a_c} v)",
        }.get(code.kind)
        if head is None:
            continue
        use = {
            "identity": "assocgen_f{n}()",
            "combine": "assocgen_f{n}(r[0], r[1])",
            "lift": "assocgen_f{n}(x[0], 0)",
            "sr_zero": "assocgen_f{n}()",
            "sr_add": "assocgen_f{n}(r[0], r[1])",
            "sr_mul": "assocgen_f{n}(x[0], y[0])",
            "sr_step": "assocgen_f{n}(r[0], x[0], y[0])",
            "sr_fast": "assocgen_f{n}(x[0]) ? r[0] : r[1]",
        }[code.kind].format(n=n)
        in_c = a_c or acc
        params = f"const {in_c} *x, " + (f"const {b_c} *y" if b_c else f"const {acc} *y")
        if code.inputs:  # a lift of several inputs: x0, x1, ... and i
            xs = [f"x{k}" for k in range(len(code.inputs))]
            args = ", ".join(f"{t.c} {x}" for t, x in zip(code.inputs, xs, strict=True))
            head = f"static __device__ {acc} assocgen_f{n}({args}, size_t i)"
            use = f"assocgen_f{n}({', '.join(f'{x}[0]' for x in xs)}, 0)"
            params = ", ".join(f"const {t.c} *{x}" for t, x in zip(code.inputs, xs, strict=True))
        unused = "" if code.inputs else "(void)x; (void)y; "
        parts.append(
            f'#line 1 "assocgen-probe"\n{head}\n{{\n    (void){"i" if code.kind == "lift" else "0"};\n'
            f"{_at(code.key)}{code.text}\n"
            f"{_at(_AFTER + code.key)}}}\n"
            f"__global__ void assocgen_k{n}({params}, {acc} *r)"
            f" {{ {unused}r[2] = {use}; }}\n"
        )
    return "".join(parts)


def _first_error(
    output: str, pattern: re.Pattern[str], keys: set[str], accept: Callable[[str, str], object] | None = None
) -> tuple[str, int, str] | None:
    """(key, line, message) of the compiler's first error in the user's code, or None."""
    for m in pattern.finditer(output):
        where, line = m.group(1), int(m.group(2))
        if where.startswith(_AFTER):  # reported at the line after a snippet (a missing `;`, say)
            where, line = where[len(_AFTER) :], 0
        message = re.sub(r"\s*\[-W[^\]]*\]$", "", m.group(3).strip())
        message = re.sub(r' "assocgen_f\d+"', "", message)  # the probe's name for the user's function
        if where.startswith(_DEFINES) and where[len(_DEFINES) :] in keys:  # the type's name is no C type
            return where[len(_DEFINES) :], 1, f"does not typedef the type's name, as the C header needs ({message})"
        if where in keys and (accept is None or accept(where, message)):
            return where, line, message
    return None


def _run(cmd: list[str], source: str, name: str) -> tuple[subprocess.CompletedProcess[str] | None, str]:
    with tempfile.TemporaryDirectory(prefix="assocgen-probe-") as d:
        path = Path(d) / name
        path.write_text(source)
        try:
            r = subprocess.run(
                [*cmd, str(path)], cwd=d, capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"}
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, str(e)
        return r, ""


def check(spec: Spec) -> str:
    """Compile the spec's C; raise SpecError on its first error, return a note on what was
    skipped ('' when everything was checked, or there was no C to check)."""
    if not spec.user_code:
        return ""
    keys = {c.key for c in spec.user_code} | {c.key.replace(": c", ": size") for c in spec.user_code}
    skipped = []

    def fail(found: tuple[str, int, str]) -> NoReturn:
        key, line, message = found
        at = f" (line {line})" if line > 1 else (" (at its end)" if line == 0 else "")
        raise SpecError(spec.source, key, f"{message}{at}")

    cc = shutil.which("cc") or shutil.which("gcc")
    include = _cuda_include()
    if cc:
        r, _ = _run(
            [cc, "-std=c11", "-pedantic-errors", "-Werror=missing-field-initializers", "-fsyntax-only"]
            + (["-isystem", include] if include else []),
            _c_probe(spec, include),
            "probe.c",
        )
        if r is not None and r.returncode != 0:
            # a type must be C; of an identity, only its count of fields is C's to judge here
            # (it may use what only CUDA has: nvcc judges the rest)
            found = _first_error(
                r.stderr,
                _C_ERROR,
                keys,
                lambda key, message: key.endswith(": c") or re.search(r"excess elements|missing initializer", message),
            )
            if found:
                fail(found)
    else:
        skipped.append("no C compiler (cc) on the PATH: the types and identities were not compiled as C")
    nvcc = shutil.which("nvcc")
    if nvcc:
        # every warning an error: nvcc would warn of it (a missing return, a narrowing, a result unused) later
        flags = ["-ptx", "-arch=sm_90", "-std=c++17", "-Werror", "all-warnings", "-o", "probe.ptx"]
        r, problem = _run([nvcc, *flags], _cuda_probe(spec), "probe.cu")
        if r is None:
            skipped.append(f"nvcc could not check the operators' C code ({problem})")
        elif r.returncode != 0:
            found = _first_error(r.stdout + r.stderr, _NVCC_ERROR, keys)
            if found:
                fail(found)
            other = _NVCC_ERROR.search(r.stdout + r.stderr)
            if other:  # in the probe's own lines, around the user's code (a type that cannot be copied)
                raise SpecError(spec.source, "operator", f"the operators' C code does not compile: {other.group(3)}")
            tail = (r.stdout + r.stderr).strip().splitlines()
            skipped.append(
                "nvcc could not check the operators' C code (" + (tail[0] if tail else f"exit {r.returncode}") + ")"
            )
    else:
        skipped.append(
            "nvcc is not on the PATH: the operators' C code was not compiled at generation "
            "(nvcc will report its errors when it builds the sources)"
        )
    return "; ".join(skipped)
