"""'Where, in your code': the graded module's own line comes first (issue 28, item 6).

A conv padding bug in ``spatial.py`` makes NumPy raise inside the student's own ``tensor.py``
(an earlier module uploaded while it is open): the traceback starts at the deepest
``spatial.py`` line, not at five lines of ``tensor.py``.
"""

from __future__ import annotations

import sys

from autograder.harness.child import _student_frames


def _raise_through(tmp_path, files: list[tuple[str, str]]):
    """Call chain f0 -> f1 -> ... defined in the given (file name, body) files; the last one
    raises. Returns the traceback and the files' paths."""
    paths, env = [], {}
    for i, (name, _) in enumerate(files):
        path = tmp_path / name
        body = (f"def f{i}():\n    return f{i + 1}()\n" if i < len(files) - 1
                else f"def f{i}():\n    raise ValueError('shapes (2, 3) and (4,) do not align')\n")
        path.write_text(body)
        exec(compile(body, str(path), "exec"), env)  # noqa: S102 - our own test code
        paths.append(str(path))
    try:
        env["f0"]()
    except ValueError:
        return sys.exc_info()[2], paths
    raise AssertionError("did not raise")


def test_the_graded_file_leads_the_traceback(tmp_path):
    chain = [("spatial.py", ""), ("tensor.py", "")] + [(f"t{i}.py", "") for i in range(6)]
    tb, paths = _raise_through(tmp_path, chain)
    students = set(paths)
    where = _student_frames(tb, students, paths[0])
    lines = where.splitlines()
    assert lines[0].startswith("  spatial.py, line 2, in f0")
    assert len(lines) == 5 and lines[-1].startswith("  t5.py")


def test_without_a_graded_line_the_traceback_says_so(tmp_path):
    tb, paths = _raise_through(tmp_path, [("layers.py", ""), ("tensor.py", "")])
    where = _student_frames(tb, {paths[1]}, str(tmp_path / "spatial.py"))
    assert where.splitlines()[0].startswith("  tensor.py, line 2, in f1")
    assert "no line of spatial.py is running here" in where
    assert _student_frames(tb, {paths[1]}) == where.splitlines()[0]
