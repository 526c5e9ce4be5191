"""Module 10 (tokenization): the reference against independent oracles.

* BPE training is compared with a direct re-implementation written here (no shared code:
  its own special-token cutting and chunking, every pair recounted over every chunk occurrence
  before each merge), on hypothesis-generated corpora;
* round trips hold for arbitrary Unicode text (hypothesis ``st.text()``);
* incremental training touches far fewer chunks than recounting would (a work count, not a
  timing);
* save/load: exact round trip, atomic writes, and one-line errors naming file and field.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tinytorch_ref import tokenization as T

SPECIALS = ["<pad>", "<|endoftext|>", "<|end|>"]


# ----------------------------------------------------------------------------- the oracle
def oracle_bpe(text: str, vocab_size: int, specials: list[str], pattern: str | None,
               min_frequency: int = 2) -> tuple[dict[tuple[int, int], int], list[list[int]]]:
    """Direct BPE: recount all pairs of all chunk occurrences before every merge.

    Returns the merges and the final segmentation of every chunk occurrence, in text order.
    """
    if specials:
        alternation = "|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True))
        pieces = [p for p in re.split(f"(?:{alternation})", text) if p]
    else:
        pieces = [text] if text else []
    chunks: list[str] = []
    for piece in pieces:
        if pattern is None:
            chunks.append(piece)
        else:
            found = re.findall(pattern, piece)
            assert "".join(found) == piece, "the default pattern covers every character"
            chunks += found
    k = len(specials)
    seqs = [[k + b for b in chunk.encode("utf-8")] for chunk in chunks]
    merges: dict[tuple[int, int], int] = {}
    next_id = k + 256
    while next_id < vocab_size:
        counts: Counter[tuple[int, int]] = Counter()
        for seq in seqs:
            for i in range(len(seq) - 1):
                counts[(seq[i], seq[i + 1])] += 1
        if not counts:
            break
        best_count = max(counts.values())
        if best_count < min_frequency:
            break
        best = min(p for p, c in counts.items() if c == best_count)
        merges[best] = next_id
        new_seqs = []
        for seq in seqs:
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    out.append(next_id)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            new_seqs.append(out)
        seqs = new_seqs
        next_id += 1
    return merges, seqs


WORDS = st.lists(st.text(alphabet="abcdé€ ", min_size=1, max_size=6), min_size=1, max_size=12)


@st.composite
def corpora(draw):
    lexicon = draw(WORDS)
    n = draw(st.integers(1, 60))
    idx = draw(st.lists(st.integers(0, len(lexicon) - 1), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from([" ", "", ". ", "\n", "<pad>", "<|endoftext|>"]),
                         min_size=n, max_size=n))
    return "".join(lexicon[i] + s for i, s in zip(idx, seps, strict=True))


@given(corpora(), st.integers(256, 300), st.integers(0, 3),
       st.sampled_from([T.SPLIT_PATTERN, None]), st.integers(1, 3))
def test_bpe_training_matches_the_direct_oracle(text, vocab_size, n_special, pattern, min_freq):
    specials = SPECIALS[:n_special]
    vocab_size = max(vocab_size, 256 + n_special)
    tok = T.BPETokenizer(special_tokens=specials, split_pattern=pattern)
    tok.train(text, vocab_size=vocab_size, min_frequency=min_freq)
    want, segments = oracle_bpe(text, vocab_size, specials, pattern, min_freq)
    assert list(tok.merges.items()) == list(want.items())
    # Encoding the training text replays training's segmentation, special tokens included.
    flat = [i for seg in segments for i in seg]
    assert [i for i in tok.encode(text) if i >= n_special] == flat


def test_classic_wikipedia_example_and_vocab_bytes():
    tok = T.BPETokenizer(split_pattern=None).train("aaabdaaabac", vocab_size=300)
    assert tok.merges == {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    assert [tok.vocab[i] for i in (256, 257, 258)] == [b"aa", b"ab", b"aaab"]
    assert tok.encode("aaabdaaabac") == [258, 100, 258, 97, 99]
    assert tok.vocab_size == 259, "stops when no pair occurs twice (min_frequency=2)"


def test_vocab_size_is_exact_when_pairs_remain():
    text = "the quick brown fox jumps over the lazy dog " * 20
    for vocab_size in (256, 257, 270, 280):
        assert T.BPETokenizer().train(text, vocab_size).vocab_size == vocab_size
    tok = T.BPETokenizer(special_tokens=SPECIALS).train(text, 270)
    assert tok.vocab_size == 270 and min(tok.merges.values()) == 259
    with pytest.raises(ValueError, match="smaller than the 259 ids"):
        T.BPETokenizer(special_tokens=SPECIALS).train(text, 258)


# ----------------------------------------------------------------------------- round trips
@given(st.text(max_size=200))
def test_bpe_round_trip_for_any_unicode_text(text):
    tok = _trained_bpe()
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(tok.encode(text, allow_special=False)) == text


@given(st.lists(st.one_of(st.text(max_size=20), st.sampled_from(SPECIALS)), max_size=10))
def test_special_tokens_are_atomic_or_plain_text(parts):
    tok = _trained_bpe()
    text = "".join(parts)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert sum(1 for i in ids if i < len(SPECIALS)) == _count_specials(text)
    assert all(i >= len(SPECIALS) for i in tok.encode(text, allow_special=False))


@given(st.text(max_size=200))
def test_char_round_trip_for_any_unicode_text(text):
    tok = T.CharTokenizer(special_tokens=SPECIALS).train(text)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert len(ids) == len(text) - sum(len(s) - 1 for s in _specials_in(text))
    assert [tok.stoi[ch] for ch in sorted(tok.stoi)] == list(range(3, tok.vocab_size)), (
        "characters are numbered in code-point order after the special tokens")


@given(st.text(max_size=100), st.sampled_from([T.SPLIT_PATTERN, r"a+", r"\d", r"x*", None]))
def test_pretokenize_never_loses_a_character(text, pattern):
    chunks = T.pretokenize(text, pattern)
    assert "".join(chunks) == text and all(chunks)


@given(st.lists(st.one_of(st.text(alphabet="<>|endofxtpa ", max_size=8),
                          st.sampled_from(SPECIALS)), max_size=12))
def test_split_special_rebuilds_the_text_without_empty_or_adjacent_pieces(parts):
    table = {tok: i for i, tok in enumerate(SPECIALS)}
    text = "".join(parts)
    pieces = T.split_special(text, table)
    assert "".join(p if isinstance(p, str) else SPECIALS[p] for p in pieces) == text
    assert all(p != "" for p in pieces)
    assert not any(isinstance(a, str) and isinstance(b, str)
                   for a, b in zip(pieces, pieces[1:], strict=False))
    assert all(s not in p for p in pieces if isinstance(p, str) for s in SPECIALS)


@given(st.lists(st.sampled_from(["<e", "<eos>", "os>", "x", "<", "e"]), max_size=10),
       st.booleans())
def test_split_special_prefers_the_longest_token_in_any_order(parts, short_first):
    text = "".join(parts)
    table = {"<e": 0, "<eos>": 1} if short_first else {"<eos>": 0, "<e": 1}
    want: list[str | int] = []
    for part in re.split("(<eos>|<e)", text):
        if part in table:
            want.append(table[part])
        elif part:
            want.append(part)
    assert T.split_special(text, table) == want


def test_decode_of_a_broken_character_and_bad_ids():
    tok = T.BPETokenizer(special_tokens=["<pad>"])
    euro = tok.encode("€")
    assert euro == [227, 131, 173]
    assert tok.decode(euro[:2]) == "\ufffd" and tok.decode(euro) == "€"
    for bad in (-1, tok.vocab_size, 10**9):
        with pytest.raises(ValueError, match=f"id {bad} is not in the vocabulary"):
            tok.decode([bad])
    char = T.CharTokenizer().train("abc")
    with pytest.raises(ValueError, match="'z'"):
        char.encode("abz")
    with pytest.raises(ValueError, match="id -1"):
        char.decode([-1])


def test_special_token_validation():
    with pytest.raises(ValueError, match="distinct"):
        T.BPETokenizer(special_tokens=["<a>", "<a>"])
    with pytest.raises(ValueError, match="non-empty"):
        T.CharTokenizer(special_tokens=[""])


# ----------------------------------------------------------------------------- efficiency
def test_incremental_training_touches_few_chunks(monkeypatch):
    """Work count, not time: recounting merges every distinct chunk once per merge."""
    from tinytorch_data.loaders import load_kjv_chars

    text = load_kjv_chars().train[:100_000]
    calls = 0
    real = T.merge_pair

    def counting(ids, pair, new_id):
        nonlocal calls
        calls += 1
        return real(ids, pair, new_id)

    monkeypatch.setattr(T, "merge_pair", counting)
    tok = T.BPETokenizer().train(text, vocab_size=512)
    distinct = len(set(T.pretokenize(text)))
    recounting = len(tok.merges) * distinct
    assert len(tok.merges) == 256
    assert calls * 20 < recounting, f"{calls} chunk merges vs {recounting} when recounting"


def test_kjv_character_vocabulary_covers_the_validation_text():
    from tinytorch_data.loaders import load_kjv_chars

    kjv = load_kjv_chars()
    tok = T.CharTokenizer(special_tokens=["<pad>"]).train(kjv.train)
    assert tok.vocab_size == 63 and "".join(sorted(tok.stoi)) == kjv.vocabulary
    assert tok.decode(tok.encode(kjv.validation)) == kjv.validation


# ----------------------------------------------------------------------------- files
def test_save_load_round_trip_both_kinds(tmp_path):
    text = "In the beginning God created the heaven and the earth. naïve 🙂 <|endoftext|>" * 4
    bpe = T.BPETokenizer(special_tokens=SPECIALS).train(text, 300)
    char = T.CharTokenizer(special_tokens=SPECIALS).train(text)
    for tok, name in ((bpe, "bpe.json"), (char, "char.json")):
        path = tmp_path / name
        tok.save(path)
        back = T.Tokenizer.load(path)
        assert type(back) is type(tok) and back.special_tokens == tok.special_tokens
        assert type(tok).load(path).encode(text) == tok.encode(text)
        assert back.encode(text) == tok.encode(text) and back.decode(tok.encode(text)) == text
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["format"] == "tinytorch-tokenizer" and data["type"] == tok.kind
    assert T.BPETokenizer.load(tmp_path / "bpe.json").merges == bpe.merges
    assert T.BPETokenizer.load(tmp_path / "bpe.json").split_pattern == T.SPLIT_PATTERN
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bpe.json", "char.json"], "no temp files"


def test_a_failed_save_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "tok.json"
    T.CharTokenizer().train("abc").save(path)
    before = path.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(T.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        T.CharTokenizer().train("xyz").save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]


def _bpe_file(tmp_path: Path) -> dict:
    tok = T.BPETokenizer(special_tokens=["<pad>"]).train("abab abab cdcd cdcd " * 3, 262)
    tok.save(tmp_path / "good.json")
    return json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))


BAD_BPE = [
    ("format", lambda d: d.update(format="gpt2"), "field 'format': expected 'tinytorch-tokenizer'"),
    ("version", lambda d: d.update(version=2), "field 'version': expected 1"),
    ("type", lambda d: d.update(type="wordpiece"), "field 'type': expected one of"),
    ("missing", lambda d: d.pop("merges"), "field 'merges': missing"),
    ("merges type", lambda d: d.update(merges={"a": 1}), "field 'merges': expected list"),
    ("merge shape", lambda d: d["merges"].__setitem__(1, [1, 2, 3]), "field 'merges[1]'"),
    ("merge id", lambda d: d["merges"].__setitem__(1, [1, 999]), "field 'merges[1]': ids must"),
    ("merge special", lambda d: d["merges"].__setitem__(0, [0, 98]), "field 'merges[0]'"),
    ("merge bool", lambda d: d["merges"].__setitem__(0, [True, 98]),
     "field 'merges[0]': expected an integer id"),
    ("duplicate", lambda d: d["merges"].__setitem__(1, d["merges"][0]), "merged twice"),
    ("vocab count", lambda d: d["vocab"].pop("3"), "field 'vocab': expected ids 0.."),
    ("vocab bytes", lambda d: d["vocab"].__setitem__("257", "ff"), "field 'vocab['257']'"),
    ("special ids", lambda d: d.update(special_tokens={"<pad>": 1}), "field 'special_tokens'"),
    ("special type", lambda d: d.update(special_tokens=["<pad>"]),
     "field 'special_tokens': expected dict"),
    ("pattern", lambda d: d.update(split_pattern="(unclosed"), "field 'split_pattern'"),
]


@pytest.mark.parametrize("name,edit,message", BAD_BPE, ids=[b[0] for b in BAD_BPE])
def test_malformed_bpe_file_gives_one_line_naming_file_and_field(tmp_path, name, edit, message):
    data = _bpe_file(tmp_path)
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(T.TokenizerFileError) as err:
        T.BPETokenizer.load(path)
    text = str(err.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text


@pytest.mark.parametrize("content,message", [
    (None, "file not found"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object at the top level"),
    (b"\xff\xfe", "cannot read"),
])
def test_unreadable_files_give_one_line(tmp_path, content, message):
    path = tmp_path / "tok.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(T.TokenizerFileError, match=message) as err:
        T.Tokenizer.load(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_malformed_char_file_and_wrong_kind(tmp_path):
    tok = T.CharTokenizer(special_tokens=["<pad>"]).train("abc")
    tok.save(tmp_path / "char.json")
    with pytest.raises(T.TokenizerFileError, match="field 'type': expected 'bpe'"):
        T.BPETokenizer.load(tmp_path / "char.json")
    data = json.loads((tmp_path / "char.json").read_text(encoding="utf-8"))
    for vocab, message in (({"ab": 1, "c": 2}, "field 'vocab['ab']': expected a single"),
                           ({"a": 1, "b": 3}, "field 'vocab': ids must be 1..2"),
                           ({"a": "1"}, "field 'vocab['a']': expected an integer id")):
        (tmp_path / "bad.json").write_text(json.dumps({**data, "vocab": vocab}), encoding="utf-8")
        with pytest.raises(T.TokenizerFileError, match=re.escape(message)):
            T.CharTokenizer.load(tmp_path / "bad.json")


# ----------------------------------------------------------------------------- helpers
_TRAINED: list[T.BPETokenizer] = []


def _trained_bpe() -> T.BPETokenizer:
    if not _TRAINED:
        text = ("In the beginning God created the heaven and the earth. " * 5
                + "naïve café € 🙂 日本語 " * 5 + "<|endoftext|>")
        _TRAINED.append(T.BPETokenizer(special_tokens=SPECIALS).train(text, 320))
    return _TRAINED[0]


def _specials_in(text: str) -> list[str]:
    alternation = "|".join(re.escape(s) for s in sorted(SPECIALS, key=len, reverse=True))
    return re.findall(alternation, text)


def _count_specials(text: str) -> int:
    return len(_specials_in(text))
