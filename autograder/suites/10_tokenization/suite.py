"""Hidden suite · module 10 (tokenization). Cases are probes; the trusted parent compares.

Texts are drawn from ``rng``: words over a small alphabet (so pairs repeat and BPE has
something to merge), separators, Unicode characters of 2, 3 and 4 UTF-8 bytes, and special
tokens at random places. Probes return merges as ``[a, b, id]`` lists, ids as lists of ints
and outcomes as exception names. Points sum to module 10's ``points`` (50).
"""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path

from autograder.suite import Suite, compare_values, outcome

suite = Suite(module="10_tokenization", version="2027.2")
case = suite.case
SPLIT_SPECIAL = suite.unit("split_special", "split_special")
PAIR_COUNTS = suite.unit("pair_counts", "pair_counts")
MERGE_PAIR = suite.unit("merge_pair", "merge_pair")
CHAR_TRAIN = suite.unit("CharTokenizer.train", "CharTokenizer.train", uses=(SPLIT_SPECIAL,))
CHAR_ENCODE = suite.unit("CharTokenizer.encode", "CharTokenizer.encode",
                         uses=(SPLIT_SPECIAL, CHAR_TRAIN))
CHAR_DECODE = suite.unit("CharTokenizer.decode", "CharTokenizer.decode",
                         uses=(SPLIT_SPECIAL, CHAR_TRAIN, CHAR_ENCODE))
BPE_TRAIN = suite.unit("BPETokenizer.train", "BPETokenizer.train",
                       uses=(SPLIT_SPECIAL, PAIR_COUNTS, MERGE_PAIR))
BPE_ENCODE = suite.unit("BPETokenizer.encode", "BPETokenizer.encode",
                        uses=(SPLIT_SPECIAL, MERGE_PAIR, BPE_TRAIN))
BPE_DECODE = suite.unit("BPETokenizer.decode", "BPETokenizer.decode",
                        uses=(SPLIT_SPECIAL, BPE_TRAIN, BPE_ENCODE))

SPECIALS = ["<pad>", "<|endoftext|>", "<|end|>"]
UNICODE = ["é", "ß", "ñ", "€", "日", "本", "🙂", "🚀", "Ω"]
SEPARATORS = [" ", " ", " ", " ", ", ", ".\n", "\n", "  ", "'s ", " 42 "]


def _tok(tt):
    return importlib.import_module(f"{tt.__name__}.tokenization")


def _words(rng, n_words, alphabet="abdeilnorst", unicode_share=0.0):
    """``n_words`` random words from a small lexicon joined by random separators."""
    lexicon = []
    for _ in range(12):
        length = int(rng.integers(1, 7))
        letters = [str(c) for c in rng.choice(list(alphabet), size=length)]
        if unicode_share and rng.random() < unicode_share:
            letters[int(rng.integers(0, length))] = str(rng.choice(UNICODE))
        lexicon.append("".join(letters))
    parts = []
    for _ in range(n_words):
        parts.append(lexicon[int(rng.integers(0, len(lexicon)))])
        parts.append(str(rng.choice(SEPARATORS)))
    return "".join(parts)


def _with_specials(rng, text, specials, count):
    """Insert ``count`` special tokens at random positions of ``text``."""
    cuts = sorted(int(c) for c in rng.integers(0, len(text) + 1, size=count))
    out, prev = [], 0
    for cut in cuts:
        out += [text[prev:cut], specials[int(rng.integers(0, len(specials)))]]
        prev = cut
    return "".join(out) + text[prev:]


def _merges(tok):
    return [[int(a), int(b), int(i)] for (a, b), i in tok.merges.items()]


def _ids(ids):
    return [int(i) for i in ids]


