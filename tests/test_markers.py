"""The notebook marker grammar (``coursekit.markers``): one parser, and every tool reads it.

The oracles are hand-tagged sources. Before the grammar was one module, the leak scan read a
one-line solution marker as given code while the exporter read it as solution code, and the
exporter accepted a stray END as long as a later BEGIN balanced the count.
"""

from __future__ import annotations

import ast
import re

import pytest

from coursebuild.leakscan import solution_fingerprints, solution_lines
from coursekit import paths
from coursekit.export import (
    ExportError,
    export_module,
    solution_line_numbers,
    strip_solution_markers,
)
from coursekit.markers import LEAK, SOLUTION_WORD, STUB_WORD, is_export_source, tag_lines

SOL, STB = SOLUTION_WORD, STUB_WORD
SOURCE = [
    "def scale(x, k):",                                   # 1 given
    f"    # BEGIN {SOL} NO PROMPT",                       # 2 begin (no prompt)
    "    y = x * k",                                      # 3 solution (block)
    f"    # BEGIN {SOL}",                                 # 4 begin (nested, prompt)
    "    y = y + 0",                                      # 5 solution (depth 2)
    f"    # END {SOL}",                                   # 6 end
    f"    # END {SOL}",                                   # 7 end
    f"    raise NotImplementedError('module 01: implement scale')  # {STB}",  # 8 stub
    f"    return y * scale_factor_of_k  # {SOL}",          # 9 solution (one line)
    f"# {SOL}",                                           # 10 given (a marker alone)
]


def test_tag_lines_reads_blocks_nesting_one_line_solutions_and_stubs():
    tags = tag_lines(SOURCE)
    assert [t.kind for t in tags.lines] == ["given", "begin", "solution", "begin", "solution",
                                           "end", "end", "stub", "solution", "given"]
    assert [t.depth for t in tags.lines] == [0, 1, 1, 2, 2, 1, 0, 0, 0, 0]
    assert [t.prompt for t in tags.lines if t.kind == "begin"] == [False, True]
    assert tags.lines[8].text == "    return y * scale_factor_of_k"
    assert tags.balanced


def test_unbalanced_blocks_are_located():
    tags = tag_lines([f"# END {SOL}", f"# BEGIN {SOL}", "x = 1", f"# BEGIN {SOL}"])
    assert tags.stray_ends == [1] and tags.unclosed == [2, 4] and not tags.balanced


def test_commented_markers_are_read_only_when_asked():
    answer = [f"# # BEGIN {SOL}", "# The cache trades memory for time.", f"# # END {SOL}"]
    assert [t.kind for t in tag_lines(answer).lines] == ["given"] * 3
    assert [t.kind for t in tag_lines(answer, commented=True).lines] == \
        ["begin", "solution", "end"]


def test_the_exporter_reads_the_grammar():
    out = strip_solution_markers(SOURCE)
    assert out == ["def scale(x, k):", "    y = x * k", "    y = y + 0",
                   "    return y * scale_factor_of_k", ""]


def test_a_stray_end_is_an_error_even_when_a_later_begin_evens_the_count():
    with pytest.raises(ExportError, match="unbalanced"):
        strip_solution_markers([f"# END {SOL}", "x = 1", f"# BEGIN {SOL}"])


def test_the_leak_scan_treats_a_one_line_solution_as_solution_code(tmp_path):
    """What the exporter treats as solution code is a fingerprint of a leak."""
    src = tmp_path / "01_x.py"
    src.write_text("\n".join(["# %%", "#| export", *SOURCE]) + "\n", encoding="utf-8")
    inside, outside = solution_lines(src)
    assert "return y * scale_factor_of_k" in inside
    assert not any(SOL in line for line in inside | outside), "the marker is not part of it"
    assert "return y * scale_factor_of_k" in solution_fingerprints(src)
    # and the exporter's reference view keeps the same line as code
    assert "    return y * scale_factor_of_k" in strip_solution_markers(SOURCE)


def test_mutation_lines_include_one_line_solutions(tmp_path):
    src = tmp_path / "01_x.py"
    src.write_text("\n".join(["# %%", "#| export", *SOURCE]) + "\n", encoding="utf-8")
    lines = solution_line_numbers(src, slug="x", number=1)
    text = export_module(src, slug="x", number=1, mode="reference").splitlines()
    marked = {text[i - 1].strip() for i in lines}
    assert marked == {"y = x * k", "y = y + 0", "return y * scale_factor_of_k"}, marked


def test_export_cells_are_found_by_their_first_non_blank_line():
    assert is_export_source("\n  #| export\nx = 1")
    assert not is_export_source("x = 1\n#| export")
    assert not is_export_source("")


def test_leak_markers_are_every_marker_and_the_hidden_tests():
    for text in (f"# BEGIN {SOL}", f"# END {SOL}", f"x = 1  # {SOL}", f"raise E  #{STB}",
                 "# BEGIN " + "HID" + "DEN TESTS", "hid" + "den: true"):
        assert LEAK.search(text), text
    assert not LEAK.search("the solution is hidden")


#: production code that reads solution modules or notebooks
READERS = ("coursekit", "coursebuild", "autograder", "staff", "gradebook", "tito", "bench")


def test_no_marker_regex_outside_the_grammar():
    """Every regular expression that spells a marker lives in ``coursekit/markers.py``."""
    grammar = paths.REPO_ROOT / "coursekit" / "markers.py"
    found = []
    for pkg in READERS:
        for path in sorted((paths.REPO_ROOT / pkg).rglob("*.py")):
            if path == grammar or "suites" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "compile" and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == "re" and node.args):
                    pattern = ast.unparse(node.args[0])
                    if re.search(r"BEGIN|SOLUTION|_SOL\b|STUB|_STB\b|HIDDEN|%%|#\| export",
                                 pattern):
                        found.append(f"{path.relative_to(paths.REPO_ROOT)}:{node.lineno}")
    assert found == [], found
