"""Regenerate ``kjv.txt.gz``: Genesis 1:1 to Ruth 4:22 of the King James Bible, one verse a line.

The text comes from Debian's ``bible-kjv-text`` (the compressed text in ``/usr/lib/bible.data``),
decoded by the ``bible`` program of ``bible-kjv``. Run once, on a Debian or Ubuntu machine::

    apt-get install -y bible-kjv-text bible-kjv
    python tinytorch_data/kjv_chars/extract_kjv.py

What is kept: the first eight books (Genesis through Ruth, 7213 verses, about 1 MB), in
canonical order, each verse on its own line without its reference ("Ge1:1 "), ASCII. The
output is byte-for-byte reproducible (gzip mtime 0, no file name, level 9); the script checks
the first and last verse and the size, and prints the sha256 of the text and of the gzip file
for ``tinytorch_data/MANIFEST.json`` (the loader verifies the gzip file's).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import subprocess
from pathlib import Path

OUT = Path(__file__).with_name("kjv.txt.gz")
RANGE = "Gen1:1-Ruth4:22"
FIRST, LAST = ("Ge1:1", "In the beginning"), ("Ruth4:22", "And Obed begat Jesse")
MAX_BYTES = 2_000_000
REFERENCE = re.compile(r"^(\d?[A-Za-z]+\d+:\d+) (.*)$")


def verses() -> list[tuple[str, str]]:
    """``(reference, text)`` of every verse in ``RANGE``, from ``bible -f`` (one verse a line)."""
    out = subprocess.run(["bible", "-f", RANGE], check=True, capture_output=True).stdout
    rows = []
    for number, line in enumerate(out.decode("ascii").splitlines(), 1):
        match = REFERENCE.match(line)
        if match is None:
            raise SystemExit(f"bible output line {number}: no verse reference in {line[:40]!r}")
        rows.append((match.group(1), match.group(2).strip()))
    return rows


def main() -> None:
    rows = verses()
    if rows[0][0] != FIRST[0] or not rows[0][1].startswith(FIRST[1]):
        raise SystemExit(f"first verse is {rows[0][0]}, expected {FIRST[0]}")
    if rows[-1][0] != LAST[0] or not rows[-1][1].startswith(LAST[1]):
        raise SystemExit(f"last verse is {rows[-1][0]}, expected {LAST[0]}")
    raw = "".join(text + "\n" for _, text in rows).encode("ascii")
    if len(raw) > MAX_BYTES:
        raise SystemExit(f"excerpt is {len(raw)} bytes, more than {MAX_BYTES}")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    OUT.write_bytes(buf.getvalue())
    print(f"wrote {OUT}: {len(rows)} verses, {len(raw)} characters, "
          f"{len(buf.getvalue())} bytes gzipped")
    print(f"text sha256 {hashlib.sha256(raw).hexdigest()}")
    print(f"gzip sha256 {hashlib.sha256(buf.getvalue()).hexdigest()}")


if __name__ == "__main__":
    main()
