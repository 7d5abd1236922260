"""The printer's line fitting (generator/layout.py): where it breaks a long line, and that it
changes no C token.  The whole rendered matrix is held to 120 columns by test_noise.py."""

import re

from assocgen import layout

W = 40  # a narrow width, so that short samples need breaking

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|/\*.*?\*/|//[^\n]*|\w+|\S', re.S)


def code_tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text) if not t.startswith(("/*", "//"))]


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
    assert [t for t in code_tokens("\n".join(out)) if t != "\\"] == [t for t in code_tokens(text) if t != "\\"]


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


def test_the_matrix_keeps_its_tokens(monkeypatch):
    """Over the instance matrix's sources, the printed files hold the C tokens of the unfitted
    ones, and their comments the same words."""
    fitted = _render_matrix()
    monkeypatch.setattr(layout, "fit", lambda text, width=layout.WIDTH: text)
    plain = _render_matrix()
    assert sorted(fitted) == sorted(plain)
    for name, text in plain.items():
        assert code_tokens(fitted[name]) == code_tokens(text), name
        assert sorted(_words(fitted[name])) == sorted(_words(text)), name


def _render_matrix() -> dict[str, str]:
    from assocgen import emit
    from assocgen.spec import parse

    from .util import gpu_runner

    run = gpu_runner()
    return emit.render(parse(run.spec_dict(), "tests/matrix.toml"), f"{run.PREFIX}.h")


def _words(text: str) -> list[str]:
    return [
        w.strip("/*") for t in TOKEN.findall(text) if t.startswith(("/*", "//")) for w in t.split() if w.strip("/*")
    ]
