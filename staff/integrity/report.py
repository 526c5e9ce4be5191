"""The staff-only similarity report: ranked pairs, clusters and matched code side by side.

Two files in a folder only its owner can open (0700; files 0600, written atomically):
``similarity.html`` (self-contained: no scripts, no network) and ``similarity.csv``. The report
names its inputs (paths and SHA-256 of files) and its settings, and says on top that it flags
code for a person to read and changes no grade.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass
from pathlib import Path

from staff.integrity.corpus import Document
from staff.integrity.match import Pair, Settings

CONTEXT_LINES = 2


@dataclass
class Inputs:
    """What the run read, for the report's provenance table."""

    sources: list[tuple[str, str]]   # (path, sha256 of a file or "folder")
    provided: str                    # the released notebook whose code is not evidence
    past_terms: list[str]


def csv_cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text (no formula from ``=``, ``+``, ``-``, ``@``)."""
    from gradebook.csvsafe import neutralise

    return str(neutralise(str(value)))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only, atomically (no partial file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def private_folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def render_csv(pairs: list[Pair], docs: list[Document], settings: Settings,
               cluster_of: dict[int, int]) -> str:
    from gradebook import csvsafe

    header = ["rank", "student_a", "student_b", "b_is", "similarity", "coverage_a",
              "coverage_b", "shared_fingerprints", "flagged", "cluster", "functions",
              "origin_a", "origin_b"]
    rows = []
    for rank, p in enumerate(pairs, 1):
        a, b = docs[p.a], docs[p.b]
        functions = "; ".join(f"{ua} ~ {ub} ({n})" for ua, ub, n in p.units[:3])
        cluster = cluster_of.get(p.a, cluster_of.get(p.b, 0)) if p.score >= settings.flag_score \
            else 0
        rows.append([csv_cell(v) for v in (
            rank, a.label, b.label, b.kind, f"{p.score:.3f}", f"{p.cover_a:.3f}",
            f"{p.cover_b:.3f}", p.shared, "yes" if p.score >= settings.flag_score else "no",
            cluster or "", functions, a.origin, b.origin)])
    return csvsafe.rows_text(header, rows, lineterminator="\r\n")


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d1d1f;max-width:1500px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.warn{background:#fff4e5;border:1px solid #f0b35a;padding:8px 12px;border-radius:6px}
table{border-collapse:collapse;margin:6px 0} th,td{border:1px solid #d0d0d5;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f2f2f5} td.num{text-align:right}
tr.flag td{background:#fdecec} .side{display:grid;grid-template-columns:1fr 1fr;gap:12px}
pre{font:12px/1.35 ui-monospace,monospace;background:#fafafa;border:1px solid #ddd;padding:6px;
overflow-x:auto;margin:0} mark{background:#ffd54f} .ln{color:#999;user-select:none}
.gap{color:#999} .muted{color:#666}
"""


def _excerpt(doc: Document, lines: set[int]) -> str:
    """The document's code around its matched lines, matched lines highlighted."""
    text = doc.code.splitlines()
    keep = {n for line in lines for n in range(line - CONTEXT_LINES, line + CONTEXT_LINES + 1)
            if 1 <= n <= len(text)}
    out: list[str] = []
    previous = 0
    for n in sorted(keep):
        if previous and n != previous + 1:
            out.append('<span class="gap">   …</span>')
        code = html.escape(text[n - 1])
        row = f'<span class="ln">{n:5d} </span>{code}'
        out.append(f"<mark>{row}</mark>" if n in lines else row)
        previous = n
    return "\n".join(out) or '<span class="muted">(no lines)</span>'


