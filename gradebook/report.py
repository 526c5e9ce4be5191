"""``report``: one self-contained HTML file (plots as inline base64 PNG, matplotlib Agg).

Sections: summary and letter counts per track, per-section tables, grade distribution,
per-module results (mean score before and after late deductions, hidden pass rate), the weakest
hidden tests first, milestone results, lateness (and tokens). No JavaScript, no
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
    """Histogram of course percentages per track, with the letter cutoffs labelled above."""
    g = built.grades
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    tracks = sorted(g["track"].unique())
    ax.hist([g.loc[g["track"] == t, "percent"] for t in tracks], bins=range(0, 105, 5),
            stacked=True, label=tracks)
    cuts = [(letter, cut) for letter, cut in built.frames.policy.letters.items() if cut > 0]
    for i, (letter, cut) in enumerate(cuts):
        ax.axvline(cut, color="grey", lw=0.6, ls=":")
        # labels above the axes, on two alternating rows, so close cutoffs never overlap
        ax.annotate(letter, xy=(cut, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(0, 4 + 10 * (i % 2)), textcoords="offset points", ha="center",
                    va="bottom", fontsize=7, color="dimgrey")
    ax.set_xlim(0, 100)
    ax.set_xlabel("course percentage (after late deductions, drops and weights)")
    ax.set_ylabel("students")
    ax.legend(title="track", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return _png(fig, "Grade distribution (course percentage by track; dotted lines: letter "
                     "cutoffs)", "plot-grades")


def section_tables(built: Built) -> str:
    """Per section: students, mean and median course %, letters, submissions missing."""
    g = built.grades.copy()
    g["section"] = g["section"].fillna("").replace("", "(none)")
    letters = list(built.frames.policy.letters)
    stats = g.groupby(["section", "track"]).agg(
        students=("student", "count"), mean=("percent", "mean"), median=("percent", "median"),
        lowest=("percent", "min")).reset_index()
    stats = stats.rename(columns={"mean": "mean %", "median": "median %", "lowest": "lowest %"})
    counts = pd.crosstab(g["section"], g["letter"]).reindex(columns=letters, fill_value=0)
    counts = counts.reset_index()
    counts.columns.name = None
    s = built.result.scores
    auto = s[s["kind"] == "autograded"].merge(g[["student", "section"]], on="student")
    missing = auto.groupby("section")["missing"].sum().astype(int).rename("missing submissions")
    counts = counts.join(missing, on="section")
    return (f"<section id='sections'>{_table(stats)}"
            f"{_table(counts, '{:g}')}</section>")


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
    table["mean raw % (before late deductions)"] = 100 * table["mean_raw"] / table["points"]
    table["mean final % (after late deductions)"] = 100 * table["mean_final"] / table["points"]
    table["hidden tests passed %"] = table["item"].map(rates).fillna(0.0)
    fig, ax = plt.subplots(figsize=(8.5, 3.4))
    x = range(len(table))
    ax.bar([i - 0.27 for i in x], table["mean raw % (before late deductions)"], width=0.27,
           label="mean raw score % (before late deductions)")
    ax.bar(list(x), table["mean final % (after late deductions)"], width=0.27,
           label="mean final score % (after late deductions)")
    ax.bar([i + 0.27 for i in x], table["hidden tests passed %"], width=0.27,
           label="hidden tests passed %")
    ax.set_xticks(list(x), table["item"], rotation=30, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("percent")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    shown = table[["item", "submitted", "mean raw % (before late deductions)",
                   "mean final % (after late deductions)", "hidden tests passed %"]]
    return _png(fig, "Per-module results: mean score before and after late deductions, and "
                     "the hidden-test pass rate", "plot-modules"), shown


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


#: Hidden tests shown in the per-test chart, the weakest first (the table lists all of them).
WEAKEST_SHOWN = 30


def pass_rate_table(built: Built) -> pd.DataFrame:
    """Every hidden test with its pass rate, the weakest first (ties: by module and name)."""
    t = current_tests(built)
    t = t[t["tags"].str.contains("hidden")]
    rates = t.groupby("name").agg(students=("passed", "size"), passed=("passed", "mean"))
    rates["passed %"] = 100 * rates["passed"]
    rates = rates.reset_index()
    rates["module"] = rates["name"].str.split(" · ").str[0]
    rates["test"] = rates["name"].str.split(" · ", n=1).str[-1]
    rates = rates.sort_values(["passed %", "module", "test"], kind="stable")
    return rates[["module", "test", "students", "passed %"]].reset_index(drop=True)


def test_pass_rates(built: Built) -> str:
    """Horizontal bars of the weakest hidden tests (lowest pass rate on top), by module."""
    rates = pass_rate_table(built).head(WEAKEST_SHOWN)
    fig, ax = plt.subplots(figsize=(8.5, max(2.5, 0.26 * len(rates) + 1)))
    modules = sorted(set(rates["module"]))
    palette = {m: f"C{i % 10}" for i, m in enumerate(modules)}
    y = list(range(len(rates)))
    ax.barh(y, rates["passed %"].to_numpy(), color=[palette[m] for m in rates["module"]])
    ax.set_yticks(y, list(rates["test"]), fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("students passing (%)")
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=palette[m], label=m) for m in modules], title="module",
              loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=7)
    return _png(fig, f"The {len(rates)} weakest hidden tests (lowest pass rate first, current "
                     "submissions)", "plot-tests")


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
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
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
    ax1.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.02), ncol=3,
               frameon=False)
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
        "<h2>Sections</h2>", section_tables(built),
        "<h2>Grade distribution</h2>", grade_distribution(built),
        "<h2>Modules</h2>", mod_plot, _table(mod_table),
        "<h2>Tests</h2>", test_pass_rates(built),
        "<details><summary>Every hidden test, the weakest first</summary>",
        f"<div id='pass-rates'>{_table(pass_rate_table(built))}</div></details>",
        "<h2>Milestones</h2>", milestone_results(built),
        "<h2>Lateness</h2>", late_plot, _table(late_table, "{:g}"),
        "</body></html>",
    ]
    return "\n".join(parts)
