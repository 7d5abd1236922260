"""The printer's simplifications (generator/simplify.py) and the `uses` test that lets a
template declare only what its rendered body names."""

from assocgen import emit, simplify


def test_a_one_trip_loop_becomes_its_body_with_the_arithmetic_folded():
    text = (
        "    x = 1;\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 1; ++j)\n"
        "        raw[j] = src[j * 128 + threadIdx.x];\n"
        "    y = raw[0];\n"
    )
    assert simplify.one_trip_loops(text) == "    x = 1;\n    raw[0] = src[threadIdx.x];\n    y = raw[0];\n"


def test_nested_loops_keep_the_inner_loop_that_runs_more_than_once():
    text = (
        "#pragma unroll\n"
        "    for (int j = 0; j < 1; ++j)\n"
        "#pragma unroll\n"
        "        for (int e = 0; e < 4; ++e)\n"
        "            acc = f(acc, x[j * 4 + e], base + (size_t)(j * 128 + threadIdx.x) * 4 + e);\n"
        "    done();\n"
    )
    assert simplify.one_trip_loops(text) == (
        "#pragma unroll\n"
        "    for (int e = 0; e < 4; ++e)\n"
        "        acc = f(acc, x[e], base + (size_t)threadIdx.x * 4 + e);\n"
        "    done();\n"
    )


def test_a_braced_body_keeps_its_scope_only_when_it_declares_something():
    plain = (
        "#pragma unroll\n    for (int e = 0; e < 1; ++e) {\n"
        "        y[e] = g(b);\n        b = h(b, x[e], base + c + e);\n    }\n"
    )
    assert simplify.one_trip_loops(plain) == "    y[0] = g(b);\n    b = h(b, x[0], base + c);\n"
    declaring = (
        "#pragma unroll\n    for (int j = 0; j < 1; ++j) {\n"
        "        const int k = j * 32 + lane;\n        d[k] = s[k];\n    }\n"
    )
    assert simplify.one_trip_loops(declaring) == "    {\n        const int k = lane;\n        d[k] = s[k];\n    }\n"


def test_loops_of_more_trips_and_other_code_are_left_alone():
    text = "#pragma unroll\n    for (int j = 0; j < 2; ++j)\n        a[j] = b[j] + 0.5f;\n    c = d + 0x10;\n"
    assert simplify.one_trip_loops(text) == text


def test_blank_lines_never_come_two_in_a_row():
    assert simplify.blank_lines("a\n\n\n\nb\n\nc\n") == "a\n\nb\n\nc\n"


def test_uses_ignores_comments_and_strings():
    assert emit._uses("if (aligned16 && full) {", "full")
    assert not emit._uses('/* a full tile */ x = 1; // full\n s = "full";', "full")
    assert not emit._uses("fullness = 1;", "full")