# ----------------------------------------------------------------------------- specials (6)
@case(unit=SPLIT_SPECIAL, points=3,
      hint="split_special: str pieces and int ids in order; re.escape every token.",
      stated={"split_special": (
                  "Cut ``text`` at every occurrence of a special token: ordinary pieces stay ``str``, each special token becomes its ``int`` id.",
                  "Empty pieces are left out",
                  '``re.escape`` matters: ``<|endoftext|>`` contains ``|``, which a regex would read as "or".',
              )})
def split_special_pieces_and_ids(tt, rng):
    m = _tok(tt)
    table = {tok: i for i, tok in enumerate(SPECIALS)}
    texts = [_with_specials(rng, _words(rng, 8), SPECIALS, int(rng.integers(1, 5)))
             for _ in range(4)]
    texts.append(_words(rng, 5) + "a|b<|endoftext")
    return [list(m.split_special(t, table)) for t in texts]


@case(unit=SPLIT_SPECIAL, points=3,
      hint="split_special: the longest special token wins where several start; no empty pieces; "
           "no special tokens -> [text]; empty text -> [].",
      stated={"split_special": "Scan from left to right; at a position where several special tokens start, the longest wins. Empty pieces are left out, and with no special tokens the result is ``[text]`` (or ``[]`` for an empty text)."})
def split_special_longest_match_and_edges(tt, rng):
    m = _tok(tt)
    short, long_ = "<e", "<eos>"
    word = _words(rng, 2)
    cases = [f"{long_}{short}{word}{long_}", f"{short}os{long_}{long_}", f"{word}<eo{short}",
             "", word]
    out = []
    for table in ({short: 0, long_: 1}, {long_: 0, short: 1}):
        out.append([list(m.split_special(t, table)) for t in cases])
    out.append(list(m.split_special(word, {})))
    out.append(list(m.split_special("", {})))
    return out


# ----------------------------------------------------------------------------- pairs (7)
@case(unit=PAIR_COUNTS, points=3,
      hint="pair_counts counts every adjacent position: [7, 7, 7] holds (7, 7) twice.",
      stated={"pair_counts": (
                  "How often each adjacent pair occurs in ``ids``: ``{(a, b): count}``.",
                  "Pairs are counted at every position, so overlapping pairs count twice",
                  "a list of fewer than two ids has no pairs: return ``{}``. ``ids`` may be a tuple or a list",
              )})
def pair_counts_every_position(tt, rng):
    m = _tok(tt)
    out = []
    for size in (0, 1, 2, 30, 200):
        ids = [int(i) for i in rng.integers(0, 5, size=size)]
        counts = m.pair_counts(ids)
        out.append(sorted([int(a), int(b), int(n)] for (a, b), n in counts.items()))
    out.append(sorted([int(a), int(b), int(n)] for (a, b), n in m.pair_counts((3, 3, 3, 3)).items()))
    return out


@case(unit=MERGE_PAIR, points=4,
      hint="merge_pair scans left to right without overlap and returns a new list.",
      stated={"merge_pair": (
                  "Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, scanning left to right.",
                  "Occurrences do not overlap: in ``[7, 7, 7]`` the pair ``(7, 7)`` is replaced once, at the left, giving ``[new_id, 7]``.",
                  "Return a new list (``ids`` itself is not changed).",
                  "``ids`` may be a list or a tuple.",
              )})
def merge_pair_left_to_right(tt, rng):
    m = _tok(tt)
    out = []
    for size in (0, 1, 2, 25, 120):
        ids = [int(i) for i in rng.integers(0, 4, size=size)]
        original = list(ids)
        pair = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
        merged = m.merge_pair(ids, pair, 999)
        out.append([_ids(merged), ids == original])
    out.append(_ids(m.merge_pair([5, 5, 5, 5, 5], (5, 5), 9)))
    out.append(_ids(m.merge_pair((1, 2, 1, 2, 3), (2, 3), 9)))
    return out