def render_html(*, title: str, pairs: list[Pair], docs: list[Document], settings: Settings,
                groups: list[list[int]], inputs: Inputs, detail: int) -> str:
    e = html.escape
    flagged = [p for p in pairs if p.score >= settings.flag_score]
    own = sum(1 for d in docs if d.kind == "current" and d.prints)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(title)}</h1>",
        '<p class="warn"><b>For course staff only.</b> This report holds student code. A high '
        "similarity is a lead for a person to read, never a finding: this report changes no "
        "grade. Code the course provided (the released notebook) never counts as a match.</p>",
        "<h2>Summary</h2><table>",
        f"<tr><th>submissions this term</th><td class=num>"
        f"{sum(d.kind == 'current' for d in docs)}</td></tr>",
        f"<tr><th>with code of their own</th><td class=num>{own}</td></tr>",
        f"<tr><th>earlier terms' submissions</th><td class=num>"
        f"{sum(d.kind == 'past' for d in docs)}</td></tr>",
        f"<tr><th>known public solutions</th><td class=num>"
        f"{sum(d.kind == 'public' for d in docs)}</td></tr>",
        f"<tr><th>pairs listed</th><td class=num>{len(pairs)}</td></tr>",
        f"<tr><th>flagged (similarity ≥ {settings.flag_score:.0%})</th><td class=num>"
        f"{len(flagged)}</td></tr>",
        f"<tr><th>groups of three or more</th><td class=num>{len(groups)}</td></tr>",
        f"<tr><th>could not be read (compared with nothing)</th><td class=num>"
        f"{sum(bool(d.problem) for d in docs)}</td></tr></table>",
    ]
    noted = sorted((d for d in docs if d.notes), key=lambda d: (not d.problem, d.label))
    if noted:
        parts.append("<h2>Inputs with notes</h2><p class=muted>Submissions that could not be "
                     "read are compared with nothing: read them yourself. Every other pair was "
                     "compared.</p><table><tr><th>submission</th><th>read from</th><th>notes"
                     "</th></tr>")
        for d in noted:
            cls = ' class="flag"' if d.problem else ""
            notes = "<br>".join(e(n) for n in d.notes)
            parts.append(f"<tr{cls}><td>{e(d.label)}</td><td>{e(d.origin)}</td>"
                         f"<td>{notes}</td></tr>")
        parts.append("</table>")
    if groups:
        parts.append("<h2>Groups</h2><table><tr><th>group</th><th>members</th></tr>")
        for gi, g in enumerate(groups, 1):
            members = ", ".join(e(docs[i].label) for i in g)
            parts.append(f"<tr class=flag><td class=num>{gi}</td><td>{members}</td></tr>")
        parts.append("</table>")
    parts.append("<h2>Ranked pairs</h2><table><tr><th>#</th><th>student A</th><th>student B"
                 "</th><th>similarity</th><th>A covered</th><th>B covered</th><th>shared "
                 "fingerprints</th><th>matching functions</th></tr>")
    for rank, p in enumerate(pairs, 1):
        a, b = docs[p.a], docs[p.b]
        link = f'<a href="#pair-{rank}">{rank}</a>' if rank <= detail else str(rank)
        funcs = "<br>".join(e(f"{ua} ~ {ub} ({n})") for ua, ub, n in p.units[:3])
        cls = ' class="flag"' if p.score >= settings.flag_score else ""
        parts.append(f"<tr{cls}><td class=num>{link}</td><td>{e(a.label)}</td><td>{e(b.label)}"
                     f"</td><td class=num>{p.score:.0%}</td><td class=num>{p.cover_a:.0%}</td>"
                     f"<td class=num>{p.cover_b:.0%}</td><td class=num>{p.shared}</td>"
                     f"<td>{funcs}</td></tr>")
    parts.append("</table>")
    for rank, p in enumerate(pairs[:detail], 1):
        a, b = docs[p.a], docs[p.b]
        parts += [f'<h2 id="pair-{rank}">#{rank}: {e(a.label)} ~ {e(b.label)} — '
                  f"{p.score:.0%}</h2>",
                  f'<p class="muted">{e(a.origin)} ↔ {e(b.origin)}</p><div class="side">',
                  f"<div><b>{e(a.label)}</b><pre>{_excerpt(a, p.lines_a)}</pre></div>",
                  f"<div><b>{e(b.label)}</b><pre>{_excerpt(b, p.lines_b)}</pre></div></div>"]
    parts.append("<h2>Inputs and settings</h2><table><tr><th>input</th><th>SHA-256</th></tr>")
    for path, digest in inputs.sources:
        parts.append(f"<tr><td>{e(path)}</td><td><code>{e(digest)}</code></td></tr>")
    parts.append(f"<tr><td>course-provided code (never evidence)</td><td>{e(inputs.provided)}"
                 "</td></tr>")
    if inputs.past_terms:
        parts.append(f"<tr><td>earlier terms (gradebook store)</td><td>"
                     f"{e(', '.join(inputs.past_terms))}</td></tr>")
    parts.append(f"</table><p class=muted>k = {settings.k} tokens, window = {settings.window}, "
                 f"fingerprints shared by more than max({settings.max_df}, "
                 f"{settings.max_df_fraction:.0%} of the submissions) ignored, pairs listed from "
                 f"{settings.min_shared} shared fingerprints.</p></body></html>")
    return "\n".join(parts) + "\n"
