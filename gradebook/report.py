"""``report``: one self-contained HTML file (plots as inline base64 PNG, matplotlib Agg).

Sections: summary and letter counts per track, grade distribution, per-module results and
pass rates, per-test pass rates, milestone results, lateness (and tokens). No JavaScript, no
external files: the report can be mailed or archived as is.
"""

from __future__ import annotations

import base64
import html
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gradebook.frames import Built  # noqa: E402

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:0}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ddd;
padding:.25em .6em;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{
text-align:left}figure{margin:1em 0}figcaption{color:#555;font-size:.9em}.muted{color:#666}
"""


def _png(fig: Figure, alt: str, plot_id: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f'<figure><img class="plot" id="{plot_id}" alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{data}"><figcaption>{html.escape(alt)}</figcaption>'
            "</figure>")


def _table(frame: pd.DataFrame, floatfmt: str = "{:.1f}") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for v in row:
            text = floatfmt.format(v) if isinstance(v, float) else str(v)
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def grade_distribution(built: Built) -> str:
    """Histogram of course percentages per track, with the letter cutoffs."""
    g = built.grades
    fig, ax = plt.subplots(figsize=(8, 3.6))
    tracks = sorted(g["track"].unique())
    ax.hist([g.loc[g["track"] == t, "percent"] for t in tracks], bins=range(0, 105, 5),
            stacked=True, label=tracks)
    for letter, cut in built.frames.policy.letters.items():
        if cut > 0:
            ax.axvline(cut, color="grey", lw=0.6, ls=":")
            ax.text(cut, ax.get_ylim()[1] * 0.95, letter, fontsize=7, ha="left", color="grey")
    ax.set_xlabel("course percentage")
    ax.set_ylabel("students")
    ax.legend(title="track")
    return _png(fig, "Grade distribution (course percentage by track)", "plot-grades")


def module_results(built: Built) -> tuple[str, pd.DataFrame]:
    """Mean autograded score and hidden-test pass rate per module."""
    s = built.result.scores
    auto = s[s["kind"] == "autograded"]
    tests = current_tests(built)
    hidden = tests[tests["tags"].str.contains("hidden")]
    rates = hidden.groupby("module")["passed"].mean() * 100
    table = auto.groupby("item", sort=False).agg(
        submitted=("missing", lambda m: int((~m).sum())),
        mean_raw=("raw_points", "mean"), mean_final=("final", "mean"), points=("points", "first"),
    ).reset_index()
    table["mean %"] = 100 * table["mean_raw"] / table["points"]
    table["hidden tests passed %"] = table["item"].map(rates).fillna(0.0)
    fig, ax = plt.subplots(figsize=(8, 3.4))
    x = range(len(table))
    ax.bar([i - 0.2 for i in x], table["mean %"], width=0.4, label="mean score %")
    ax.bar([i + 0.2 for i in x], table["hidden tests passed %"], width=0.4,
           label="hidden tests passed %")
    ax.set_xticks(list(x), table["item"], rotation=30, ha="right")
    ax.set_ylim(0, 105)
    ax.legend(loc="lower left")
    shown = table[["item", "submitted", "mean %", "hidden tests passed %"]]
    return _png(fig, "Per-module results: mean score and hidden-test pass rate",
                "plot-modules"), shown


def current_tests(built: Built) -> pd.DataFrame:
    """Per-test results of the submissions that count (one per student and module)."""
    s = built.result.scores
    ids = set(s.loc[s["kind"] == "autograded", "event_id"].dropna().astype(int))
    t = built.frames.tests
    t = t[t["event_id"].isin(ids)].copy()
    t["passed"] = t["status"].eq("passed")
    t["module"] = t["name"].str.split(" · ").str[0]
    t["tags"] = t["tags"].fillna("")
    return t


def test_pass_rates(built: Built) -> str:
    """Horizontal bars: pass rate of every hidden test."""
    t = current_tests(built)
    t = t[t["tags"].str.contains("hidden")]
    rates = t.groupby("name", sort=True)["passed"].mean() * 100
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.22 * len(rates) + 1)))
    modules = [n.split(" · ")[0] for n in rates.index]
    palette = {m: f"C{i % 10}" for i, m in enumerate(sorted(set(modules)))}
    ax.barh(range(len(rates)), rates.to_numpy(), color=[palette[m] for m in modules])
    ax.set_yticks(range(len(rates)), list(rates.index), fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("students passing (%)")
    return _png(fig, "Per-test pass rates (hidden tests, current submissions)", "plot-tests")


def milestone_results(built: Built) -> str:
    """Stacked bars per milestone: passed, failed, no result."""
    s = built.result.scores
    m = s[s["kind"] == "milestone"]
    fig, ax = plt.subplots(figsize=(8, 3))
    if m.empty:
        ax.text(0.5, 0.5, "no milestone due yet", ha="center", va="center")
        ax.set_axis_off()
    else:
        passed = m.assign(p=m["raw_points"] >= m["points"] - 1e-9, miss=m["missing"])
        agg = passed.groupby("title", sort=False).agg(
            passed=("p", "sum"), missing=("miss", "sum"), n=("p", "size"))
        agg["failed"] = agg["n"] - agg["passed"] - agg["missing"]
        y = range(len(agg))
        ax.barh(y, agg["passed"], color="C2", label="passed")
        ax.barh(y, agg["failed"], left=agg["passed"], color="C3", label="failed")
        ax.barh(y, agg["missing"], left=agg["passed"] + agg["failed"], color="0.7",
                label="no result")
        ax.set_yticks(list(y), list(agg.index), fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("students")
        ax.legend(loc="lower right")
    return _png(fig, "Milestone results", "plot-milestones")


def lateness(built: Built) -> tuple[str, pd.DataFrame]:
    """Per module: on time, late but forgiven (grace/tokens/extension), late with deduction."""
    u = built.result.units
    s = built.result.scores
    frac = s.groupby(["student", "module"])["late_fraction"].max().rename("frac")
    u = u.join(frac, on=["student", "module"])
    submitted = u["submitted_at"].notna()
    u = u[submitted]
    cat = pd.Series("on time", index=u.index)
    cat[(u["minutes_late"] > 0) & (u["frac"] == 0)] = "late, forgiven"
    cat[u["frac"] > 0] = "late, deducted"
    table = pd.crosstab(u["module"], cat).reindex(
        columns=["on time", "late, forgiven", "late, deducted"], fill_value=0)
    tokens = u.groupby("module")["tokens"].sum()
    table["tokens used"] = tokens.reindex(table.index).fillna(0).astype(int)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.2))
    bottom = pd.Series(0, index=table.index)
    for col, color in (("on time", "C2"), ("late, forgiven", "C1"), ("late, deducted", "C3")):
        ax1.bar([f"{m:02d}" for m in table.index], table[col], bottom=bottom, color=color,
                label=col)
        bottom = bottom + table[col]
    ax1.set_xlabel("module")
    ax1.set_ylabel("submissions")
    ax1.legend(fontsize=7, loc="lower left")
    hours = u.loc[u["minutes_late"] > 0, "minutes_late"] / 60
    ax2.hist(hours, bins=[0, 1, 6, 24, 48, 72, 120, 240, 480])
    ax2.set_xscale("symlog")
    ax2.set_xlabel("hours late (late submissions)")
    ax2.set_ylabel("submissions")
    out = table.reset_index().rename(columns={"module": "module"})
    out.columns.name = None
    return _png(fig, "Lateness per module and how late", "plot-lateness"), out


def render(built: Built) -> str:
    """The whole report as one HTML string."""
    c = built.frames.course
    g = built.grades
    tz = c.tz
    cut = "every item" if built.as_of is None else (
        "items due by " + built.as_of.tz_convert(tz).strftime("%Y-%m-%d %H:%M"))
    letters = list(built.frames.policy.letters)
    counts = pd.crosstab(g["track"], g["letter"]).reindex(columns=letters, fill_value=0)
    counts = counts.reset_index()
    counts.columns.name = None
    summary = g.groupby("track").agg(students=("student", "count"), mean=("percent", "mean"),
                                     median=("percent", "median"), min=("percent", "min"),
                                     max=("percent", "max")).reset_index()
    cats = built.result.categories.groupby("category").agg(
        mean_percent=("percent", "mean"), dropped_items=("dropped", "sum")).reset_index()
    mod_plot, mod_table = module_results(built)
    late_plot, late_table = lateness(built)
    unresolved = int(built.frames.events["student"].isna().sum())
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Gradebook report · {html.escape(c.course.code)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{html.escape(c.course.code)} · {html.escape(c.course.name)}</h1>",
        f"<p class='muted'>{html.escape(c.course.term)} · {len(g)} students · counting "
        f"{html.escape(cut)}"
        + (f" · <b>{unresolved} score event(s) match no roster student (run check)</b>"
           if unresolved else "") + "</p>",
        "<h2>Summary</h2>", _table(summary), _table(counts, "{:g}"), _table(cats),
        "<h2>Grade distribution</h2>", grade_distribution(built),
        "<h2>Modules</h2>", mod_plot, _table(mod_table),
        "<h2>Tests</h2>", test_pass_rates(built),
        "<h2>Milestones</h2>", milestone_results(built),
        "<h2>Lateness</h2>", late_plot, _table(late_table, "{:g}"),
        "</body></html>",
    ]
    return "\n".join(parts)