# ----------------------------------------------------------------------------- chars (10)
@case(unit=CHAR_TRAIN, points=3,
      hint="Special tokens keep 0..k-1, characters follow in sorted order; special tokens in the "
           "training text are not characters.",
      stated={"CharTokenizer.train": (
                  "Ids: the ``k`` special tokens keep ``0 .. k-1``; the distinct characters of ``text`` get ``k, k+1, ...`` in code-point order (``sorted``). Occurrences of special tokens in ``text`` are not split into characters. Training again replaces the vocabulary.",
                  "``self.itos``: the special tokens' ids and strings, plus the inverse of ``self.stoi``.",
              ),
              "CharTokenizer": "stoi: character -> id, for the characters only.",
              "CharTokenizer.vocab_size": "Special tokens plus distinct characters."})
def char_train_vocabulary(tt, rng):
    m = _tok(tt)
    specials = SPECIALS[: int(rng.integers(0, 4))]
    text = _with_specials(rng, _words(rng, 30, unicode_share=0.5), SPECIALS[:1] or [" "], 2)
    tok = m.CharTokenizer(special_tokens=specials).train(text)
    first = [sorted([str(ch), int(i)] for ch, i in tok.stoi.items()), int(tok.vocab_size),
             sorted([int(i), str(s)] for i, s in tok.itos.items())]
    tok.train(_words(rng, 5, alphabet="xyz"))
    return [first, sorted([str(ch), int(i)] for ch, i in tok.stoi.items()), int(tok.vocab_size)]


@case(unit=CHAR_ENCODE, points=3,
      hint="encode: one id per character, one per special token; allow_special=False treats "
           "special strings as characters.",
      stated={"CharTokenizer.encode": (
                  "With ``allow_special=True`` (the default) every occurrence of a special token's string becomes its id; with ``allow_special=False`` special strings are ordinary text",
                  "an ``int`` piece is appended as it is; a ``str`` piece adds ``self.stoi[ch]`` for each character.",
              ),
              "split_special": "(or ``[]`` for an empty text)"})
def char_encode_with_and_without_specials(tt, rng):
    m = _tok(tt)
    base = _words(rng, 40, alphabet="abcdefghij<>|")
    letters_of_specials = "".join(sorted(set("".join(SPECIALS))))
    tok = m.CharTokenizer(special_tokens=SPECIALS).train(
        base + letters_of_specials + "abcdefghij" + "".join(SEPARATORS))
    text = _with_specials(rng, _words(rng, 15, alphabet="abcdefghij"), SPECIALS, 3)
    return [_ids(tok.encode(text)), _ids(tok.encode(text, allow_special=False)),
            _ids(tok.encode(""))]


@case(unit=CHAR_DECODE, points=2, hint="decode joins itos strings; decode(encode(t)) == t exactly.",
      stated={"CharTokenizer.decode": (
                  "``decode(encode(text)) == text`` for every text of known characters.",
                  "join ``self.itos[i]`` over the ids",
              )})
def char_decode_and_round_trip(tt, rng):
    m = _tok(tt)
    text = _with_specials(rng, _words(rng, 40, unicode_share=0.7), SPECIALS, 3)
    tok = m.CharTokenizer(special_tokens=SPECIALS).train(text)
    ids = [int(i) for i in rng.integers(0, tok.vocab_size, size=30)]
    return [tok.decode(ids), tok.decode(tok.encode(text)) == text, tok.decode([])]


@case(unit=CHAR_ENCODE, points=1,
      hint="CharTokenizer.encode: an unknown character raises ValueError, and so does a special "
           "token's text with allow_special=False when its characters are unknown.",
      stated={"CharTokenizer.encode": (
                  "with ``allow_special=False`` special strings are ordinary text",
                  "a character the tokenizer never saw has no id: raise ``ValueError``",
              )})
