"""The tier's text data: the shipped KJV excerpt and the synthetic sequence tasks."""

from __future__ import annotations

import doctest
import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from tinytorch_data import loaders as L

KJV = "kjv_chars/kjv.txt.gz"


def test_kjv_text_matches_its_recorded_text_checksum_and_size() -> None:
    entry = L.manifest()["files"][KJV]
    raw = gzip.decompress(L.verified_path(KJV).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == entry["text_sha256"]
    assert len(raw) == entry["text_chars"] <= 2_000_000, "the excerpt stays under 2 MB"


def test_kjv_split_is_contiguous_at_a_verse_boundary_with_the_recorded_vocabulary() -> None:
    kjv = L.load_kjv_chars()
    text = kjv.train + kjv.validation
    assert text.startswith("In the beginning God created the heaven and the earth.\n")
    assert text.endswith("And Obed begat Jesse, and Jesse begat David.\n")
    assert text.count("\n") == 7213, "one verse a line, Genesis 1:1 to Ruth 4:22"
    assert kjv.train.endswith("\n"), "validation starts at the beginning of a verse"
    share = len(kjv.validation) / len(text)
    assert 0.099 < share < 0.1002, f"validation share {share:.4f}, asked for 0.1"
    assert len(kjv.vocabulary) == 62 and kjv.vocabulary[0] == "\n"
    assert list(kjv.vocabulary) == sorted(set(text))
    assert set(kjv.validation) <= set(kjv.train), "no character is unseen in training"


def test_kjv_validation_fraction_is_honoured_and_checked() -> None:
    small, big = L.load_kjv_chars(validation_fraction=0.05), L.load_kjv_chars(validation_fraction=0.5)
    assert len(small.validation) < len(big.validation)
    assert small.train + small.validation == big.train + big.validation
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="validation_fraction"):
            L.load_kjv_chars(validation_fraction=bad)


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(L.DATASETS_DIR / "kjv_chars", tmp_path / "kjv_chars")
    return tmp_path


def test_corrupt_kjv_file_fails_with_one_line_checksum_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    f = root / KJV
    data = bytearray(f.read_bytes())
    data[1000] ^= 0x01
    f.write_bytes(bytes(data))
    with pytest.raises(L.DataError) as err:
        L.load_kjv_chars(root)
    msg = str(err.value)
    assert "checksum mismatch" in msg and "kjv.txt.gz" in msg and "\n" not in msg


def test_missing_kjv_file_fails_with_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(L.DataError, match="kjv.txt.gz: file not found"):
        L.load_kjv_chars(tmp_path)


@pytest.mark.parametrize("task", [L.sequence_reversal, L.sequence_sorting])
def test_sequence_tasks_are_deterministic_by_seed_and_respect_vocabulary_and_length(task) -> None:
    src, tgt = task(50, length=7, vocab_size=5, seed=3)
    again = task(50, length=7, vocab_size=5, seed=3)
    other = task(50, length=7, vocab_size=5, seed=4)
    assert np.array_equal(src, again[0]) and np.array_equal(tgt, again[1])
    assert not np.array_equal(src, other[0])
    assert src.shape == tgt.shape == (50, 7) and src.dtype == tgt.dtype == np.int64
    assert src.min() >= 0 and src.max() <= 4 and set(np.unique(src).tolist()) == set(range(5))
    # The target is a rearrangement of the source: same multiset of tokens in every row.
    assert np.array_equal(np.sort(src, axis=1), np.sort(tgt, axis=1))


def test_reversal_targets_read_the_source_backwards() -> None:
    src, tgt = L.sequence_reversal(20, length=6, vocab_size=9, seed=0)
    for s, t in zip(src.tolist(), tgt.tolist(), strict=True):
        assert t == s[::-1]
    assert tgt.flags["C_CONTIGUOUS"], "a copy, not a negative-stride view"


def test_sorting_targets_are_ascending_and_share_sources_with_reversal() -> None:
    src, tgt = L.sequence_sorting(20, length=6, vocab_size=9, seed=11)
    for s, t in zip(src.tolist(), tgt.tolist(), strict=True):
        assert t == sorted(s)
    assert np.array_equal(src, L.sequence_reversal(20, length=6, vocab_size=9, seed=11)[0])


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"length": 0}, {"vocab_size": 1}, {"n": 2.5}])
def test_sequence_tasks_refuse_bad_sizes_in_one_line(kwargs) -> None:
    args = {"n": 4, "length": 3, "vocab_size": 4, "seed": 0, **kwargs}
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"^{name} must be an integer"):
        L.sequence_sorting(**args)


def test_loader_docstring_examples_run() -> None:
    result = doctest.testmod(L, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 3
