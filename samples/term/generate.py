"""Generate the bundled sample term (deterministic): ``python samples/term/generate.py``.

Writes, next to this script:

- ``roster.csv``: 42 students in Canvas's export format (two sections) plus a ``Track`` column,
  with Canvas's ``Points Possible`` row and a ``Test Student`` row (both skipped on import);
- ``results/NN_slug/<login>/results.json`` + ``submission_metadata.json`` for modules 01-07;
- ``gradescope/assignment_7007_export.zip``: module 07 again, as a Gradescope "Export
  Submissions" archive (``submission_metadata.yml`` with Ruby-symbol keys, a ``:history``
  entry for some): the same submissions, so ingesting both adds nothing twice;
- ``gradescope/07_training_written_scores.csv``: module 07's written questions as a Gradescope
  grade CSV ("Download Grades");
- ``regrade/03_layers/...``: a re-run of module 03 with suite 2027.1.1 for three students;
- ``written.csv`` (manual written scores 01-06), ``extensions.csv``, ``overrides.csv``.

Five students have fixed, hand-chosen inputs (``FIXED``); tests in
``tests/gradebook/test_sample_term.py`` compute their credit by hand. The rest come from a
seeded RNG. Nothing here imports course code: the module list is spelled out below and a test
checks it against course.yml.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import random
import re
import shutil
import zipfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
TZ = dt.timezone(dt.timedelta(hours=-5))  # America/New_York in Jan/Feb 2027 (EST)
SUITE = "2027.1"

# number, slug, due (local), hidden test cases (10 points each), milestones graded with it
MODULES = [
    (1, "tensor", "2027-01-26 23:59",
     ["shape_and_dtype", "add_broadcasts_row_over_matrix", "matmul_2d", "sum_dim_keepdim",
      "reshape_view_semantics"], []),
    (2, "activations", "2027-01-31 23:59",
     ["relu_zeroes_negatives", "sigmoid_is_stable_for_large_inputs", "tanh_range",
      "gelu_matches_reference", "softmax_is_shift_invariant"], []),
    (3, "layers", "2027-02-05 23:59",
     ["linear_weight_shape_is_out_in", "linear_forward", "sequential_chains_modules",
      "parameters_are_collected", "dropout_eval_is_identity"], []),
    (4, "losses", "2027-02-10 23:59",
     ["mse_matches_reference", "cross_entropy_uses_log_sum_exp", "bce_clamps_probabilities",
      "reduction_mean_and_sum", "loss_of_perfect_prediction_is_zero"], []),
    (5, "autograd", "2027-02-15 23:59",
     ["add_backward", "mul_backward", "matmul_backward", "broadcast_grad_is_summed",
      "no_grad_blocks_graph"], []),
    (6, "optimizers", "2027-02-20 23:59",
     ["sgd_step", "sgd_momentum", "adam_bias_correction", "adamw_decouples_weight_decay",
      "zero_grad_clears"], ["perceptron_1957"]),
    (7, "training", "2027-02-25 23:59",
     ["train_loop_decreases_loss", "eval_mode_no_grad", "batching_covers_dataset",
      "checkpoint_round_trip", "early_stopping"], ["xor_1969", "mlp_1986"]),
]
WRITTEN_POINTS = 15.0

# Hand-chosen students. autograded/written: per module 01-07 (None = no submission);
# late: module -> minutes after the due time; milestones: id -> passed.
FIXED = {
    "S1001": dict(name="Lovelace, Ada", login="alovelace", track="full", section=1,
                  auto=[50, 50, 50, 50, 50, 50, 50], written=[15] * 7, late={},
                  milestones={"perceptron_1957": True, "xor_1969": True, "mlp_1986": True}),
    "S1002": dict(name="Turing, Alan", login="aturing", track="full", section=1,
                  auto=[50, 40, 30, 50, 45, 50, 50], written=[15, 14, 10, 15, 12, 15, 15],
                  late={2: 30, 5: 53 * 60},
                  milestones={"perceptron_1957": True, "xor_1969": True, "mlp_1986": False}),
    "S1003": dict(name="Hopper, Grace", login="ghopper", track="foundation", section=2,
                  auto=[50, 50, 40, 50, 50, 40, 30], written=[15, 15, 15, 12, 15, 15, 9],
                  late={4: 3 * 24 * 60},
                  milestones={"perceptron_1957": True, "xor_1969": False, "mlp_1986": True}),
    "S1004": dict(name="Knuth, Donald", login="dknuth", track="full", section=2,
                  auto=[50, 20, 40, 50, 50, 50, 50], written=[15, 15, 15, 15, 15, 15, 15],
                  late={7: 8 * 24 * 60},
                  milestones={"perceptron_1957": True, "xor_1969": True, "mlp_1986": True}),
    "S1005": dict(name="Hamilton, Margaret", login="mhamilton", track="foundation", section=1,
                  auto=[40, 40, None, 50, 50, 50, 50], written=[12, 12, None, 15, 15, 15, 15],
                  late={}, milestones={"perceptron_1957": True, "xor_1969": True,
                                       "mlp_1986": True}),
}
FIRST = ["Barbara", "Edsger", "John", "Frances", "Ken", "Dennis", "Radia", "Tim", "Shafi",
         "Leslie", "Judea", "Yoshua", "Fei-Fei", "Geoffrey", "Jeff", "Sanjay", "Daphne",
         "Andrew", "Cynthia", "Michael", "Whitfield", "Adele", "Butler", "Niklaus", "Silvio",
         "Manuel", "Ivan", "Alan", "Robin", "Dana", "Kristen", "Lynn", "Jean", "Peter", "Anita",
         "Raj", "Mary"]
LAST = ["Liskov", "Dijkstra", "McCarthy", "Allen", "Thompson", "Ritchie", "Perlman",
        "Berners-Lee", "Goldwasser", "Lamport", "Pearl", "Bengio", "Li", "Hinton", "Dean",
        "Ghemawat", "Koller", "Ng", "Dwork", "Stonebraker", "Diffie", "Goldberg", "Lampson",
        "Wirth", "Micali", "Blum", "Sutherland", "Kay", "Milner", "Scott", "Nygaard",
        "Conway", "Sammet", "Norvig", "Borg", "Reddy", "Shaw"]


def due_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=TZ)


def students() -> list[dict]:
    """The 42 students, fixed ones first, then generated ones with seeded abilities."""
    rng = random.Random(249)
    out = []
    for sid, spec in FIXED.items():
        out.append({"sid": sid, **spec, "fixed": True})
    for i, (first, last) in enumerate(zip(FIRST, LAST, strict=True)):
        login = re.sub(r"[^a-z]", "", (first[0] + last).lower())
        ability = rng.uniform(0.5, 1.0)
        out.append({"sid": f"S{1006 + i}", "name": f"{last}, {first}", "login": login,
                    "track": "foundation" if i % 4 == 0 else "full", "section": 1 + i % 2,
                    "ability": ability, "fixed": False})
    return out


def plan(student: dict, rng: random.Random) -> dict:
    """Per-module submission plan: hidden test scores, milestones, written score, lateness."""
    out = {}
    for idx, (number, _slug, due, cases, milestones) in enumerate(MODULES):
        if student["fixed"]:
            total = student["auto"][idx]
            if total is None:
                continue
            passed, half = divmod(total, 10)
            tests = [10.0 if k < passed else (5.0 if k == passed and half else 0.0)
                     for k in range(len(cases))]
            ms = {m: student["milestones"][m] for m in milestones}
            written = float(student["written"][idx])
            late = student["late"].get(number, None)
        else:
            a = student["ability"]
            if rng.random() < 0.04:
                continue
            tests = [10.0 if rng.random() < a + 0.1 else (5.0 if rng.random() < 0.2 else 0.0)
                     for _ in cases]
            ms = {m: rng.random() < a ** 0.5 for m in milestones}
            written = round(min(15.0, max(0.0, rng.gauss(15 * a, 1.5))) * 2) / 2
            late = None
            if rng.random() < 0.12:
                late = int(60 * rng.choice([0.1, 0.5, 5, 20, 30, 50, 80, 200]))
        when = due_time(due) - dt.timedelta(minutes=rng.randint(30, 60 * 72))
        if late is not None:
            when = due_time(due) + dt.timedelta(minutes=late)
        out[number] = {"tests": tests, "milestones": ms, "written": written, "when": when}
    return out


def results_json(number: int, slug: str, cases: list[str], p: dict, suite: str) -> dict:
    name = f"{number:02d}_{slug}"
    tests = [{"name": f"{name} · public_smoke_test", "score": 0, "max_score": 0,
              "status": "passed", "visibility": "visible", "tags": [f"module:{name}", "public"]}]
    for case, score in zip(cases, p["tests"], strict=True):
        tests.append({"name": f"{name} · {case}", "score": score, "max_score": 10.0,
                      "status": "passed" if score == 10.0 else "failed",
                      "visibility": "after_due_date", "tags": [f"module:{name}", "hidden"]})
    for mid, ok in p["milestones"].items():
        tests.append({"name": f"milestone · {mid}", "score": 10.0 if ok else 0.0,
                      "max_score": 10.0, "status": "passed" if ok else "failed",
                      "visibility": "after_due_date",
                      "tags": [f"module:{name}", f"milestone:{mid}"]})
    return {"score": sum(t["score"] for t in tests), "execution_time": 12.5,
            "visibility": "after_due_date", "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"module": name, "suite_version": suite, "seeds": {"suite": 0},
                           "packages": {"numpy": "2.4.6", "python": "3.11.7"}}}


def gs_time(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f000 -05:00")


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    for sub in ("results", "gradescope", "regrade"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    rng = random.Random(2027)
    people = students()
    plans = {s["sid"]: plan(s, rng) for s in people}

    # roster.csv (Canvas export + Track)
    with (HERE / "roster.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Track"])
        w.writerow(["    Points Possible", "", "", "", "", ""])
        for i, s in enumerate(people):
            w.writerow([s["name"], 50100 + i, s["sid"], s["login"],
                        f"CS 249 LEC 00{s['section']}", s["track"]])
        w.writerow(["Student, Test", 59999, "", "test_student", "CS 249 LEC 001", ""])

    def email(s: dict) -> str:
        return f"{s['login']}@example.edu"

    def first_last(s: dict) -> str:
        last, first = s["name"].split(", ")
        return f"{first} {last}"

    # modules 01-07: results.json + submission_metadata.json (07 also comes as an export below)
    for number, slug, due, cases, _ms in MODULES:
        for k, s in enumerate(people):
            p = plans[s["sid"]].get(number)
            if p is None:
                continue
            folder = HERE / "results" / f"{number:02d}_{slug}" / s["login"]
            write_json(folder / "results.json", results_json(number, slug, cases, p, SUITE))
            write_json(folder / "submission_metadata.json", {
                "id": number * 100000 + k, "created_at": p["when"].isoformat(timespec="seconds"),
                "assignment": {"title": f"{number:02d} {slug}", "due_date": due_time(due)
                               .isoformat(), "total_points": 50.0 + 10 * len(_ms)},
                "submission_method": "upload",
                "users": [{"email": email(s), "id": 900000 + k, "name": first_last(s)}],
            })

    # module 07: Gradescope export archive
    number, slug, due, cases, ms = MODULES[6]
    meta: dict = {}
    files: dict[str, bytes] = {}
    for k, s in enumerate(people):
        p = plans[s["sid"]].get(number)
        if p is None:
            continue
        res = results_json(number, slug, cases, p, SUITE)
        key = f"submission_{number * 100000 + k}"
        record = {":submitters": [{":name": first_last(s), ":sid": s["sid"], ":email": email(s)}],
                  ":created_at": gs_time(p["when"]), ":score": res["score"], ":results": res}
        if k % 5 == 0:
            earlier = p["when"] - dt.timedelta(hours=6)
            record[":history"] = [{":created_at": gs_time(earlier), ":score": 10.0,
                                   ":autograder_error": False}]
        meta[key] = record
        files[f"assignment_7007_export/{key}/{number:02d}_{slug}.ipynb"] = json.dumps(
            {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    text = yaml.safe_dump(meta, sort_keys=True, allow_unicode=True, width=100)
    text = re.sub(r"(:created_at: )'([^']*)'", r"\1\2", text)  # Gradescope writes timestamps bare
    (HERE / "gradescope").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(HERE / "gradescope" / "assignment_7007_export.zip", "w",
                         zipfile.ZIP_DEFLATED) as zf:
        fixed_time = (2027, 2, 26, 9, 0, 0)
        entries = {"assignment_7007_export/submission_metadata.yml": text.encode(), **files}
        for name in sorted(entries):
            zf.writestr(zipfile.ZipInfo(name, fixed_time), entries[name])

    # module 07 written: Gradescope grade CSV
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["First Name", "Last Name", "SID", "Email", "Sections", "Total Score", "Max Points",
                "Status", "Submission ID", "Submission Time", "Lateness (H:M:S)", "View Count",
                "Submission Count", "1: Where does the memory go? (5.0 pts)",
                "2: Batch size and throughput (10.0 pts)"])
    for k, s in enumerate(people):
        last, first = s["name"].split(", ")
        p = plans[s["sid"]].get(number)
        section = f"CS 249 LEC 00{s['section']}"
        if p is None:
            w.writerow([first, last, s["sid"], email(s), section, "", "15.0", "Missing", "", "",
                        "", "", "0", "", ""])
            continue
        q1 = min(5.0, p["written"])
        w.writerow([first, last, s["sid"], email(s), section, f"{p['written']:.1f}", "15.0",
                    "Graded", 8800000 + k, p["when"].strftime("%Y-%m-%d %H:%M:%S -0500"),
                    "00:00:00", "2", "1", f"{q1:.1f}", f"{p['written'] - q1:.1f}"])
    (HERE / "gradescope" / "07_training_written_scores.csv").write_text(buf.getvalue(),
                                                                        encoding="utf-8")

    # written.csv: modules 01-06 entered by TAs
    with (HERE / "written.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["student", "module", "score", "grader", "comment"])
        for number, _slug, *_ in MODULES[:6]:
            for s in people:
                p = plans[s["sid"]].get(number)
                if p is not None:
                    w.writerow([s["sid"], f"{number:02d}", f"{p['written']:g}",
                                "ta_" + ("kim" if number % 2 else "lee"), ""])

    # regrade: module 03 re-run with suite 2027.1.1 (a fixed tolerance gives two students a test
    # back; a stricter check takes one away from a third)
    number, slug, due, cases, _ = MODULES[2]
    changes = {"S1004": [10.0, 10.0, 10.0, 10.0, 5.0], "S1010": None, "S1011": None}
    for k, s in enumerate(people):
        if s["sid"] not in changes or number not in plans[s["sid"]]:
            continue
        p = dict(plans[s["sid"]][number])
        tests = changes[s["sid"]]
        if tests is None:
            tests = list(p["tests"])
            j = tests.index(min(tests))
            tests[j] = 10.0 if s["sid"] == "S1010" else max(0.0, tests[j] - 5.0)
            if s["sid"] == "S1011":
                tests[0] = 0.0
        p["tests"] = tests
        folder = HERE / "regrade" / f"{number:02d}_{slug}" / s["login"]
        write_json(folder / "results.json", results_json(number, slug, cases, p, "2027.1.1"))
        write_json(folder / "submission_metadata.json", {
            "id": number * 100000 + k, "created_at": p["when"].isoformat(timespec="seconds"),
            "users": [{"email": email(s), "id": 900000 + k, "name": first_last(s)}],
        })

    (HERE / "extensions.csv").write_text(
        "student,module,due,hours,reason\n"
        "S1003,04,2027-02-14 23:59,,medical (dean's note 2027-02-09)\n"
        "bliskov,*,,48,accommodation letter: +48 h on every module\n"
        "S1016,06,,24,conference travel\n",
        encoding="utf-8",
    )
    (HERE / "overrides.csv").write_text(
        "student,item,score,reason\n"
        "S1004,02,50,autograder crashed on a timeout; all cases verified by hand (TA lee)\n"
        "ghopper,milestone:xor_1969,10,"
        "re-run on staff machine passed 3 of 3 seeds (timing flake)\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