def char_encode_errors_are_value_errors(tt, rng):
    m = _tok(tt)
    trained = _words(rng, 10, alphabet="abc")
    tok = m.CharTokenizer(special_tokens=["<pad>"]).train(trained)
    unknown = str(rng.choice(list("xyzXYZ#@")))
    known = "".join(str(c) for c in rng.choice(sorted(set(trained)), size=12))
    return [outcome(tok.encode, "ab" + unknown),
            outcome(tok.encode, "<pad>", allow_special=False),
            _ids(tok.encode(known))]  # the valid text next to the invalid ones


@case(unit=CHAR_DECODE, points=1,
      hint="CharTokenizer.decode: ids outside 0..vocab_size-1 (including -1) raise ValueError.",
      stated={"CharTokenizer.decode": "an id outside ``0 .. vocab_size-1`` must raise ``ValueError`` naming the id; ``-1`` must not silently wrap around to the last entry"})
def char_decode_errors_are_value_errors(tt, rng):
    m = _tok(tt)
    trained = _words(rng, 10, alphabet="abc")
    tok = m.CharTokenizer(special_tokens=["<pad>"]).train(trained)
    ids = [int(i) for i in rng.integers(0, tok.vocab_size, size=8)]
    return [outcome(tok.decode, [-1]), outcome(tok.decode, [tok.vocab_size]),
            outcome(tok.decode, [0, 1]), tok.decode(ids)]


# ----------------------------------------------------------------------------- BPE train (14)
@case(unit=BPE_TRAIN, points=4,
      hint="BPETokenizer.train: merge the most frequent pair; ties go to the smallest pair (a, "
           "b); merge ids count up from k + 256.",
      stated={"BPETokenizer.train": (
                  "takes the pair with the **highest count**, breaking ties by the **smallest pair** (``(a, b) < (c, d)`` as tuples), and gives it the next id.",
                  "Training stops at ``vocab_size`` ids, or earlier when the best pair occurs fewer than ``min_frequency`` times (default 2: a merge that saves nothing is not learned).",
              ),
              "BPETokenizer": (
                  "then one id per merge, in the order training learned them.",
                  "split_pattern: the pre-tokenizer regex (``None``: the text is one chunk).",
              ),
              "BPETokenizer.vocab_size": "Special tokens + 256 bytes + merges."})
def bpe_train_one_chunk(tt, rng):
    m = _tok(tt)
    out = []
    for alphabet, n in (("ab", 30), ("abc", 60), ("abcd ", 80)):
        text = "".join(str(c) for c in rng.choice(list(alphabet), size=n))
        vocab_size = 256 + int(rng.integers(3, 12))
        tok = m.BPETokenizer(split_pattern=None).train(text, vocab_size=vocab_size)
        out.append([_merges(tok), int(tok.vocab_size)])
    return out


@case(unit=BPE_TRAIN, points=4,
      hint="BPETokenizer.train: pre-tokenize each piece (merges never cross chunks) and weight "
           "each distinct chunk by how often it occurs.",
      stated={"BPETokenizer.train": (
                  "the rest is pre-tokenized with ``pretokenize(piece, self.split_pattern)``, and each chunk becomes its UTF-8 bytes as ids ``byte_offset + b``. Merges never cross chunks.",
                  "Each step counts every adjacent pair over all chunks (a chunk that occurs ``f`` times counts ``f`` times)",
                  "At the end call ``self._build_vocab()``.",
              ),
              "BPETokenizer": "vocab: ``{id: bytes}`` for every id (built from ``merges`` by ``_build_vocab``).",
              "test:test_bpe_learns_the_hand_computed_merges": "min_frequency=2"})
def bpe_train_words_with_frequencies(tt, rng):
    m = _tok(tt)
    text = _words(rng, 400)
    tok = m.BPETokenizer().train(text, vocab_size=256 + int(rng.integers(20, 60)))
    vocab = [tok.vocab[i].hex() for i in range(tok.vocab_size)]
    return [_merges(tok), vocab]


