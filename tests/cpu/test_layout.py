"""The printer's line fitting (generator/layout.py): where it breaks a long line, and that it
changes no C token.  The whole rendered matrix is held to 120 columns by test_noise.py."""

import re

from assocgen import layout

W = 40  # a narrow width, so that short samples need breaking

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|/\*.*?\*/|//[^\n]*|\w+|\S', re.S)


def code_tokens(text: str) -> list[str]:
    """The C tokens, comments left out, lines spliced by a backslash joined."""
    return [t for t in TOKEN.findall(text.replace("\\\n", " ")) if not t.startswith(("/*", "//"))]


def test_calls_break_after_a_comma_and_continue_four_columns_in():
    line = "    err = launch(kernel, grid, block, stream, args);"
    assert layout.fit(line, W) == "    err = launch(kernel, grid, block,\n        stream, args);"


def test_the_outermost_place_is_taken_first():
    line = "x = f(a, b) && g(c, d) && h(e, f, g, h, i);"
    assert layout.fit(line, W).split("\n") == ["x = f(a, b) && g(c, d)", "    && h(e, f, g, h, i);"]


def test_a_plus_only_where_nothing_else_fits():
    line = "return aaaaaaaaaaaa + bbbbbbbbbbbbbbbbbb + cccccccccccc;"
    assert layout.fit(line, W).split("\n") == ["return aaaaaaaaaaaa + bbbbbbbbbbbbbbbbbb", "    + cccccccccccc;"]


def test_strings_are_never_broken():
    line = 'printf("a, b, c && d, e, f, g, h: %d", value);'
    assert layout.fit(line, W).split("\n") == ['printf("a, b, c && d, e, f, g, h: %d",', "    value);"]


def test_a_macro_keeps_its_backslashes():
    text = "#define AG_X(a, b) \\\n    do_something(aaaaaa, bbbbbb, cccccc, dddddd); \\\n    more()"
    out = layout.fit(text, W).split("\n")
    assert all(line.endswith("\\") for line in out[:-1]) and len(out) == 4
    assert code_tokens("\n".join(out)) == code_tokens(text)


def test_a_trailing_comment_goes_above_its_line():
    line = "    int tiles = n / 256; /* one a block, rounded down */"
    assert layout.fit(line, W).split("\n") == [
        "    /* one a block, rounded down */",
        "    int tiles = n / 256;",
    ]


def test_comments_are_refilled_word_by_word():
    assert layout.fit("// one two three four five six seven eight nine", 24).split("\n") == [
        "// one two three four",
        "// five six seven eight",
        "// nine",
    ]
    assert layout.fit("/* one two three four five six seven */", 24).split("\n") == [
        "/* one two three four",
        "   five six seven */",
    ]
    star = "/* A list:\n * - one two three four five six seven\n */"
    assert layout.fit(star, 24).split("\n")[1:3] == [" * - one two three four", " *   five six seven"]


def test_lines_within_the_width_are_left_as_they_are():
    text = "int f(int a,   int b)\n{\n    return a;   // as written\n}\n"
    assert layout.fit(text, W) == text


def test_no_token_changes_on_a_sample():
    text = (
        "static __device__ __forceinline__ float ag_look_back(float total, unsigned long long *slots, size_t n,\n"
        "    size_t tile, unsigned int lane)  /* the tile's prefix */\n"
        "{\n"
        "    const float x = lane < 4 ? ag_op_combine(total, ag_load(slots + tile * 2 + lane)) : total;\n"
        "}\n"
    )
    assert code_tokens(layout.fit(text, 80)) == code_tokens(text)
    assert max(len(line) for line in layout.fit(text, 80).split("\n")) <= 80


def test_a_directive_continues_with_a_backslash():
    line = "#if defined(AG_AAAAAAA) && defined(AG_BBBBBBBBB) && AG_C"
    assert layout.fit(line, W).split("\n") == ["#if defined(AG_AAAAAAA) \\", "    && defined(AG_BBBBBBBBB) && AG_C"]


def test_comment_text_never_becomes_code():
    assert layout.fit("a = b /* x */ + c; // y, then more words here", 24).split("\n") == [
        "// y, then more words",
        "// here",
        "a = b /* x */ + c;",
    ]
    kept = ["#define AG_N 4 // tiles, one a warp, four a block", "/* the block's */ c = 'x';"]
    for line in kept:
        assert layout.fit(line, 30) == line


def test_what_a_backslash_splices_is_left_alone():
    text = "// a comment that runs on, \\\nint x = f(aaaaaaaaa, bbbbbbbbb, ccccccccc, ddddddddd);"
    assert layout.fit(text, 30) == text
    raw = 'auto s = R"(a "b, c, d, e, f, g, h, i, j, k")";'
    assert layout.fit(raw, 20) == raw


def test_a_continuation_is_never_empty_and_fitting_twice_changes_nothing():
    text = "    if (ok\n        && ag_check(aaaaaaaaaa, bbbbbbbbbb, cccccccccc, dddddddddd))"
    once = layout.fit(text, 50)
    assert "\n\n" not in once and layout.fit(once, 50) == once


def test_the_matrix_keeps_its_tokens(monkeypatch):
    """Over the instance matrix's sources, the printed files hold the C tokens of the unfitted
    ones, and their comments the same words."""
    fitted = {**_render_matrix(), **_render_matrix(single_header=True)}
    monkeypatch.setattr(layout, "fit", lambda text, width=layout.WIDTH: text)
    plain = {**_render_matrix(), **_render_matrix(single_header=True)}
    assert sorted(fitted) == sorted(plain)
    for name, text in plain.items():
        assert code_tokens(fitted[name]) == code_tokens(text), name
        assert sorted(_words(fitted[name])) == sorted(_words(text)), name
        assert _directives(fitted[name]) == _directives(text), name
        assert layout.fit(fitted[name]) == fitted[name], name


def _render_matrix(single_header: bool = False) -> dict[str, str]:
    from assocgen import emit
    from assocgen.spec import parse

    from .util import gpu_runner

    run = gpu_runner()
    name = "single.h" if single_header else f"{run.PREFIX}.h"
    files = emit.render(parse(run.spec_dict(), "tests/matrix.toml"), name, single_header=single_header)
    return {("single: " if single_header else "") + k: v for k, v in files.items()}


def _words(text: str) -> list[str]:
    return [
        w.strip("/*") for t in TOKEN.findall(text) if t.startswith(("/*", "//")) for w in t.split() if w.strip("/*")
    ]


def _directives(text: str) -> list[list[str]]:
    """Each preprocessor directive's tokens, its lines joined where a backslash ends one."""
    lines = text.replace("\\\n", " ").split("\n")
    return [code_tokens(line) for line in lines if line.lstrip().startswith("#")]


def test_a_long_prefix_keeps_the_header_directives(monkeypatch):
    """A prefix of the longest length makes the single header's `#if` lines run past 120."""
    from assocgen import emit
    from assocgen.spec import parse

    spec = parse({"prefix": "abcdefghijklmnopqrstuvwxyz012345", "reduce": [{"op": "sum", "type": "f32"}]}, "t")
    fitted = emit.render(spec, single_header=True)
    monkeypatch.setattr(layout, "fit", lambda text, width=layout.WIDTH: text)
    plain = emit.render(spec, single_header=True)
    for name, text in plain.items():
        assert _directives(fitted[name]) == _directives(text)
        assert code_tokens(fitted[name]) == code_tokens(text)
