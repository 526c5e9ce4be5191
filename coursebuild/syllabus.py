"""`tito course syllabus`: the syllabus of a track, written from course.yml and the lessons.

Everything a department reviews comes from one source: the weekly schedule and the grading
policy from course.yml, the course learning outcomes and what assesses each (course.yml
``outcomes``), each module's learning outcomes from its lesson's "Learning objectives", its
prerequisites from the module docstring's ``depends on:``, the workload from each module's
estimated hours (course.yml ``hours``: the same module costs the same in every track) against
the track's credit hours (the US federal definition: one credit is 45 hours of work in a term,
in and out of class), and the compute students need from what the grader enforces. Policies a
department must write itself (academic integrity, the use of AI assistants, accommodations)
are placeholders, marked as such. Markdown and HTML carry the same text.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coursebuild.release import built_modules
from coursekit.course import Course, Module, Track
from coursekit.export import read_cells
from coursekit.paths import solution_path

HOURS_PER_CREDIT = 45  # hours of student work per credit hour in a term (34 CFR 600.2)
_OBJECTIVE = re.compile(r"^\d+\.\s+")
_DEPENDS = re.compile(r"depends on:\s*([^;]+);")


@dataclass(frozen=True)
class ModuleInfo:
    module: Module
    built: bool
    outcomes: list[str]
    depends_on: str


def _plain(text: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"\1", " ".join(text.split()))


def module_info(module: Module, built: bool) -> ModuleInfo:
    """Outcomes and prerequisites read from the module's lesson (when it is built)."""
    if not built:
        return ModuleInfo(module, False, [], "")
    outcomes: list[str] = []
    depends = ""
    for cell in read_cells(solution_path(module)):
        text = cell.source
        if cell.kind == "markdown" and "Learning objectives" in text:
            current: list[str] = []
            for raw in text.splitlines():
                line = raw[2:] if raw.startswith("# ") else raw.lstrip("#").strip()
                if _OBJECTIVE.match(line.strip()):
                    if current:
                        outcomes.append(_plain(" ".join(current)))
                    current = [_OBJECTIVE.sub("", line.strip())]
                elif current and line.strip() and not line.startswith("#"):
                    current.append(line.strip())
                elif current and not line.strip():
                    outcomes.append(_plain(" ".join(current)))
                    current = []
            if current:
                outcomes.append(_plain(" ".join(current)))
        m = _DEPENDS.search(text) if cell.kind == "code" and not depends else None
        if m:
            depends = m.group(1).strip()
    return ModuleInfo(module, True, outcomes, depends)


def _week(course: Course, start: dt.datetime, when: str) -> int:
    return (course.local_time(when) - start).days // 7 + 1


def syllabus_markdown(course: Course, track: Track) -> str:
    """The syllabus of ``track`` as Markdown."""
    built = {m.number for m in built_modules(course)}
    mods = [m for m in course.modules if m.number in track.modules]
    infos = [module_info(m, m.number in built) for m in mods]
    start = min(course.local_time(m.release) for m in mods).replace(hour=0, minute=0)
    end = max(course.local_time(m.due) for m in mods)
    weeks = (end - start).days // 7 + 1
    milestones = [ms for ms in course.milestones if set(ms.requires) <= set(track.modules)]
    c, g = course.course, course.grading
    out = [f"# {c.code} · {c.name}", "", f"**{track.title}** — {c.term}, {track.credits} "
           f"credit hours, {weeks} weeks ({start:%Y-%m-%d} to {end:%Y-%m-%d}, "
           f"{c.timezone}).", ""]
    out += ["Students build a PyTorch-like deep-learning framework from scratch in Python and "
            "NumPy, one module at a time, and prove it works by recreating historical "
            "milestones. Every module is a notebook with a lesson, code to write, public "
            "checks and written questions; a hidden suite grades the code on Gradescope.", ""]
    missing = [i.module.name for i in infos if not i.built]
    if missing:
        out += [f"> Not built yet in this repository: {', '.join(missing)}. Their dates and "
                "points are set in course.yml; outcomes appear here once the lessons exist.",
                ""]

    out += ["## Weekly schedule", "",
            "| week | module | released | due | hours | prerequisites |",
            "|---|---|---|---|---|---|"]
    for i in infos:
        m = i.module
        out.append(f"| {_week(course, start, m.release)} | {m.name} · {m.title} | {m.release} | "
                   f"{m.due} | {m.hours:g} | "
                   f"{i.depends_on or ('—' if i.built else 'not built yet')} |")
    out.append("")
    if milestones:
        out += ["### Milestones", "", "| milestone | unlocked by | passes at | due with |",
                "|---|---|---|---|"]
        for ms in milestones:
            due = next(m.due for m in course.modules if m.number == ms.graded_with)
            out.append(f"| {ms.title} ({ms.year}) | modules {', '.join(f'{n:02d}' for n in ms.requires)} "
                       f"| {ms.metric} ≥ {ms.threshold:g} on {ms.min_passing_seeds} of "
                       f"{len(ms.seeds)} seeds | module {ms.graded_with:02d}, {due} |")
        out.append("")

    out += course_outcomes(course, track, milestones)
    out += ["## Learning outcomes by module", ""]
    for i in infos:
        out.append(f"### {i.module.name} · {i.module.title}")
        out.append("")
        if i.outcomes:
            out += [f"{n}. {text}" for n, text in enumerate(i.outcomes, 1)]
        else:
            out.append("(the lesson is not built yet)")
        out.append("")

    out += ["## Grading", "", "| category | weight | lowest dropped |", "|---|---|---|"]
    for cat_id, weight in track.weights.items():
        cat = course.category(cat_id)
        out.append(f"| {cat.title} | {weight:.0%} | {cat.drop_lowest} |")
    late = g.late
    out += ["", f"Every module: {sum(m.points for m in mods):g} autograded points in all "
            f"(hidden suite), {sum(m.written_points for m in mods):g} points of written "
            "questions graded by hand.", "",
            f"**Late work.** {late.grace_minutes:g} minutes of grace; then "
            f"{late.deduction_per_day:.0%} of the item's points per started day late, at most "
            f"{late.max_deduction:.0%}. Each student has {late.tokens} late tokens for the term; "
            f"one token forgives {late.token_hours:g} hours and is applied automatically where "
            "it helps most.", "", "**Letters.** " + ", ".join(
                f"{letter} ≥ {cut:g} %" for letter, cut in g.letters.items()), ""]

    out += workload(track, mods, weeks)

    lim = c.grading
    out += ["## What students need", "",
            "* A laptop with Python 3.11 or newer, 4 GB of memory and about 1 GB of disk; no GPU "
            "and no cloud account (Linux, macOS, Windows or Google Colab).",
            f"* Grading runs on Gradescope within {lim.memory_limit_mb} MB of memory and "
            f"{lim.run_timeout_s / 60:.0f} minutes per submission; every milestone trains "
            "within those limits on half a CPU.",
            "* Prerequisites: programming in Python, linear algebra (matrix products) and "
            "calculus (derivatives, the chain rule). No prior machine learning.", ""]
    out += ["## Staffing", "",
            "One instructor; one teaching assistant per 40–60 students for office hours, the "
            "written questions (15 points a module, about 3 minutes per submission with the "
            "model answers) and regrade requests. Autograding, regrades and the gradebook are "
            "automated (tito).", ""]
    out += ["## Policies", "",
            "* **Academic integrity.** _Placeholder: insert your institution's policy._ Code "
            "similarity is reviewed by staff with `tito integrity`; a flag is a lead for a "
            "conversation, never a grade.",
            "* **AI assistants.** _Placeholder: state what is allowed (e.g. explanations yes, "
            "generated solutions no) and how it must be acknowledged._",
            "* **Accommodations.** _Placeholder: your institution's statement._", ""]
    return "\n".join(out)


