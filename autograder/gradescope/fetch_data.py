"""Install the held-out test data of submitted-weights milestones, once, at image build time.

``setup.sh`` runs ``python fetch_data.py --source /autograder/source``: for every milestone of
the zip's course snapshot (``course.json``) with ``test_data`` (course.yml: ``url``,
``sha256``, ``bytes``, ``member``), download the archive, refuse it unless its size and
SHA-256 are the ones in course.yml, take the one ``member`` out of the tar (a regular file;
nothing else is extracted, no path leaves the folder), write it to ``<source>/data/<member>``
and record its SHA-256 in ``<source>/data/SHA256SUMS``, which the grader checks before every
use. ``<source>`` is hidden from the sandboxed student code; the archive is deleted.

Staff grading in the repository (``tito grade``) use the same code:
``python -m autograder.gradescope.fetch_data --dest build/grader-data`` (course.yml).
Standard library only. Exit 1 with one line on any failure, so the image build fails loudly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

SUMS = "SHA256SUMS"


class FetchError(RuntimeError):
    """The test data cannot be installed (download, size, checksum or archive problem)."""


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _download(url: str, dest: Path, limit: int) -> None:
    with urllib.request.urlopen(url, timeout=120) as resp, open(dest, "wb") as out:  # noqa: S310
        got = 0
        for block in iter(lambda: resp.read(1 << 20), b""):
            got += len(block)
            if got > limit:
                raise FetchError(f"{url}: larger than the {limit} bytes course.yml gives")
            out.write(block)


def install(spec: dict[str, Any], dest: Path) -> Path:
    """Download, verify and unpack one ``test_data`` entry into ``dest``; returns the file."""
    url, want, size, member = spec["url"], spec["sha256"], int(spec["bytes"]), spec["member"]
    if member.startswith("/") or ".." in Path(member).parts:
        raise FetchError(f"test_data.member {member!r} is not a relative path")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / member
    with tempfile.TemporaryDirectory(dir=dest, prefix=".fetch-") as tmp:
        archive = Path(tmp) / "archive"
        try:
            _download(url, archive, size)
        except OSError as exc:
            raise FetchError(f"{url}: download failed ({exc})") from exc
        got = archive.stat().st_size
        if got != size:
            raise FetchError(f"{url}: {got} bytes, course.yml test_data.bytes says {size}")
        digest = _sha256(archive)
        if digest != want:
            raise FetchError(f"{url}: SHA-256 {digest} is not course.yml's test_data.sha256 "
                             f"{want}")
        try:
            with tarfile.open(archive, "r:*") as tar:
                info = tar.getmember(member)
                if not info.isreg():
                    raise FetchError(f"{url}: {member} is not a regular file in the archive")
                src = tar.extractfile(info)
                if src is None:
                    raise FetchError(f"{url}: {member} cannot be read")
                part = Path(tmp) / "member"
                with src, open(part, "wb") as out:
                    shutil.copyfileobj(src, out)
        except (tarfile.TarError, KeyError) as exc:
            raise FetchError(f"{url}: no {member} in the archive ({exc})") from exc
        target.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(part, 0o644)
        os.replace(part, target)
    sums = dest / SUMS
    lines = [ln for ln in (sums.read_text(encoding="ascii").splitlines() if sums.is_file()
                           else []) if ln.strip() and not ln.endswith(f"  {member}")]
    lines.append(f"{_sha256(target)}  {member}")
    sums.write_text("\n".join(sorted(lines)) + "\n", encoding="ascii")
    return target


def specs_from_snapshot(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``test_data`` entries of a course snapshot's milestones (none for most modules)."""
    return [dict(m["test_data"]) for m in snapshot.get("milestones", []) if m.get("test_data")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, help="the unpacked autograder zip (has course.json); "
                                                "data goes to SOURCE/data")
    ap.add_argument("--dest", type=Path, help="with course.yml (repository): the data folder")
    ns = ap.parse_args(argv)
    try:
        if ns.source is not None:
            snap = json.loads((ns.source / "course.json").read_text(encoding="utf-8"))
            specs, dest = specs_from_snapshot(snap), ns.source / "data"
        elif ns.dest is not None:
            from coursekit.course import load_course  # noqa: PLC0415 - repository side only

            specs = [ms.test_data.model_dump() for ms in load_course().milestones
                     if ms.test_data is not None]
            dest = ns.dest
        else:
            ap.error("give --source (the autograder zip) or --dest (the repository)")
        for spec in specs:
            path = install(spec, dest)
            print(f"test data: {path} ({spec['url']}, SHA-256 verified)")
    except (FetchError, OSError, ValueError, KeyError) as exc:
        print(f"fetch_data: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
