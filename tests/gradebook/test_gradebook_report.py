"""The HTML report is one self-contained file whose plots render in headless Chromium."""

from __future__ import annotations

import re
import subprocess

from browser import chromium
from browser import flags as browser_flags

from gradebook import api

PLOTS = ["plot-grades", "plot-modules", "plot-tests", "plot-milestones", "plot-lateness"]
PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100);
  document.body.setAttribute('data-rendered', ok.map(i => i.id).join(','));
});
</script>"""


def test_report_is_self_contained(sample_store, gb_course, tmp_path):
    out = api.report(output=tmp_path / "report.html", store=sample_store, course=gb_course)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    for plot in PLOTS:
        assert f'id="{plot}"' in text
    srcs = re.findall(r'src="([^"]*)"', text)
    assert len(srcs) == len(PLOTS) and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "http://" not in text and "https://" not in text and "<link" not in text
    assert "Knuth" not in text  # no per-student names in a class-wide report


def test_report_plots_render_in_headless_chromium(sample_store, gb_course, tmp_path):
    browser = chromium()
    out = api.report(output=tmp_path / "report.html", store=sample_store, course=gb_course)
    probe = tmp_path / "probe.html"
    probe.write_text(out.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                     encoding="utf-8")
    flags = [*browser_flags(tmp_path / "profile"), "--virtual-time-budget=5000"]
    dom = subprocess.run([browser, *flags, "--dump-dom", probe.as_uri()], capture_output=True,
                         text=True, timeout=1800).stdout
    match = re.search(r'data-rendered="([^"]*)"', dom)
    assert match, "the page did not load in Chromium"
    assert sorted(match.group(1).split(",")) == sorted(PLOTS)
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *flags, f"--screenshot={shot}", "--window-size=1200,2400",
                    out.as_uri()], capture_output=True, timeout=1800)
    assert shot.is_file() and shot.stat().st_size > 20_000


def test_report_is_the_page_a_ta_opens_every_week(sample_built, sample_store, gb_course,
                                                   tmp_path):
    from gradebook.report import pass_rate_table

    text = api.report(output=tmp_path / "r.html", store=sample_store,
                      course=gb_course).read_text(encoding="utf-8")
    assert "<section id='sections'>" in text
    for section in set(sample_built.grades["section"]):
        assert f"<td>{section}</td>" in text
    assert "mean raw % (before late deductions)" in text
    assert "mean final % (after late deductions)" in text
    rates = pass_rate_table(sample_built)
    assert len(rates) > 30 and rates["passed %"].is_monotonic_increasing
    weakest = rates.iloc[0]
    table = text.split("<div id='pass-rates'>")[1]
    assert table.index(f"<td>{weakest['test']}</td>") < table.index(
        f"<td>{rates.iloc[-1]['test']}</td>")