@case(unit=BPE_TRAIN, points=3,
      hint="Special tokens take ids 0..k-1 (bytes shift to k + b) and are cut out of the training "
           "text, never merged.",
      stated={"BPETokenizer.train": "Special-token strings are cut out first (``split_special``) and never merged",
              "BPETokenizer": "Ids: ``k`` special tokens ``0 .. k-1``; the 256 byte values ``k .. k+255`` (byte ``b`` is ``k + b``); then one id per merge",
              "BPETokenizer._build_vocab": "Rebuild ``vocab`` (id -> bytes) from the special tokens, the bytes and ``merges``"})
def bpe_train_with_special_tokens(tt, rng):
    m = _tok(tt)
    specials = SPECIALS[: int(rng.integers(1, 4))]
    text = _with_specials(rng, _words(rng, 200), specials, 25)
    tok = m.BPETokenizer(special_tokens=specials).train(text, vocab_size=300)
    return [_merges(tok), int(tok.vocab_size), tok.vocab[0].hex()]


@case(unit=BPE_TRAIN, points=3,
      hint="Stop when the best pair occurs fewer than min_frequency times; vocab_size < k + 256 "
           "is a ValueError; training again starts afresh.",
      stated={"BPETokenizer.train": (
                  "``vocab_size`` below ``k + 256`` is a ``ValueError``.",
                  "or earlier when the best pair occurs fewer than ``min_frequency`` times",
                  "Start ``self.merges`` empty: training again replaces what was learned.",
              )})
def bpe_train_stops_and_restarts(tt, rng):
    m = _tok(tt)
    text = _words(rng, 60, unicode_share=0.6)
    tok = m.BPETokenizer(special_tokens=["<pad>"])
    out = [outcome(tok.train, text, vocab_size=256)]
    for min_frequency in (1, 2, 5):
        tok.train(text, vocab_size=400, min_frequency=min_frequency)
        out.append(_merges(tok))
    tok.train(_words(rng, 10, alphabet="xy"), vocab_size=260)
    out.append(_merges(tok))
    return out


# ----------------------------------------------------------------------------- BPE encode (8)
@case(unit=BPE_ENCODE, points=4,
      hint="Encode chunk by chunk; in each, merge the pair with the LOWEST merge id first, until "
           "no pair has a merge.",
      stated={"BPETokenizer.encode": (
                  "A chunk starts as its UTF-8 bytes (ids ``byte_offset + b``); then, repeatedly, among the adjacent pairs that have a merge, the one learned **first** (lowest new id) is merged everywhere in the chunk, until no pair has a merge.",
                  "Each ``str`` piece: ``pretokenize(piece, self.split_pattern)``",
              ),
              "split_special": "(or ``[]`` for an empty text)"})
def bpe_encode_unseen_text(tt, rng):
    m = _tok(tt)
    tok = m.BPETokenizer().train(_words(rng, 300), vocab_size=256 + int(rng.integers(30, 80)))
    fresh = _words(rng, 80, unicode_share=0.3)
    return [_ids(tok.encode(fresh)), _ids(tok.encode(""))]


@case(unit=BPE_ENCODE, points=2,
      hint="BPETokenizer.encode: merge rank, not frequency or position: the merge learned first "
           "is applied first.",
      stated={"BPETokenizer.encode": (
                  "the one learned **first** (lowest new id) is merged everywhere in the chunk, until no pair has a merge.",
                  '``pair = min(pair_counts(ids), key=lambda p: self.merges.get(p, float("inf")))``; stop if ``pair`` is not in ``self.merges``; else ``ids = merge_pair(ids, pair, self.merges[pair])``.',
              )})