def workload(track: Track, mods: list[Module], weeks: int) -> list[str]:
    """The workload section: each module's estimated hours (the same in every track) added up
    against the track's credit hours; what is left is lectures, sections and reading."""
    budget = track.credits * HOURS_PER_CREDIT
    work = sum(m.hours for m in mods)
    rest = budget - work
    lines = ["## Workload", "",
             f"{track.credits} credit hours are about {budget} hours of work over the term "
             f"({HOURS_PER_CREDIT} hours per credit), about {budget / weeks:.1f} hours a week "
             f"over {weeks} weeks. The {len(mods)} modules take an estimated {work:g} hours "
             "(each module's hours are in the schedule, and are the same in every track: "
             "lesson, code, written questions and its milestones)"]
    if rest >= 0:
        lines[-1] += (f"; the other {rest:g} hours are lectures or sections, reading and "
                      "review.")
    else:
        lines[-1] += (f", {-rest:g} more than the credit hours allow: drop modules from the "
                      "track or add credits.")
    return [*lines, ""]


def course_outcomes(course: Course, track: Track, milestones: list[Any]) -> list[str]:
    """The course learning outcomes this track assesses, each with the graded work that
    assesses it (course.yml ``outcomes``)."""
    if not course.outcomes:
        return []
    in_track = set(track.modules)
    ms_ids = {ms.id: ms for ms in milestones}
    out = ["## Course learning outcomes", "",
           "| outcome | a student who passes can | assessed by (graded work) |", "|---|---|---|"]
    left = []
    for o in course.outcomes:
        kind = "written questions" if o.written else "autograded code"
        mods = [course.module(n) for n in o.modules if n in in_track]
        parts = []
        if mods:
            parts.append(f"{kind} of module{'s' if len(mods) > 1 else ''} "
                         f"{', '.join(f'{m.number:02d}' for m in mods)}")
        parts += [f"milestone {ms_ids[mid].title} ({ms_ids[mid].year})" for mid in o.milestones
                  if mid in ms_ids]
        if not parts:
            left.append(o.id)
            continue
        out.append(f"| {o.id} | {o.text} | {'; '.join(parts)} |")
    out.append("")
    if left:
        out += [f"Assessed only in modules outside this track: {', '.join(left)}.", ""]
    return out


def markdown_to_html(markdown: str, title: str) -> str:
    """A self-contained HTML page of the Markdown (tables included, no scripts)."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(markdown)
    style = ("body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:24px auto;"
             "padding:0 16px;color:#1d1d1f}table{border-collapse:collapse}th,td{border:1px "
             "solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}th{background:"
             "#f2f2f5}blockquote{background:#fff4e5;margin:0;padding:6px 12px}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}'
            f"</title><style>{style}</style></head><body>\n{body}</body></html>\n")


def write_syllabus(course: Course, track_id: str, out_dir: Path) -> tuple[Path, Path]:
    """Write ``syllabus-<track>.md`` and ``.html`` into ``out_dir``."""
    import html

    track = course.track(track_id)
    text = syllabus_markdown(course, track)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"syllabus-{track.id}.md"
    page = out_dir / f"syllabus-{track.id}.html"
    md.write_text(text + "\n", encoding="utf-8")
    page.write_text(markdown_to_html(text, html.escape(f"{course.course.code} · {track.title}")),
                    encoding="utf-8")
    return md, page
