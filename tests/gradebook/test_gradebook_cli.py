"""The click group: thin wrappers, one-line errors, exit codes."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gradebook import api
from gradebook.cli import gradebook

SAMPLE = Path(api.SAMPLE_TERM)


def run(*args: str):
    return CliRunner().invoke(gradebook, [str(a) for a in args], catch_exceptions=False)


def test_full_cycle_through_the_cli(tmp_path):
    store = tmp_path / "gb.sqlite"
    url = f"sqlite:///{store}"  # absolute: sqlite:////tmp/...
    r = run("roster", SAMPLE / "roster.csv", "--store", url)
    assert r.exit_code == 0 and "42 students (foundation: 12, full: 30)" in r.output
    assert "Points Possible" in r.output and "test student" in r.output
    r = run("ingest", SAMPLE / "results", SAMPLE / "gradescope", "--store", url)
    assert r.exit_code == 0, r.output
    assert "total: 450 event(s) added" in r.output
    r = run("ingest", SAMPLE / "regrade", "--dry-run", "--store", url)
    assert r.output.count("(submission 3000") == 3 and "nothing written" in r.output
    assert run("ingest", SAMPLE / "regrade", "--store", url).exit_code == 0
    assert run("extensions", SAMPLE / "extensions.csv", "--store", url).exit_code == 0
    assert run("manual", SAMPLE / "written.csv", "--store", url).exit_code == 0
    assert run("override", "--file", SAMPLE / "overrides.csv", "--store", url).exit_code == 0
    r = run("override", "S1004", "02", "50", "--reason", "same again", "--store", url)
    assert r.exit_code == 0 and "1 event(s) added" in r.output
    r = run("build", "-o", tmp_path / "out", "--store", url)
    assert r.exit_code == 0 and "42 students, items due by 2027-02-25 23:59" in r.output
    assert (tmp_path / "out" / "grades.csv").is_file()
    assert run("export", "--canvas", "-o", tmp_path / "c.csv", "--store", url).exit_code == 0
    assert run("export", "--gradescope", "-o", tmp_path / "g.csv", "--store", url).exit_code == 0
    r = run("explain", "aturing@example.edu", "--store", url)
    assert r.exit_code == 0 and "-> B" in r.output
    assert run("report", "-o", tmp_path / "r.html", "--store", url).exit_code == 0
    r = run("check", "--store", url)
    assert r.exit_code == 0 and "0 error(s)" in r.output


def test_errors_are_one_line_with_exit_2(tmp_path):
    store = tmp_path / "gb.sqlite"
    r = run("build", "--store", store)
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"tito: {store}: no roster yet; import one with 'tito gradebook roster ROSTER.csv'"]
    run("roster", SAMPLE / "roster.csv", "--store", store)
    r = run("explain", "nobody", "--store", store)
    assert r.exit_code == 2 and "no student 'nobody' on the roster" in r.output
    r = run("override", "S1001", "01", "10", "--store", store)
    assert r.exit_code == 2 and "--reason is required" in r.output
    r = run("export", "-o", tmp_path / "x.csv", "--store", store)
    assert r.exit_code == 2 and "choose --canvas or --gradescope" in r.output
    r = run("build", "--store", "postgresql://db/grades")
    assert r.exit_code == 2 and "psycopg" in r.output


def test_check_exits_1_on_errors(tmp_path):
    store = tmp_path / "gb.sqlite"
    run("roster", SAMPLE / "roster.csv", "--store", store)
    meta = tmp_path / "s" / "submission_metadata.json"
    meta.parent.mkdir()
    (tmp_path / "s" / "results.json").write_bytes(
        (SAMPLE / "results" / "01_tensor" / "alovelace" / "results.json").read_bytes())
    meta.write_text('{"id": 5, "created_at": "2027-01-25T10:00:00-05:00", '
                    '"users": [{"email": "mallory@example.org"}]}')
    assert run("ingest", tmp_path / "s", "--store", store).exit_code == 0
    r = run("check", "--store", store)
    assert r.exit_code == 1
    assert "error: " in r.output and "not on the roster (email mallory@example.org)" in r.output


def test_course_option_reads_another_course(tmp_path):
    bad = tmp_path / "course.yml"
    bad.write_text("course: {}\n")
    r = run("build", "--course", bad, "--store", tmp_path / "s.sqlite")
    assert r.exit_code == 2 and r.output.startswith("tito: course.yml: course.name")


def test_tito_course_file_reaches_every_gradebook_subcommand(tmp_path):
    """``tito --course FILE gradebook ...`` uses FILE (issue 34): its store, its policy; an
    invalid FILE is reported by each subcommand instead of the repository's course.yml
    being used silently."""
    import yaml

    from coursekit.paths import REPO_ROOT
    from tito.cli import cli

    data = yaml.safe_load((REPO_ROOT / "course.yml").read_text(encoding="utf-8"))
    store = tmp_path / "other.sqlite"
    data["course"]["gradebook_store"] = str(store)
    other = tmp_path / "other.yml"
    other.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    r = CliRunner().invoke(cli, ["--course", str(other), "gradebook", "load-sample"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert store.is_file(), "the other course's store was not used"
    bad = tmp_path / "bad.yml"
    bad.write_text("course: {}\n")
    for args in (["build"], ["check"], ["report", "-o", str(tmp_path / "r.html")],
                 ["explain", "S1001"], ["roster", str(SAMPLE / "roster.csv")],
                 ["canvas-ids", str(SAMPLE / "roster.csv"), "-o", str(tmp_path / "i.csv")]):
        r = CliRunner().invoke(cli, ["--course", str(bad), "gradebook", *args,
                                     *(["--store", str(store)] if args[0] != "canvas-ids"
                                       else [])])
        assert r.exit_code == 2 and "bad.yml: course.name" in r.output, (args, r.output)
