"""Issue 13's acceptance run: a 200-submission synthetic export, killed twice midway, finishes
with the report of an uninterrupted run; a local Dask cluster gives identical scores.

Not a test (it takes minutes): run it by hand and read the last lines::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/regrade_acceptance.py [--n 200]

The uninterrupted run and the resumed one use ``tito regrade -j 2`` in a subprocess; the
kills are SIGKILL, sent when a third and then two thirds of the submissions are recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLI = [sys.executable, "-c", "from tito.cli import main; main()", "regrade"]


def _records(out: Path) -> int:
    try:
        return len(list(out.glob("submission_*/regrade.json")))
    except OSError:
        return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--looping", type=int, default=2)
    args = ap.parse_args()
    from autograder.harness import isolation
    from staff.synthetic import synth_export

    with tempfile.TemporaryDirectory(prefix="tt-accept-") as tmp:
        t = Path(tmp)
        made = synth_export(module="01", n=args.n, out=t / "export.zip", seed=13,
                            looping=args.looping, duplicated=1)
        print("export:", made.kinds(), flush=True)
        start = time.monotonic()
        ref = subprocess.run(CLI + [str(made.path), "-o", str(t / "ref"), "-j", "2"],
                             capture_output=True, text=True)
        print(f"uninterrupted: exit {ref.returncode}, {time.monotonic() - start:.0f} s",
              flush=True)
        out = t / "out"
        kills = []
        for frac in (1 / 3, 2 / 3):
            proc = subprocess.Popen(CLI + [str(made.path), "-o", str(out), "-j", "2"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            while _records(out) < int(args.n * frac) and proc.poll() is None:
                time.sleep(0.2)
            proc.send_signal(signal.SIGSTOP)  # frozen: it starts nothing more
            tree = isolation.descendants(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            for pid in tree:  # what a SIGKILL orphaned
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            kills.append(_records(out))
            print(f"killed with {kills[-1]} of {args.n} recorded", flush=True)
        start = time.monotonic()
        fin = subprocess.run(CLI + [str(made.path), "-o", str(out), "-j", "2"],
                             capture_output=True, text=True)
        run = json.loads((out / "regrade_runs.jsonl").read_text().splitlines()[-1])
        print(f"resumed: exit {fin.returncode}, {time.monotonic() - start:.0f} s, "
              f"reused {run['reused']}, graded {run['graded']}", flush=True)
        same_json = ((out / "regrade_report.json").read_text().replace(str(out), "OUT")
                     == (t / "ref" / "regrade_report.json").read_text().replace(
                         str(t / "ref"), "OUT"))
        same_csv = ((out / "regrade_report.csv").read_text()
                    == (t / "ref" / "regrade_report.csv").read_text())
        print(f"report identical to the uninterrupted run's: json {same_json}, csv {same_csv}")
        start = time.monotonic()
        dask = subprocess.run(CLI + [str(made.path), "-o", str(t / "dask"), "--scheduler",
                                     "local:2"], capture_output=True, text=True)
        a = json.loads((t / "ref" / "regrade_report.json").read_text())["submissions"]
        b = json.loads((t / "dask" / "regrade_report.json").read_text())["submissions"]
        print(f"dask local:2: exit {dask.returncode}, {time.monotonic() - start:.0f} s; "
              f"identical rows (scores, tests, notes): {a == b}")
        ok = (ref.returncode == fin.returncode == dask.returncode == 0 and same_json
              and same_csv and a == b and all(0 < k < args.n for k in kills))
        print("ACCEPTED" if ok else "NOT ACCEPTED")
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
