#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# Choose the "Ubuntu 24.04" base image (Python >= 3.11, needed by the pinned NumPy).
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${AUTOGRADER_PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -m pip --version >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq python3 python3-pip python3-venv
fi
"$PY" - <<'PYCHECK'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"TinyTorch autograder: Python >= 3.11 needed, found {sys.version.split()[0]}; "
             "pick the Ubuntu 24.04 base image")
PYCHECK
# Pinned, from the requirements file inside this zip (NumPy only: the harness is stdlib),
# installed system-wide (/usr/local) so an unprivileged user can run it: student code never
# runs as root, and without namespaces the grader drops to a fresh uid that must be able to
# start this interpreter and import NumPy.
umask 022
"$PY" -m pip install --no-cache-dir -q -r "$SRC/requirements.txt" \
  || "$PY" -m pip install --no-cache-dir -q --break-system-packages -r "$SRC/requirements.txt"
"$PY" -c "import numpy; print('numpy', numpy.__version__)"
if command -v setpriv >/dev/null 2>&1; then
  if ! setpriv --reuid=65534 --regid=65534 --clear-groups "$(command -v "$PY")" -I -c \
      "import numpy" 2>/dev/null; then
    echo "TinyTorch autograder: $PY cannot import NumPy as an unprivileged user; install" \
         "Python and NumPy system-wide (not under /root) or make them world-readable" >&2
    exit 1
  fi
fi
chmod 755 "$SRC/run_autograder"
# Held-out test data of submitted-weights milestones (course.yml test_data), e.g. the CIFAR-10
# test batch for module 09: downloaded now, size and SHA-256 checked against course.yml, one
# file kept under $SRC/data (hidden from student code). No such milestone: nothing to do.
"$PY" "$SRC/autograder/gradescope/fetch_data.py" --source "$SRC"
# Checked-hash bytecode of the trusted packages (the reference, the release stubs), which every
# grading then copies instead of compiling them again (autograder.harness.package).
(cd "$SRC" && "$PY" -m autograder.harness.package reference stubs)