def bpe_encode_uses_merge_rank(tt, rng):
    m = _tok(tt)
    tok = m.BPETokenizer(split_pattern=None)
    a, b, c = (int(x) for x in rng.choice(range(97, 123), size=3, replace=False))
    tok.merges = {(b, c): 256, (a, b): 257, (256, a): 258, (a, 256): 259}
    tok._build_vocab()
    words = [bytes([a, b, c]).decode(), bytes([b, c, a, b, c]).decode(),
             bytes([a, b, c, a, b]).decode(), bytes([a, b, a, b, c, c]).decode()]
    words += [bytes(int(x) for x in rng.choice([a, b, c], size=int(rng.integers(4, 10))))
              .decode() for _ in range(4)]
    return [_ids(tok.encode(w)) for w in words]


@case(unit=BPE_ENCODE, points=2,
      hint="BPETokenizer.encode: special tokens are one id when allowed; with allow_special=False "
           "they are ordinary bytes.",
      stated={"BPETokenizer.encode": (
                  "The ids of ``text``: special tokens atomically, every other chunk by its merges.",
                  "``split_special(text, self.special_tokens if allow_special else {})``; an ``int`` piece is one id.",
                  "With ``allow_special=False`` the text ``<eos>`` is just 5 characters of bytes.",
              )})
def bpe_encode_special_tokens(tt, rng):
    m = _tok(tt)
    tok = m.BPETokenizer(special_tokens=SPECIALS)
    tok.train(_with_specials(rng, _words(rng, 150), SPECIALS, 10), vocab_size=290)
    text = _with_specials(rng, _words(rng, 20), SPECIALS, 4)
    return [_ids(tok.encode(text)), _ids(tok.encode(text, allow_special=False))]


# ----------------------------------------------------------------------------- BPE decode (5)
@case(unit=BPE_DECODE, points=3,
      hint="Join the bytes of all ids, then decode once as UTF-8 with errors='replace'.",
      stated={"BPETokenizer.decode": (
                  'An id sequence that ends inside a multi-byte character (e.g. generated by a model) decodes with U+FFFD for the broken bytes (``errors="replace"``) instead of failing.',
                  '``b"".join(self.vocab[int(i)] for i in ids).decode("utf-8", errors="replace")``',
                  "decode the joined bytes once, not each token",
              )})
def bpe_decode_ids(tt, rng):
    m = _tok(tt)
    tok = m.BPETokenizer(special_tokens=SPECIALS[:2])
    tok.train(_words(rng, 150, unicode_share=0.8), vocab_size=300)
    ids = [int(i) for i in rng.integers(0, tok.vocab_size, size=40)]
    euro = _ids(tok.encode("€"))
    return [tok.decode(ids), tok.decode(euro[:1]), tok.decode(euro), tok.decode([])]


#: Characters of a saved tokenizer file the parent reads (a file of this case is ~10 KB).
MAX_FILE_CHARS = 200_000
#: The pre-tokenizer of the files the suite writes itself (any regex is a valid field value).
FILE_SPLIT = r" ?[a-z]+| ?[^a-z\s]+|\s+"


def _suite_file(rng, specials, n_merges):
    """A BPE tokenizer file the suite writes itself, in the documented format: random merges
    of the lexicon's letters and of earlier merges, with their vocabulary. No tokenizer the
    submission trained ever held these merges, so only a ``load`` that reads the file can
    encode with them."""
    k = len(specials)
    base = k + 256
    vocab = {i: tok.encode("utf-8") for i, tok in enumerate(specials)}
    vocab.update({k + b: bytes([b]) for b in range(256)})
    pool = [k + ord(c) for c in "abdeilnorst "]
    merges: list[list[int]] = []
    seen: set[tuple[int, int]] = set()
    while len(merges) < n_merges:
        a, b = int(rng.choice(pool)), int(rng.choice(pool))
        if (a, b) in seen:
            continue
        seen.add((a, b))
        idx = base + len(merges)
        merges.append([a, b])
        vocab[idx] = vocab[a] + vocab[b]
        pool.append(idx)
    return {"format": "tinytorch-tokenizer", "version": 1, "type": "bpe",
            "special_tokens": {tok: i for i, tok in enumerate(specials)},
            "split_pattern": FILE_SPLIT, "merges": merges,
            "vocab": {str(i): vocab[i].hex() for i in range(base + n_merges)}}


