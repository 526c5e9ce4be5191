"""``explain STUDENT``: every number behind one student's grade, in plain text.

For each counted item: the score that counts and where it came from (file, kind, suite
version, who recorded it), then each adjustment in the order the policy applies them:
extension, lateness and late tokens, late deduction, override, regrades, drop. Then the
category totals, the weighted sum and the letter.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from gradebook.frames import Built
from gradebook.policy import details_of
from gradebook.tables import cell


def _local(ts: Any, tz: Any) -> str:
    if ts is None or pd.isna(ts):
        return "-"
    return pd.Timestamp(ts).tz_convert(tz).strftime("%Y-%m-%d %H:%M")


def _duration(minutes: float) -> str:
    h, m = divmod(int(round(minutes)), 60)
    d, h = divmod(h, 24)
    return (f"{d}d " if d else "") + f"{h}h {m:02d}m"


def explain(built: Built, student: str) -> str:
    """Explain one student's grade.

    Args:
        built: the built gradebook.
        student: SIS User ID (already resolved).

    Returns:
        Multi-line text.
    """
    r: Any  # itertuples rows: one attribute per column, typed by the column
    ev: Any
    f = built.frames
    tz = f.course.tz
    pol = f.policy
    who = f.roster.set_index("student").loc[student]
    grade = built.grades.set_index("student").loc[student]
    track = str(who["track"])
    scores = built.result.scores
    mine = scores[scores["student"] == student].sort_values("order")
    events = f.events[f.events["student"] == student]
    cut = "every item" if built.as_of is None else f"items due by {_local(built.as_of, tz)}"
    lines = [
        f"{who['name']}  (SIS User ID {student}, login {who['login']}, {who['section']})",
        f"track: {track} ({pol.credits[track]} credits); counting {cut}",
        "",
    ]
    units = built.result.units
    used = int(units.loc[units["student"] == student, "tokens"].sum())
    lines.append(f"late tokens: {used} of {pol.late.tokens} used "
                 f"({pol.late.token_hours:g} h each; placed where they save the most points)")
    lines.append("")
    cats = built.result.categories
    mycats = cats[cats["student"] == student].set_index("category")
    weights = pol.weights[track]
    for cat in [c for c in pol.weights[track] if weights[c] > 0]:
        title = pol.category_titles.get(cat, cat)
        group = mine[mine["category"] == cat]
        lines.append(f"== {title} [{cat}]  weight {weights[cat]:g}, "
                     f"drop lowest {pol.drop_lowest.get(cat, 0)}")
        if group.empty:
            lines.append("   nothing due yet: this category does not count")
            lines.append("")
            continue
        for r in group.itertuples(index=False):
            mark = "  (dropped)" if r.dropped else ""
            lines.append(f"   {r.title:<44} {r.final:7.2f} / {r.points:g}{mark}")
            if r.missing and pd.isna(r.override):
                lines.append("      no score recorded -> 0")
            elif not r.missing:
                lines.append(
                    f"      score {r.score:g}/{r.max_score:g} -> {r.raw_points:.2f} points, "
                    f"from {r.event_kind} {r.source_path}"
                    + (f" (suite {r.suite_version})" if isinstance(r.suite_version, str) else "")
                )
            item_events = events[events["item"] == r.item]
            for ev in item_events[item_events["kind"] == "regrade"].itertuples(index=False):
                d = details_of(ev.details)
                lines.append(
                    f"      regrade: {d.get('previous_score', float('nan')):g} -> {ev.score:g} "
                    f"(suite {d.get('previous_suite')} -> {ev.suite_version}; {ev.source_path}, "
                    f"recorded {ev.recorded_at} by {ev.recorded_by})"
                )
            for ev in item_events.itertuples(index=False):
                acc = details_of(ev.details).get("accepted")
                if acc:
                    lines.append(f"      accepted although inconsistent: "
                                 f"{'; '.join(acc.get('problems', []))} (reason: "
                                 f"{acc.get('reason')}; by {acc.get('by')}; {ev.source_path})")
            for ev in item_events[item_events["kind"] == "manual"].itertuples(index=False):
                d = details_of(ev.details)
                if "previous_score" in d:
                    lines.append(f"      re-entered: {d['previous_score']:g} -> {ev.score:g} "
                                 f"({ev.source_path}, by {ev.recorded_by})")
            if r.extension:
                lines.append(f"      extension: due {_local(r.due, tz)} -> "
                             f"{_local(r.due_effective, tz)}: {r.extension}")
            if not r.missing and not pd.isna(r.submitted_at):
                status = ("on time" if r.minutes_late <= 0
                          else f"{_duration(r.minutes_late)} late")
                lines.append(f"      submitted {_local(r.submitted_at, tz)}, due "
                             f"{_local(r.due_effective, tz)}: {status}")
            if r.minutes_late > 0:
                tok = f"{int(r.tokens)} token(s) applied, " if r.tokens else "no token, "
                if r.late_fraction > 0:
                    lines.append(f"      {tok}late deduction {100 * r.late_fraction:g}% "
                                 f"= -{r.late_points:.2f}")
                else:
                    why = "within the grace period" if not r.tokens else "forgiven"
                    lines.append(f"      {tok}no deduction ({why})")
            if not pd.isna(r.override):
                lines.append(f"      OVERRIDE: final score set to {r.override:g} "
                             f"(reason: {r.override_reason}; by {r.override_by})")
            elif isinstance(r.override_reason, str):
                lines.append(f"      override cleared (was: {r.override_reason})")
            if r.dropped:
                lines.append("      dropped: among the lowest in this category")
        if cat in mycats.index:
            c = mycats.loc[cat]
            lines.append(f"   category: {c['earned']:.2f} / {c['possible']:g} = "
                         f"{c['percent']:.2f}%")
        lines.append("")
    terms, num, den = [], 0.0, 0.0
    for cat, w in weights.items():
        if w > 0 and cat in mycats.index and cell(mycats, cat, "possible") > 0:
            pct = float(cell(mycats, cat, "percent"))
            terms.append(f"{w:g} x {pct:.2f}")
            num += w * pct
            den += w
    lines.append(f"course: ({' + '.join(terms)}) / {den:g} = {grade['percent']:.2f}% "
                 f"-> {grade['letter']}")
    others = [f"{t}: {grade[f'percent_{t}']:.2f}% {grade[f'letter_{t}']}"
              for t in sorted(pol.weights) if f"percent_{t}" in grade]
    lines.append("in each track: " + "; ".join(others))
    return "\n".join(lines)