def _saved_file(text):
    """The parent's reading of a saved tokenizer file: its JSON, or why it is not one."""
    if text is None:
        return None, "save wrote no file at the path it was given"
    if not isinstance(text, str):
        return None, f"no file text came back (got {type(text).__name__})"
    if len(text) > MAX_FILE_CHARS:
        return None, f"the saved file has {len(text)} characters (at most {MAX_FILE_CHARS})"
    try:
        return json.loads(text, parse_constant=_no_constant), ""
    except (ValueError, RecursionError) as exc:
        return None, f"the saved file is not JSON ({str(exc)[:100]})"


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _round_trip_check(got, expected):
    """The parent reads the file the submission's ``save`` wrote (its text came back) and
    requires it to hold the reference's tokenizer field for field; every other part is compared
    with the reference's answer as usual."""
    if not isinstance(got, list) or len(got) != len(expected):
        return compare_values(got, expected, where="result")
    mine, problem = _saved_file(got[1])
    if problem:
        return False, f"result[1]: {problem}; save must write the tokenizer to the path it is given"
    ref, _ = _saved_file(expected[1])
    if mine != ref:
        fields = sorted(k for k in set(mine) | set(ref) if mine.get(k) != ref.get(k)) \
            if isinstance(mine, dict) and isinstance(ref, dict) else ["the whole file"]
        return False, (f"result[1]: the file save wrote does not hold the tokenizer (fields "
                       f"{fields[:4]} differ); save writes to_dict() as JSON to the path")
    return compare_values(got[:1] + got[2:], expected[:1] + expected[2:], where="result")


@case(unit=BPE_DECODE, points=2, check=_round_trip_check,
      hint="decode(encode(t)) == t for every Unicode string; save writes the tokenizer to the "
           "file (the grader reads that file) and load reads one back; unknown ids raise "
           "ValueError.",
      stated={"BPETokenizer.decode": (
                  "``decode(encode(text)) == text`` for every string.",
                  "after checking that every id is in ``self.vocab``.",
                  "An unknown id is a ``ValueError`` naming it.",
              ),
              "Tokenizer.save": "Write the tokenizer to ``path`` as UTF-8 JSON",
              "Tokenizer.load": "``Tokenizer.load`` returns whichever kind the file holds",
              "test:test_saved_tokenizers_load_and_encode_identically": "the loaded tokenizer encodes differently"})
def bpe_round_trip_and_errors(tt, rng):
    m = _tok(tt)
    tok = m.BPETokenizer(special_tokens=["<|endoftext|>"])
    tok.train(_words(rng, 150, unicode_share=0.5), vocab_size=280)
    texts = [_words(rng, 30, alphabet="abcXYZ019_-+!?", unicode_share=1.0),
             "".join(str(c) for c in rng.choice(UNICODE + [" ", "\n", "\t", "a"], size=50)),
             _words(rng, 40)]
    round_trip = [tok.decode(tok.encode(t)) == t for t in texts]
    with tempfile.TemporaryDirectory() as tmp:
        tok.save(Path(tmp) / "tok.json")
        # the file itself goes to the parent, which checks what it holds
        path = Path(tmp) / "tok.json"
        saved = path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None
        other = Path(tmp) / "other.json"
        other.write_text(json.dumps(_suite_file(rng, SPECIALS[:2], int(rng.integers(20, 40)))),
                         encoding="utf-8")
        loaded = m.Tokenizer.load(other)
        loaded_ids = [_ids(loaded.encode(t)) for t in texts[1:]]
    return [round_trip, saved, loaded_ids, outcome(tok.decode, [tok.vocab_size]),
            outcome(tok.decode, [-1]), [tok.decode(tok.encode(t)) for t in texts]]
