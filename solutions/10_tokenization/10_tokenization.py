# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Module 10 · Tokenization
#
# A language model never sees text. It sees a sequence of integers, each one a row of an
# embedding table (module 11), and it predicts the next integer. A **tokenizer** is the
# contract between the two worlds: `encode(text) -> list[int]` and `decode(ids) -> str`. How
# you cut text into tokens decides how long every sequence is, how big the embedding table
# and the output layer are, which strings the model can represent at all, and how much of
# the model's compute a sentence costs. In this module you build the two tokenizers the
# course uses: a **character** tokenizer (the 2017 transformer milestone trains on one) and a
# **byte-level BPE** tokenizer, the algorithm behind GPT-2, GPT-4 and most models since.
#
# ## Learning objectives
#
# 1. explain how text becomes numbers: Unicode code points, **UTF-8 bytes**, and why a
#    byte-level vocabulary can encode *every* string with no unknown token;
# 2. implement **special tokens** (`<pad>`, `<|endoftext|>`) with reserved ids that are
#    matched atomically, and the option to treat them as plain text;
# 3. implement a **character tokenizer** with an exact round trip;
# 4. implement **byte-pair encoding**: training by repeated merges of the most frequent pair
#    (deterministic tie-breaking), with *incremental* pair counts, and encoding by merge rank;
# 5. save and load a tokenizer as **plain JSON** that a malformed file cannot silently break;
# 6. **measure** the trade-off between vocabulary size, sequence length, embedding memory and
#    tokenizer throughput.
#
# ## How to work through this notebook
#
# Fill in the functions that raise `NotImplementedError` (their docstrings give what /
# APPROACH / EXAMPLE / HINT) and run each `grader.check(...)`. Cells starting with `#| export`
# become `tinytorch/tokenization.py` (`python export.py 10`). This module needs nothing from
# earlier modules: tokenizers are plain Python over strings, bytes and dicts.

# %%
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

# %% [markdown]
# ## 1. Text is already numbers
#
# Unicode gives every character a **code point**: `ord("a") == 97`, `ord("é") == 233`,
# `ord("€") == 8364`, `ord("🙂") == 128578`. There are about 150,000 assigned code points, far too
# many for one embedding row each, and most would never be seen in training. Computers store
# text as **UTF-8 bytes**: ASCII characters take one byte, accented Latin letters two, most
# Chinese and Japanese characters three, emoji four.
#
# ```
#   "é€🙂"  ──encode("utf-8")──►  c3 a9 | e2 82 ac | f0 9f 99 82      (2 + 3 + 4 = 9 bytes)
#    3 code points                     9 values in 0..255
# ```
#
# Three ways to turn text into ids:
#
# | unit | vocabulary | tokens per English character | unknown input |
# |---|---|---|---|
# | character | the characters seen in training (~60 for the KJV text) | 1 | a new character has no id |
# | byte | exactly 256 | 1 (more for non-ASCII) | impossible: every string is bytes |
# | **byte-level BPE** | 256 bytes + learned merges (GPT-2: 50,257) | ~0.25 | impossible |
#
# Byte-level BPE starts from the 256 bytes, so it can encode anything, and then *learns*
# frequent byte sequences (" the", "ing", "Lord") as single tokens, so common text gets short.

# %%
for s in ["a", "é", "€", "🙂", "日本"]:
    print(f"{s!r:6} code points {[ord(c) for c in s]!s:16} UTF-8 bytes {list(s.encode('utf-8'))}")

# %% [markdown]
# Every tokenizer in this module shares a few module-level pieces: the imports and the
# pre-tokenizer pattern of section 4.

# %%
#| export
"""Module 10 · Tokenization — depends on: nothing (standard library); used by: transformers.

Text to integer ids and back: ``CharTokenizer`` (one id per character) and ``BPETokenizer``
(byte-level byte-pair encoding, as GPT-2), special tokens with reserved ids, and save/load as
plain JSON.
"""

from __future__ import annotations

import heapq
import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

SPLIT_PATTERN = r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|_+|\s+(?!\S)|\s+"
"""GPT-2's pre-tokenizer written for Python's ``re``: contractions, words with an optional
leading space, numbers, punctuation runs, and whitespace (a run of spaces leaves its last
space to the next word)."""

FILE_FORMAT = "tinytorch-tokenizer"
FILE_VERSION = 1

# %% [markdown]
# ## 2. Special tokens
#
# Models need a few tokens that are not text: `<|endoftext|>` separates documents (GPT-2
# learned to start a fresh topic after it), `<pad>` fills a batch of short sequences up to the
# longest one (module 11's `Embedding(padding_idx=...)` ignores it), `<bos>`/`<eos>` mark
# where a sequence starts or ends. Three rules make them work:
#
# 1. **Reserved ids.** The `k` special tokens get ids `0 .. k-1`, in the order you list them,
#    *before* anything is learned from text. Their ids never depend on the training text,
#    so code that says "pad with id 0" stays right when you retrain on other data.
# 2. **Atomic.** In `encode`, the string `<|endoftext|>` becomes ONE id, never the 13 ids
#    of its characters, and training never learns merges inside it.
# 3. **Optional.** Text typed by a user may contain the string `<|endoftext|>`; if it became
#    the real token, a user could end a document early or fake a conversation turn
#    ("prompt injection" via special tokens). `encode(text, allow_special=False)` treats
#    such strings as ordinary characters.
#
# Both tokenizers first cut the text at special tokens, with `split_special`:
#
# ```
#   split_special("hi<|endoftext|>yo<pad>", {"<pad>": 0, "<|endoftext|>": 1})
#     -> ["hi", 1, "yo", 0]           text pieces stay str, special tokens become their id
# ```
#
# When two special tokens start at the same position (`<a` and `<ab>`), the **longest** wins:
# that is what a reader means, and it makes the result independent of the order you listed
# the tokens in.

# %%
#| export
def split_special(text: str, special_tokens: dict[str, int]) -> list[str | int]:
    """Cut ``text`` at every occurrence of a special token: ordinary pieces stay ``str``, each
    special token becomes its ``int`` id.

    Scan from left to right; at a position where several special tokens start, the longest
    wins. Empty pieces are left out, and with no special tokens the result is ``[text]`` (or
    ``[]`` for an empty text).

    APPROACH:
        1. No special tokens (or empty text): return ``[text] if text else []``.
        2. Sort the special tokens by length, longest first, and join them, each passed
           through ``re.escape``, into one pattern ``a|b|c``.
        3. Walk ``re.finditer(pattern, text)``: append the text before each match (if not
           empty), then ``special_tokens[match.group()]``; at the end append the rest.

    EXAMPLE:
        >>> split_special("hi<|endoftext|>yo<pad>", {"<pad>": 0, "<|endoftext|>": 1})
        ['hi', 1, 'yo', 0]
        >>> split_special("<a><ab>", {"<a": 0, "<ab>": 1})
        [0, '>', 1]

    HINT: ``re.escape`` matters: ``<|endoftext|>`` contains ``|``, which a regex would read
    as "or". Python's ``re`` tries alternatives in order, so longest-first ordering is what
    makes ``<ab>`` win over its prefix ``<a`` where both start.
    """
    # BEGIN SOLUTION NO PROMPT
    if not special_tokens or not text:
        return [text] if text else []
    ordered = sorted(special_tokens, key=len, reverse=True)
    pattern = "|".join(re.escape(tok) for tok in ordered)
    out: list[str | int] = []
    pos = 0
    for match in re.finditer(pattern, text):
        if match.start() > pos:
            out.append(text[pos:match.start()])
        out.append(special_tokens[match.group()])
        pos = match.end()
    if pos < len(text):
        out.append(text[pos:])
    return out
    # END SOLUTION
    raise NotImplementedError("module 10: implement split_special (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: special
# points: 0

# %% [markdown]
# ### Check: special tokens

# %% [raw]
# # BEGIN TESTS

# %%
def test_split_special_cuts_at_special_tokens(split_special):
    specials = {"<pad>": 0, "<|endoftext|>": 1}
    got = split_special("hi<|endoftext|>yo<pad>", specials)
    assert got == ["hi", 1, "yo", 0], (
        f"expected ['hi', 1, 'yo', 0], got {got!r}: text pieces stay strings and each special "
        "token becomes its id")
    got = split_special("a|b", specials)
    assert got == ["a|b"], (
        f"'a|b' holds no special token but came back as {got!r}: pass each token through "
        "re.escape, or the '|' inside <|endoftext|> means 'or' in the pattern")
    got = split_special("<pad><pad>x", specials)
    assert got == [0, 0, "x"], f"adjacent special tokens: expected [0, 0, 'x'], got {got!r}"
    got = split_special("", specials)
    assert got == [], (
        f"an empty text has no pieces: expected [], got {got!r} (an empty string piece would "
        "become an empty chunk to encode)")
    got = split_special("plain", {})
    assert got == ["plain"], (
        f"no special tokens: the text is one piece, expected ['plain'], got {got!r}")
    got = split_special("<a><ab>", {"<a": 0, "<ab>": 1})
    assert got == [0, ">", 1], (
        f"where '<a' and '<ab>' both start, the longest wins: expected [0, '>', 1], got {got!r}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 3. A character tokenizer
#
# The simplest tokenizer gives every distinct character of the training text an id:
#
# ```
#   special tokens        characters of the training text, in code-point order (sorted)
#   ┌──────┬───────┐┌────┬────┬─────┬─────┬─────┐
#   │<pad> │<eos>  ││ \n │ ' '│  A  │ ... │  z  │
#   │  0   │   1   ││ 2  │ 3  │  4  │     │ 63  │      vocab_size = 2 + 62 = 64 for the KJV text
#   └──────┴───────┘└────┴────┴─────┴─────┴─────┘
#   stoi: {"\n": 2, " ": 3, ...}        itos: {0: "<pad>", 1: "<eos>", 2: "\n", ...}
# ```
#
# Sorting the characters makes the ids a function of the *set* of characters only, so two
# people who train on the same text get the same ids (a model trained by one can be used by
# the other). The round trip is exact: `decode(encode(text)) == text` for every text made of
# known characters. A character never seen in training has no id; `encode` must say so
# clearly (a `ValueError` naming the character) instead of guessing.
#
# First the provided base class that both tokenizers share: it stores the special tokens and
# knows how to `save` and `load` a tokenizer (section 6 explains the file format).

# %%
#| export
class TokenizerFileError(ValueError):
    """A tokenizer file is missing or malformed; the message is one line naming file and field."""


class Tokenizer:
    """What every tokenizer shares (provided): special tokens with reserved ids, save and load.

    Special tokens (e.g. ``"<pad>"``, ``"<|endoftext|>"``) take the ids ``0 .. k-1`` in the
    order given, before anything learned from text, so their ids never depend on training.

    Args:
        special_tokens: distinct, non-empty strings.
    """

    kind = ""

    def __init__(self, special_tokens: Iterable[str] = ()) -> None:
        tokens = list(special_tokens)
        for tok in tokens:
            if not isinstance(tok, str) or not tok:
                raise ValueError(f"special tokens must be non-empty strings, got {tok!r}")
        if len(set(tokens)) != len(tokens):
            raise ValueError(f"special tokens must be distinct, got {tokens!r}")
        self.special_tokens: dict[str, int] = {tok: i for i, tok in enumerate(tokens)}

    @property
    def vocab_size(self) -> int:
        """Number of ids: special tokens plus what the tokenizer learned."""
        raise NotImplementedError(f"{type(self).__name__} has no vocab_size")

    # ------------------------------------------------------------------ provided: files
    def to_dict(self) -> dict[str, Any]:
        """The tokenizer as plain JSON data (see :meth:`save`)."""
        return {"format": FILE_FORMAT, "version": FILE_VERSION, "type": self.kind,
                "special_tokens": dict(self.special_tokens)}

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer to ``path`` as UTF-8 JSON, one top-level field a line (provided).

        The file is written next to ``path`` under a temporary name and renamed into place, so
        an interrupted save never leaves a half-written file.
        """
        path = Path(path)
        fields = [f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
                  for key, value in self.to_dict().items()]
        text = "{\n" + ",\n".join(fields) + "\n}\n"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Tokenizer:
        """Read a file written by :meth:`save` (provided).

        ``Tokenizer.load`` returns whichever kind the file holds; ``BPETokenizer.load`` and
        ``CharTokenizer.load`` insist on their own kind.

        Raises:
            TokenizerFileError: missing file, invalid JSON, or a field with a wrong value; one
                line naming the file and the field.
        """
        path = Path(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TokenizerFileError(f"{path}: file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TokenizerFileError(f"{path}: cannot read ({_one_line(exc)})") from None
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TokenizerFileError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                                     f"column {exc.colno})") from None
        reader = _Reader(path, data)
        reader.expect("format", FILE_FORMAT)
        reader.expect("version", FILE_VERSION)
        kinds: dict[str, Any] = {sub.kind: sub for sub in Tokenizer.__subclasses__()}
        kind = reader.get("type", str)
        if kind not in kinds:
            reader.fail("type", f"expected one of {sorted(kinds)}, got {kind!r}")
        if cls is not Tokenizer and kind != cls.kind:
            reader.fail("type", f"expected {cls.kind!r} for {cls.__name__}, got {kind!r}")
        return kinds[kind]._from_dict(reader)

    @classmethod
    def _from_dict(cls, reader: _Reader) -> Tokenizer:
        raise NotImplementedError(f"{cls.__name__} cannot be loaded")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(vocab_size={self.vocab_size}, "
                f"special_tokens={list(self.special_tokens)})")


def _one_line(value: Any, limit: int = 60) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Reader:
    """Field access on a loaded JSON document with one-line errors naming file and field."""

    def __init__(self, path: Path, data: Any) -> None:
        self.path = path
        if not isinstance(data, dict):
            raise TokenizerFileError(f"{path}: expected a JSON object at the top level, got "
                                     f"{type(data).__name__}")
        self.data = data

    def fail(self, field: str, problem: str) -> None:
        raise TokenizerFileError(f"{self.path}: field '{field}': {_one_line(problem, 120)}")

    def get(self, field: str, kind: type | tuple[type, ...]) -> Any:
        if field not in self.data:
            self.fail(field, "missing")
        value = self.data[field]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            self.fail(field, f"expected {names}, got {type(value).__name__}")
        return value

    def expect(self, field: str, wanted: Any) -> None:
        value = self.get(field, type(wanted))
        if value != wanted:
            self.fail(field, f"expected {wanted!r}, got {value!r}")

    def integer(self, field: str, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(field, f"expected an integer id, got {type(value).__name__}")
        return int(value)

    def special_tokens(self) -> list[str]:
        table = self.get("special_tokens", dict)
        order: dict[int, str] = {}
        for tok, idx in table.items():
            where = f"special_tokens[{tok!r}]"
            if not tok:
                self.fail(where, "a special token is an empty string")
            order[self.integer(where, idx)] = tok
        if sorted(order) != list(range(len(table))):
            self.fail("special_tokens", f"ids must be 0..{len(table) - 1} once each, got "
                      f"{sorted(table.values())}")
        return [order[i] for i in range(len(order))]

# %% [markdown]
# Now the character tokenizer itself. `train` returns the tokenizer, so
# `CharTokenizer().train(text)` reads naturally.

# %%
#| export
class CharTokenizer(Tokenizer):
    """One id per character: special tokens first, then every character of the training text.

    Attributes:
        stoi: character -> id, for the characters only.
        itos: id -> string for every id (special tokens included), so decoding is a lookup.

    Example:
        >>> tok = CharTokenizer(special_tokens=["<pad>"]).train("hello")
        >>> tok.encode("hole<pad>"), tok.vocab_size
        ([2, 4, 3, 1, 0], 5)
    """

    kind = "char"

    def __init__(self, special_tokens: Iterable[str] = ()) -> None:
        super().__init__(special_tokens)
        self.stoi: dict[str, int] = {}
        self.itos: dict[int, str] = {i: tok for tok, i in self.special_tokens.items()}

    @property
    def vocab_size(self) -> int:
        """Special tokens plus distinct characters."""
        return len(self.special_tokens) + len(self.stoi)

    def train(self, text: str) -> CharTokenizer:
        """Build the vocabulary from ``text``; returns ``self`` (so ``CharTokenizer().train(t)``).

        Ids: the ``k`` special tokens keep ``0 .. k-1``; the distinct characters of ``text``
        get ``k, k+1, ...`` in code-point order (``sorted``). Occurrences of special tokens in
        ``text`` are not split into characters. Training again replaces the vocabulary.

        APPROACH:
            1. ``pieces = split_special(text, self.special_tokens)``; collect the characters
               of the ``str`` pieces into a set.
            2. ``k = len(self.special_tokens)``; ``self.stoi = {ch: k + i for i, ch in
               enumerate(sorted(chars))}``.
            3. ``self.itos``: the special tokens' ids and strings, plus the inverse of
               ``self.stoi``. Return ``self``.

        EXAMPLE:
            >>> tok = CharTokenizer(special_tokens=["<pad>", "<eos>"]).train("banana<eos>")
            >>> tok.stoi, tok.itos[1], tok.vocab_size
            ({'a': 2, 'b': 3, 'n': 4}, '<eos>', 5)

        HINT: ``sorted`` on a set of characters orders them by code point (newline < space <
        ``'A'`` < ``'a'``): a fixed order, so two people training on the same text get the
        same ids.
        """
        # BEGIN SOLUTION NO PROMPT
        chars: set[str] = set()
        for piece in split_special(text, self.special_tokens):
            if isinstance(piece, str):
                chars.update(piece)
        k = len(self.special_tokens)
        self.stoi = {ch: k + i for i, ch in enumerate(sorted(chars))}
        self.itos = {i: tok for tok, i in self.special_tokens.items()}
        self.itos.update({i: ch for ch, i in self.stoi.items()})
        return self
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement CharTokenizer.train (see its docstring)")  # STUB

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """Ids of ``text``: one per character, one per special token.

        With ``allow_special=True`` (the default) every occurrence of a special token's string
        becomes its id; with ``allow_special=False`` special strings are ordinary text (use it
        for untrusted input, so a user cannot inject ``<|endoftext|>``).

        APPROACH: split with ``split_special(text, self.special_tokens)`` (or with ``{}`` when
        special tokens are not allowed); an ``int`` piece is appended as it is; a ``str`` piece
        adds ``self.stoi[ch]`` for each character.

        EXAMPLE:
            >>> tok = CharTokenizer(special_tokens=["<eos>"]).train("ab")
            >>> tok.encode("ba<eos>")
            [2, 1, 0]

        HINT: a character the tokenizer never saw has no id: raise ``ValueError`` naming it
        (e.g. ``character 'z' is not in the vocabulary``), not a bare ``KeyError``.
        """
        # BEGIN SOLUTION NO PROMPT
        specials = self.special_tokens if allow_special else {}
        ids: list[int] = []
        for piece in split_special(text, specials):
            if isinstance(piece, int):
                ids.append(piece)
                continue
            for ch in piece:
                if ch not in self.stoi:
                    raise ValueError(f"character {ch!r} (U+{ord(ch):04X}) is not in the "
                                     "vocabulary; train on a text that contains it")
                ids.append(self.stoi[ch])
        return ids
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement CharTokenizer.encode (see its docstring)")  # STUB

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: ``decode(encode(text)) == text`` for every text of known characters.

        APPROACH: join ``self.itos[i]`` over the ids (convert each with ``int(i)``, so NumPy
        integers work too).

        EXAMPLE:
            >>> tok = CharTokenizer(special_tokens=["<eos>"]).train("ab")
            >>> tok.decode([2, 1, 0])
            'ba<eos>'

        HINT: an id outside ``0 .. vocab_size-1`` must raise ``ValueError`` naming the id;
        ``-1`` must not silently wrap around to the last entry (as a list index would).
        """
        # BEGIN SOLUTION NO PROMPT
        out: list[str] = []
        for i in ids:
            idx = int(i)
            if idx not in self.itos:
                raise ValueError(f"id {idx} is not in the vocabulary (0..{self.vocab_size - 1})")
            out.append(self.itos[idx])
        return "".join(out)
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement CharTokenizer.decode (see its docstring)")  # STUB

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: ``vocab`` maps each character to its id (provided)."""
        return {**super().to_dict(), "vocab": dict(self.stoi)}

    @classmethod
    def _from_dict(cls, reader: _Reader) -> CharTokenizer:
        tok = cls(reader.special_tokens())
        vocab = reader.get("vocab", dict)
        k = len(tok.special_tokens)
        for ch, idx in vocab.items():
            if len(ch) != 1:
                reader.fail(f"vocab[{ch!r}]", "expected a single character")
            reader.integer(f"vocab[{ch!r}]", idx)
        if sorted(vocab.values()) != list(range(k, k + len(vocab))):
            reader.fail("vocab", f"ids must be {k}..{k + len(vocab) - 1} once each (after the "
                        f"{k} special tokens)")
        tok.stoi = dict(vocab)
        tok.itos.update({i: ch for ch, i in vocab.items()})
        return tok


# %% [raw]
# # BEGIN QUESTION
# name: chars
# points: 0

# %% [markdown]
# ### Check: the character tokenizer

# %% [raw]
# # BEGIN TESTS

# %%
def test_char_tokenizer_ids_follow_the_rules(CharTokenizer):
    tok = CharTokenizer(special_tokens=["<pad>", "<eos>"]).train("banana<eos>")
    assert tok.stoi == {"a": 2, "b": 3, "n": 4}, (
        f"special tokens keep ids 0 and 1, then the characters in sorted order get 2, 3, 4: "
        f"expected {{'a': 2, 'b': 3, 'n': 4}}, got {tok.stoi}; '<eos>' in the training text "
        "is one special token, not the characters '<', 'e', 'o', 's', '>'")
    assert tok.vocab_size == 5, f"2 special tokens + 3 characters = 5, got {tok.vocab_size}"
    assert tok.itos[0] == "<pad>" and tok.itos[4] == "n", (
        f"itos maps every id back to its string, special tokens included: expected "
        f"itos[0] = '<pad>' and itos[4] = 'n', got {tok.itos!r}")
    got = tok.encode("nab<eos><pad>")
    assert got == [4, 2, 3, 1, 0], f"expected [4, 2, 3, 1, 0], got {got}"
    got = tok.decode([3, 2, 4, 1])
    assert got == "ban<eos>", f"decode([3, 2, 4, 1]) should be 'ban<eos>', got {got!r}"

# %%
def test_char_tokenizer_round_trip_and_errors(CharTokenizer):
    text = "In the beginning God created the heaven and the earth.\n"
    tok = CharTokenizer().train(text)
    ids = tok.encode(text)
    assert len(ids) == len(text), f"one id per character: {len(text)} ids, got {len(ids)}"
    back = tok.decode(ids)
    assert back == text, (
        f"decode(encode(text)) must give the text back exactly, got {back[:40]!r}...: a "
        "tokenizer that loses characters corrupts every sample it generates")
    want = [tok.stoi["d"], tok.stoi["o"], tok.stoi["g"]]
    got = tok.encode("dog")
    assert got == want, f"encode('dog') must be the ids of d, o, g: expected {want}, got {got}"
    try:
        tok.encode("Zebra")
    except ValueError:
        pass
    else:
        raise AssertionError("'Z' never occurs in the training text: encode must raise "
                             "ValueError, not invent an id")
    for bad in (-1, tok.vocab_size):
        try:
            tok.decode([bad])
        except ValueError:
            continue
        raise AssertionError(f"decode([{bad}]) must raise ValueError: id {bad} is not in the "
                             f"vocabulary 0..{tok.vocab_size - 1}")
    special = CharTokenizer(special_tokens=["<eos>"]).train("<eos>")
    assert special.stoi == {}, (
        f"training on '<eos>' alone must learn no characters (the special token is atomic), "
        f"got {special.stoi}")
    special.train("<eos>se<>o")
    got = special.encode("<eos>", allow_special=False)
    assert got == [1, 3, 4, 5, 2], (
        f"allow_special=False encodes '<eos>' as its 5 characters, expected [1, 3, 4, 5, 2], "
        f"got {got}")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 4. Byte pairs: the two primitives of BPE
#
# **Byte-pair encoding** (Gage 1994 for compression; Sennrich et al. 2016 for translation;
# GPT-2's byte-level version 2019) builds a vocabulary bottom-up. Start from bytes; find the
# adjacent pair that occurs most often; give it a new id and replace it everywhere; repeat.
# The classic example, with `a`=97, `b`=98, `c`=99, `d`=100:
#
# ```
#   a a a b d a a a b a c        most frequent pair: (a, a), 4 times  -> Z = 256
#   Z a b d Z a b a c            (Z, a) and (a, b) both 2 times: the smaller pair (a, b)
#   Z Y d Z Y a c                                                      -> Y = 257
#   X d X a c                    (Z, Y) 2 times                       -> X = 258
# ```
#
# Two small functions do all the work:
#
# * `pair_counts(ids)`: how often each adjacent pair occurs. Pairs are counted at **every
#   position**, so in `a a a` the pair `(a, a)` counts twice;
# * `merge_pair(ids, pair, new_id)`: replace the pair, scanning **left to right without
#   overlap**: `a a a` becomes `Z a`, not `Z Z`.

# %%
#| export
def pair_counts(ids: Sequence[int]) -> dict[tuple[int, int], int]:
    """How often each adjacent pair occurs in ``ids``: ``{(a, b): count}``.

    Pairs are counted at every position, so overlapping pairs count twice
    (``[7, 7, 7]`` holds ``(7, 7)`` twice).

    APPROACH: ``zip(ids, ids[1:])`` (or ``itertools.pairwise(ids)``) walks the adjacent
    pairs; count them in a dict (or ``collections.Counter``) and return it as a ``dict``.

    EXAMPLE:
        >>> pair_counts([1, 2, 3, 1, 2])
        {(1, 2): 2, (2, 3): 1, (3, 1): 1}

    HINT: a list of fewer than two ids has no pairs: return ``{}``. ``ids`` may be a tuple or
    a list; ``list(ids)`` first makes slicing safe for any sequence.
    """
    # BEGIN SOLUTION NO PROMPT
    return dict(Counter(pairwise(ids)))
    # END SOLUTION
    raise NotImplementedError("module 10: implement pair_counts (see its docstring)")  # STUB


def merge_pair(ids: Sequence[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, scanning left to right.

    Occurrences do not overlap: in ``[7, 7, 7]`` the pair ``(7, 7)`` is replaced once, at the
    left, giving ``[new_id, 7]``.

    APPROACH: walk an index ``i`` over ``ids``. If ``ids[i], ids[i + 1]`` equals ``pair``,
    append ``new_id`` and move ``i`` by 2; otherwise append ``ids[i]`` and move by 1. Return a
    new list (``ids`` itself is not changed).

    EXAMPLE:
        >>> merge_pair([1, 2, 3, 1, 2], (1, 2), 256)
        [256, 3, 256]
        >>> merge_pair([7, 7, 7], (7, 7), 300)
        [300, 7]

    HINT: check ``i < len(ids) - 1`` before reading ``ids[i + 1]``; the last element is
    copied when it does not start a pair. ``ids`` may be a list or a tuple.
    """
    # BEGIN SOLUTION NO PROMPT
    first, second = pair
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i < n - 1 and ids[i] == first and ids[i + 1] == second:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out
    # END SOLUTION
    raise NotImplementedError("module 10: implement merge_pair (see its docstring)")  # STUB


# %% [raw]
# # BEGIN QUESTION
# name: pairs
# points: 0

# %% [markdown]
# ### Check: pair counts and merges

# %% [raw]
# # BEGIN TESTS

# %%
def test_pair_counts_counts_every_position(pair_counts):
    got = pair_counts([97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99])
    want = {(97, 97): 4, (97, 98): 2, (98, 100): 1, (100, 97): 1, (98, 97): 1, (97, 99): 1}
    assert got == want, f"expected {want}, got {got}"
    got = (pair_counts([5]), pair_counts([]))
    assert got == ({}, {}), f"fewer than 2 ids: no pairs, expected {{}} twice, got {got}"
    got = pair_counts((7, 7, 7))
    assert got == {(7, 7): 2}, f"[7, 7, 7] holds (7, 7) at two positions, got {got}"

# %%
def test_merge_pair_left_to_right_without_overlap(merge_pair):
    ids = [97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99]
    got = merge_pair(ids, (97, 97), 256)
    assert got == [256, 97, 98, 100, 256, 97, 98, 97, 99], (
        f"'aaa' becomes [256, 97] (left to right, no overlap); got {got}")
    assert ids == [97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99], (
        f"merge_pair must not modify ids (build a new list): the input became {ids}")
    got = merge_pair([7, 7, 7, 7], (7, 7), 300)
    assert got == [300, 300], f"[7, 7, 7, 7] holds two non-overlapping (7, 7): got {got}"
    got = merge_pair([1, 2, 1], (2, 3), 9)
    assert got == [1, 2, 1], f"no occurrence: the ids come back unchanged, got {got}"
    got = merge_pair([3, 1, 2], (1, 2), 9)
    assert got == [3, 9], f"a pair at the very end is merged too: expected [3, 9], got {got}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 5. The BPE tokenizer
#
# ### Ids
#
# ```
#   special tokens │ the 256 bytes                     │ merges, in the order learned
#   0 .. k-1       │ k .. k+255   (byte b has id k + b) │ k+256, k+257, ...
# ```
#
# With no special tokens (`k = 0`) byte `b` is simply id `b` and the first merge is 256, as in
# GPT-2 and the examples above.
#
# ### Pre-tokenization: merges never cross word boundaries
#
# GPT-2 first splits text into chunks with a regular expression (words with their leading
# space, numbers, punctuation, whitespace) and learns merges only *inside* chunks. Without it,
# BPE happily learns tokens like `"d the"` or `". And"`, spending vocabulary on accidents of
# word order. Every chunk of the training text becomes one "word" of byte ids; the same chunk
# (" the" occurs thousands of times) is stored once with its **frequency**. The provided
# `pretokenize` never loses a character: `"".join(pretokenize(t)) == t` for every `t`.
#
# ### Training rules (they fix every id, so two correct tokenizers agree exactly)
#
# 1. Cut out special tokens (never merged), pre-tokenize the rest, count the chunks.
# 2. Count adjacent pairs over all chunks, each weighted by its chunk's frequency.
# 3. Merge the pair with the **highest count**; on a tie, the **smallest pair** as a tuple
#    (`(97, 98) < (256, 97)`). Give it the next id.
# 4. Stop at `vocab_size` ids, or when the best pair occurs fewer than `min_frequency` times.
#
# ### Training fast: incremental pair counts
#
# The direct way recounts every pair of every chunk before each merge: `O(merges × corpus)`.
# But a merge only changes the chunks that *contain* the merged pair, and only the pairs
# around each occurrence. So keep, between merges:
#
# ```
#   stats[pair]  = total count (chunk frequency included)      dict
#   where[pair]  = indices of the chunks that contain it         dict of sets
#   heap         = (-count, pair) entries; the top is the next merge (ties: smallest pair)
# ```
#
# To merge `pair` into `new_id`, visit only `where[pair]`: subtract each such chunk's old
# pair counts, merge it, add its new pair counts, and push the changed counts on the heap.
# The heap may hold stale entries (a count that has changed since); skip an entry when its
# count is not the current `stats[pair]`. Section 7 measures both ways.
#
# Pre-tokenization is what keeps the chunks short, so a merge touches only a few short words.
# With `split_pattern=None` the whole text is one chunk that every merge rescans: fine for the
# small examples here, far slower on a real text than with chunks.
#
# ### Encoding: apply merges by rank
#
# To encode a chunk, start from its bytes and repeatedly merge, among the pairs present,
# the one that was **learned first** (lowest new id), until no pair has a merge. This replays
# training's merges in training order, so the training text is segmented exactly as training
# saw it. (Merging the most *frequent* pair of the chunk, or the first one found from the
# left, gives different, wrong tokens.)
#
# ### Decoding: bytes first, then UTF-8
#
# Each id stands for a byte string (`vocab[id]`); join them all, then decode the bytes as
# UTF-8 **once**. A single token may hold half of a character (`€` is 3 bytes and may be
# split across two tokens), so decoding token by token would break it. A model can generate
# ids that end in the middle of a character; `errors="replace"` shows U+FFFD (`�`) there
# instead of failing.

# %%
#| export
def pretokenize(text: str, pattern: str | None = SPLIT_PATTERN) -> list[str]:
    """Split ``text`` into chunks that BPE merges never cross (provided).

    Every character lands in exactly one chunk, in order, so ``"".join(chunks) == text`` for
    any pattern: text the pattern does not match becomes a chunk of its own. ``pattern=None``
    keeps the whole text as one chunk.

    Example:
        >>> pretokenize("Hello, world!  It's 2027.")
        ['Hello', ',', ' world', '!', ' ', ' It', "'s", ' 2027', '.']
    """
    if not text:
        return []
    if pattern is None:
        return [text]
    chunks: list[str] = []
    pos = 0
    for match in re.finditer(pattern, text):
        start, end = match.span()
        if start == end:
            continue
        if start > pos:
            chunks.append(text[pos:start])
        chunks.append(text[start:end])
        pos = end
    if pos < len(text):
        chunks.append(text[pos:])
    return chunks

# %%
print(pretokenize("And God said, Let there be light: and there was light.\n"))
print(pretokenize("naïve café, 3 €… 🙂"))

# %% [markdown]
# Now the tokenizer. The constructor, `byte_offset`, `vocab_size`, `_build_vocab` and the file
# methods are provided; you write `train`, `encode` and `decode`.

# %%
#| export
class BPETokenizer(Tokenizer):
    """Byte-level byte-pair encoding (Sennrich et al. 2016; GPT-2's byte-level variant).

    Ids: ``k`` special tokens ``0 .. k-1``; the 256 byte values ``k .. k+255`` (byte ``b`` is
    ``k + b``); then one id per merge, in the order training learned them.

    Attributes:
        merges: ``{(a, b): new_id}`` in training order: the pair ``(a, b)`` becomes ``new_id``.
        vocab: ``{id: bytes}`` for every id (built from ``merges`` by ``_build_vocab``).
        split_pattern: the pre-tokenizer regex (``None``: the text is one chunk).

    Example:
        >>> tok = BPETokenizer().train("low lower lowest", vocab_size=258)
        >>> tok.merges
        {(108, 111): 256, (256, 119): 257}
        >>> tok.encode(" lowly"), tok.decode(tok.encode(" lowly"))
        ([32, 257, 108, 121], ' lowly')
    """

    kind = "bpe"

    def __init__(self, special_tokens: Iterable[str] = (),
                 split_pattern: str | None = SPLIT_PATTERN) -> None:
        super().__init__(special_tokens)
        if split_pattern is not None:
            re.compile(split_pattern)
        self.split_pattern = split_pattern
        self.merges: dict[tuple[int, int], int] = {}
        self.vocab: dict[int, bytes] = {}
        self._cache: dict[str, list[int]] = {}
        self._build_vocab()

    @property
    def byte_offset(self) -> int:
        """The id of byte 0: byte ``b`` has id ``byte_offset + b`` (after the special tokens)."""
        return len(self.special_tokens)

    @property
    def vocab_size(self) -> int:
        """Special tokens + 256 bytes + merges."""
        return len(self.special_tokens) + 256 + len(self.merges)

    def _build_vocab(self) -> None:
        """Rebuild ``vocab`` (id -> bytes) from the special tokens, the bytes and ``merges``
        (provided; ``train`` calls it at the end). Empties the encoding cache."""
        vocab = {i: tok.encode("utf-8") for tok, i in self.special_tokens.items()}
        vocab.update({self.byte_offset + b: bytes([b]) for b in range(256)})
        for (a, b), idx in self.merges.items():
            vocab[idx] = vocab[a] + vocab[b]
        self.vocab = vocab
        self._cache = {}

    def train(self, text: str, vocab_size: int, min_frequency: int = 2) -> BPETokenizer:
        """Learn up to ``vocab_size - (k + 256)`` merges from ``text``; returns ``self``.

        The rules (they fix every id, so two correct tokenizers agree exactly):

        * Special-token strings are cut out first (``split_special``) and never merged; the
          rest is pre-tokenized with ``pretokenize(piece, self.split_pattern)``, and each chunk
          becomes its UTF-8 bytes as ids ``byte_offset + b``. Merges never cross chunks.
        * Each step counts every adjacent pair over all chunks (a chunk that occurs ``f`` times
          counts ``f`` times), takes the pair with the **highest count**, breaking ties by the
          **smallest pair** (``(a, b) < (c, d)`` as tuples), and gives it the next id.
        * Training stops at ``vocab_size`` ids, or earlier when the best pair occurs fewer than
          ``min_frequency`` times (default 2: a merge that saves nothing is not learned).

        APPROACH (incremental: never recount the whole corpus per merge):
            1. ``counts = Counter`` of chunks; ``words = [ids of chunk]``, ``freq = [count]``
               (every distinct chunk once: "the the the" is 2 chunks, ``the`` and `` the``).
            2. ``stats[pair]`` = sum over words of ``pair_counts(word)[pair] * freq``;
               ``where[pair]`` = the set of word indices that contain the pair.
            3. A heap of ``(-count, pair)``: its smallest entry is the highest count with the
               smallest pair. Pop entries whose count is no longer ``stats[pair]`` (stale).
            4. To merge ``pair`` into ``new_id``: for each word in ``where[pair]``, subtract its
               old ``pair_counts`` (times ``freq``) from ``stats``, replace the word by
               ``merge_pair(word, pair, new_id)``, add its new ``pair_counts``, record it in
               ``where`` for each new pair, and push the changed counts on the heap.
            5. ``self.merges[pair] = new_id``. At the end call ``self._build_vocab()``.

        EXAMPLE:
            >>> BPETokenizer(split_pattern=None).train("aaabdaaabac", vocab_size=259).merges
            {(97, 97): 256, (97, 98): 257, (256, 257): 258}

        HINT: ``vocab_size`` below ``k + 256`` is a ``ValueError``. A simple version that
        recounts all pairs of all words before every merge gives the same merges and is a
        good first step; the incremental one is what makes hundreds of merges on 100 KB take
        a fraction of a second (section 7 measures both). Start ``self.merges`` empty:
        training again replaces what was learned.
        """
        # BEGIN SOLUTION NO PROMPT
        base = self.byte_offset + 256
        if vocab_size < base:
            raise ValueError(f"vocab_size {vocab_size} is smaller than the {base} ids of the "
                             "special tokens and the 256 bytes")
        counts: Counter[str] = Counter()
        for piece in split_special(text, self.special_tokens):
            if isinstance(piece, str):
                counts.update(pretokenize(piece, self.split_pattern))
        offset = self.byte_offset
        words = [[offset + b for b in chunk.encode("utf-8")] for chunk in counts]
        freq = list(counts.values())
        stats: dict[tuple[int, int], int] = defaultdict(int)
        where: dict[tuple[int, int], set[int]] = defaultdict(set)
        for w, word in enumerate(words):
            for pair, n in pair_counts(word).items():
                stats[pair] += n * freq[w]
                where[pair].add(w)
        heap = [(-n, pair) for pair, n in stats.items()]
        heapq.heapify(heap)
        self.merges = {}
        new_id = base
        while new_id < vocab_size and heap:
            neg, pair = heapq.heappop(heap)
            if stats.get(pair, 0) != -neg:
                continue
            if -neg < min_frequency:
                break
            changed: set[tuple[int, int]] = set()
            for w in where.pop(pair):
                old = words[w]
                new = merge_pair(old, pair, new_id)
                if len(new) == len(old):
                    continue
                for p, n in pair_counts(old).items():
                    stats[p] -= n * freq[w]
                    changed.add(p)
                for p, n in pair_counts(new).items():
                    stats[p] += n * freq[w]
                    where[p].add(w)
                    changed.add(p)
                words[w] = new
            for p in changed:
                if stats[p] > 0:
                    heapq.heappush(heap, (-stats[p], p))
                else:
                    del stats[p]
            self.merges[pair] = new_id
            new_id += 1
        self._build_vocab()
        return self
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement BPETokenizer.train (see its docstring)")  # STUB

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """The ids of ``text``: special tokens atomically, every other chunk by its merges.

        A chunk starts as its UTF-8 bytes (ids ``byte_offset + b``); then, repeatedly, among
        the adjacent pairs that have a merge, the one learned **first** (lowest new id) is
        merged everywhere in the chunk, until no pair has a merge. This applies the merges in
        training order, so it reproduces how training segmented the text.

        APPROACH:
            1. ``split_special(text, self.special_tokens if allow_special else {})``; an
               ``int`` piece is one id.
            2. Each ``str`` piece: ``pretokenize(piece, self.split_pattern)``; each chunk:
               ``ids = [self.byte_offset + b for b in chunk.encode("utf-8")]``.
            3. While ``len(ids) >= 2``: ``pair = min(pair_counts(ids), key=lambda p:
               self.merges.get(p, float("inf")))``; stop if ``pair`` is not in
               ``self.merges``; else ``ids = merge_pair(ids, pair, self.merges[pair])``.

        EXAMPLE:
            >>> tok = BPETokenizer(special_tokens=["<eos>"]).train("aaa aaa", vocab_size=259)
            >>> tok.merges, tok.encode("aaa<eos>aa")
            ({(98, 98): 257, (257, 98): 258}, [258, 0, 257])

        HINT: the same chunks (words) come back again and again; a dict ``self._cache`` from
        chunk to ids (emptied by ``_build_vocab``) makes encoding several times faster.
        With ``allow_special=False`` the text ``<eos>`` is just 5 characters of bytes.
        """
        # BEGIN SOLUTION NO PROMPT
        specials = self.special_tokens if allow_special else {}
        offset = self.byte_offset
        out: list[int] = []
        for piece in split_special(text, specials):
            if isinstance(piece, int):
                out.append(piece)
                continue
            for chunk in pretokenize(piece, self.split_pattern):
                ids = self._cache.get(chunk)
                if ids is None:
                    ids = [offset + b for b in chunk.encode("utf-8")]
                    while len(ids) >= 2:
                        pair = min(pair_counts(ids),
                                   key=lambda p: self.merges.get(p, float("inf")))
                        if pair not in self.merges:
                            break
                        ids = merge_pair(ids, pair, self.merges[pair])
                    self._cache[chunk] = ids
                out.extend(ids)
        return out
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement BPETokenizer.encode (see its docstring)")  # STUB

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``: join each id's bytes and decode them as UTF-8.

        ``decode(encode(text)) == text`` for every string. An id sequence that ends inside a
        multi-byte character (e.g. generated by a model) decodes with U+FFFD for the broken
        bytes (``errors="replace"``) instead of failing.

        APPROACH: ``b"".join(self.vocab[int(i)] for i in ids).decode("utf-8",
        errors="replace")``, after checking that every id is in ``self.vocab``.

        EXAMPLE:
            >>> tok = BPETokenizer()
            >>> tok.decode([104, 105]), tok.decode([226, 130, 172]), tok.decode([226, 130])
            ('hi', '€', '�')

        HINT: decode the joined bytes once, not each token: a token may hold half of a
        multi-byte character whose other half is the next token. An unknown id is a
        ``ValueError`` naming it.
        """
        # BEGIN SOLUTION NO PROMPT
        parts: list[bytes] = []
        for i in ids:
            idx = int(i)
            if idx not in self.vocab:
                raise ValueError(f"id {idx} is not in the vocabulary (0..{self.vocab_size - 1})")
            parts.append(self.vocab[idx])
        return b"".join(parts).decode("utf-8", errors="replace")
        # END SOLUTION
        raise NotImplementedError(  # STUB
            "module 10: implement BPETokenizer.decode (see its docstring)")  # STUB

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (provided): ``merges`` as ``[a, b]`` pairs in training order (merge ``i``
        creates id ``k + 256 + i``) and ``vocab`` as ``{id: hex of its bytes}``."""
        merges = sorted(self.merges.items(), key=lambda item: item[1])
        return {**super().to_dict(), "split_pattern": self.split_pattern,
                "merges": [[a, b] for (a, b), _ in merges],
                "vocab": {str(i): self.vocab[i].hex() for i in range(self.vocab_size)}}

    @classmethod
    def _from_dict(cls, reader: _Reader) -> BPETokenizer:
        specials = reader.special_tokens()
        pattern = reader.get("split_pattern", (str, type(None)))
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                reader.fail("split_pattern", f"not a regular expression ({exc})")
        tok = cls(specials, split_pattern=pattern)
        merges = reader.get("merges", list)
        k, base = len(specials), len(specials) + 256
        for i, item in enumerate(merges):
            where = f"merges[{i}]"
            if not isinstance(item, list) or len(item) != 2:
                reader.fail(where, f"expected a pair [a, b] of ids, got {item!r}")
            a, b = (reader.integer(where, x) for x in item)
            if not (k <= a < base + i and k <= b < base + i):
                reader.fail(where, f"ids must be bytes or earlier merges ({k}..{base + i - 1}), "
                            f"got {item!r}")
            if (a, b) in tok.merges:
                reader.fail(where, f"the pair {item!r} is merged twice")
            tok.merges[(a, b)] = base + i
        tok._build_vocab()
        vocab = reader.get("vocab", dict)
        if set(vocab) != {str(i) for i in range(tok.vocab_size)}:
            reader.fail("vocab", f"expected ids 0..{tok.vocab_size - 1} ({k} special tokens, 256 "
                        f"bytes and {len(merges)} merges), got {len(vocab)} entries")
        for i in range(tok.vocab_size):
            if vocab[str(i)] != tok.vocab[i].hex():
                reader.fail(f"vocab['{i}']", f"{_one_line(vocab[str(i)], 40)!r} is not the hex "
                            "of the bytes the special tokens and merges give")
        return tok


# %% [raw]
# # BEGIN QUESTION
# name: bpe_train
# points: 0

# %% [markdown]
# ### Check: training BPE

# %% [raw]
# # BEGIN TESTS

# %%
def test_bpe_learns_the_hand_computed_merges(BPETokenizer):
    tok = BPETokenizer(split_pattern=None).train("aaabdaaabac", vocab_size=259)
    want = {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    assert tok.merges == want, (
        f"'aaabdaaabac': (a,a) 4 times -> 256; then (256,a) and (a,b) tie at 2 and the smaller "
        f"pair (97,98) wins -> 257; then (256,257) -> 258. Expected {want}, got {tok.merges}")
    assert tok.vocab_size == 259 and tok.vocab[258] == b"aaab", (
        f"vocab[258] should be the bytes b'aaab', got {tok.vocab.get(258)!r}: call "
        "self._build_vocab() at the end of train")
    words = BPETokenizer().train("low lower lowest", vocab_size=300)
    assert list(words.merges)[:2] == [(108, 111), (256, 119)], (
        f"chunks 'low', ' lower', ' lowest': (l,o) and (o,w) occur 3 times, the smaller (l,o) "
        f"first, then (256,w); got {list(words.merges)[:2]}")
    crossing = [words.vocab[i] for i in words.merges.values()
                if words.vocab[i].count(b" ") > 1 or words.vocab[i].endswith(b" ")]
    assert crossing == [], (
        f"a merge crossed a chunk boundary (tokens {crossing}): pre-tokenize each piece with "
        "pretokenize(piece, self.split_pattern) and merge inside chunks only")
    assert len(words.merges) == 4, (
        f"min_frequency=2: after (l,o), (256,w), (' ',257) and (258,e) every pair occurs once, "
        f"so training stops after 4 merges although vocab_size allows 44; "
        f"got {len(words.merges)}")

# %%
def test_bpe_counts_chunk_frequencies_and_reserves_special_ids(BPETokenizer):
    tok = BPETokenizer(special_tokens=["<pad>", "<|endoftext|>"])
    tok.train("ab cd cd cd<|endoftext|>ab<|endoftext|>", vocab_size=262)
    assert tok.merges == {(34, 101): 258, (258, 102): 259, (99, 100): 260}, (
        f"with 2 special tokens byte b has id b + 2 and the first merge id is 258. The chunk "
        f"' cd' occurs 3 times: (' ', c) = (34, 101) and (c, d) = (101, 102) tie at 3 and the "
        f"smaller pair wins -> 258, then (258, d) -> 259; 'ab' occurs twice -> 260; then no "
        f"pair occurs twice (the special tokens are cut out, never merged). Got {tok.merges}")
    tok.train("xyxy", vocab_size=259)
    assert tok.merges == {(122, 123): 258}, (
        f"training again must start from no merges; got {tok.merges}")
    try:
        BPETokenizer(special_tokens=["<pad>"]).train("abc", vocab_size=256)
    except ValueError:
        pass
    else:
        raise AssertionError("vocab_size 256 < 1 special token + 256 bytes must raise ValueError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: bpe_codec
# points: 0

# %% [markdown]
# ### Check: encoding and decoding

# %% [raw]
# # BEGIN TESTS

# %%
def test_bpe_encode_replays_merges_in_training_order(BPETokenizer):
    tok = BPETokenizer(split_pattern=None).train("aaabdaaabac", vocab_size=259)
    got = tok.encode("aaabdaaabac")
    assert got == [258, 100, 258, 97, 99], (
        f"encoding the training text replays its merges: expected [258, 100, 258, 97, 99] "
        f"(X d X a c), got {got}")
    tok = BPETokenizer(split_pattern=None)
    tok.merges = {(98, 99): 256, (97, 98): 257}
    tok._build_vocab()
    got = tok.encode("abc")
    assert got == [97, 256], (
        f"(b,c) was learned first (id 256), so 'abc' is [a, bc] = [97, 256], got {got}: merge "
        "the pair with the LOWEST merge id, not the first pair from the left")

# %%
def test_bpe_round_trip_specials_and_partial_characters(BPETokenizer):
    tok = BPETokenizer(special_tokens=["<|endoftext|>"])
    tok.train("the cat sat on the mat. the end.<|endoftext|>" * 5, vocab_size=290)
    for text in ["the cat", "naïve café, 3 € 🙂 日本語", "", "  \n\t x", "<|endoftext|>"]:
        got = tok.decode(tok.encode(text))
        assert got == text, f"decode(encode({text!r})) gave {got!r}: the round trip must be exact"
    ids = tok.encode("a<|endoftext|>b")
    assert ids == [98, 0, 99], f"the special token is one id (0) between 'a' and 'b', got {ids}"
    plain = tok.encode("<|endoftext|>", allow_special=False)
    assert 0 not in plain and tok.decode(plain) == "<|endoftext|>", (
        f"allow_special=False encodes the string as ordinary bytes, got {plain}")
    euro = tok.encode("€")
    assert euro == [227, 131, 173] and tok.decode(euro[:2]) == "\ufffd", (
        f"'€' is the 3 bytes e2 82 ac (ids 227, 131, 173 after 1 special token), got {euro}; "
        "the first two alone end inside the character and decode to U+FFFD (errors='replace')")
    got = BPETokenizer().decode([226, 130, 172])
    assert got == "€", (
        f"expected '€', got {got!r}: decode the joined bytes once; the three bytes of '€' are "
        "three tokens here, and decoding each alone gives three U+FFFD")
    try:
        tok.decode([tok.vocab_size])
    except ValueError:
        pass
    else:
        raise AssertionError("an id outside the vocabulary must raise ValueError")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 6. Saving and loading (provided)
#
# A trained tokenizer is part of a model: a checkpoint without the exact tokenizer it was
# trained with is useless (every id would mean a different string). `save(path)` writes plain
# JSON, readable in any language and safe to load (no pickle, which can run code):
#
# ```json
# {"format": "tinytorch-tokenizer", "version": 1, "type": "bpe",
#  "special_tokens": {"<|endoftext|>": 0},
#  "split_pattern": "'(?:[sdmt]|ll|ve|re)| ?[^\\W\\d_]+| ...",
#  "merges": [[117, 105], [33, 117], ...],          merge i creates id k + 256 + i
#  "vocab": {"0": "3c7c656e646f66746578747c3e", "1": "00", ..., "257": "2074"}}
# ```
#
# `vocab` holds each token's bytes in hex (a token may be half a UTF-8 character, so it is not
# always a string). It is redundant with `merges`, which is the point: `load` rebuilds the
# vocabulary from the merges and refuses a file where the two disagree. Every problem is
# one line naming the file and the field (`tok.json: field 'merges[3]': ...`), and `save`
# writes to a temporary file and renames it, so a crash never leaves half a file.

# %%
with tempfile.TemporaryDirectory() as tmp:
    demo = BPETokenizer(special_tokens=["<|endoftext|>"]).train("the cat sat on the mat " * 3,
                                                                vocab_size=262)
    demo.save(Path(tmp) / "tok.json")
    print((Path(tmp) / "tok.json").read_text()[:300], "...")
    data = json.loads((Path(tmp) / "tok.json").read_text())
    data["merges"][2] = [0, 999]
    (Path(tmp) / "bad.json").write_text(json.dumps(data))
    try:
        BPETokenizer.load(Path(tmp) / "bad.json")
    except TokenizerFileError as err:
        print("refused:", err)

# %% [raw]
# # BEGIN QUESTION
# name: files
# points: 0

# %% [markdown]
# ### Check: a saved tokenizer encodes the same after loading

# %% [raw]
# # BEGIN TESTS

# %%
def test_saved_tokenizers_load_and_encode_identically(BPETokenizer, CharTokenizer, Tokenizer):
    import tempfile
    from pathlib import Path

    text = "In the beginning God created the heaven and the earth. 🙂<pad>"
    bpe = BPETokenizer(special_tokens=["<pad>"]).train(text * 3, vocab_size=280)
    char = CharTokenizer(special_tokens=["<pad>"]).train(text)
    with tempfile.TemporaryDirectory() as tmp:
        for tok, name in [(bpe, "bpe.json"), (char, "char.json")]:
            tok.save(Path(tmp) / name)
            back = Tokenizer.load(Path(tmp) / name)
            assert type(back) is type(tok), f"{name} came back as {type(back).__name__}"
            assert back.encode(text) == tok.encode(text), (
                f"{name}: the loaded tokenizer encodes differently; train must store what it "
                "learned in self.merges (BPE) or self.stoi/self.itos (characters)")
            again = back.decode(back.encode(text))
            assert again == text, (
                f"{name}: the loaded tokenizer does not round-trip: got {again[:40]!r}...")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## 7. Systems view: vocabulary size, sequence length and memory
#
# The vocabulary size `V` appears twice in every language model: the **embedding table**
# (`V × d` weights, module 11) and the **output layer** that scores every token (`d × V`, often
# the same matrix, "tied"). The number of tokens `T` a text becomes decides the sequence
# length: every layer costs `O(T)` and attention costs `O(T²)` (module 12). A bigger
# vocabulary makes `T` smaller but the tables bigger:
#
# ```
#   V small (chars, 62)            V large (BPE, 50k)
#   T ≈ 1 token per character       T ≈ 0.25 tokens per character
#   embedding 62 × 768 × 4 B        embedding 50,257 × 768 × 4 B = 154 MB
#   attention over 4× more tokens   16× fewer attention scores
# ```
#
# ### Exercise: measure it on the King James Bible
#
# The course ships Genesis to Ruth (1 MB, public domain) with a train/validation split. Train
# BPE tokenizers of several sizes on the first 300 KB, measure on the validation text how many
# tokens each character costs and how fast encoding is, and compute the embedding memory of
# a `d = 768` model and the number of attention scores for a 1,000-character context.
#
# Expect: tokens per character fall quickly with the first few hundred merges, then slowly;
# embedding memory grows linearly with `V`; attention scores fall with the square of tokens
# per character; BPE encodes far fewer characters per second than the character tokenizer.

# %%
from tinytorch_data.loaders import load_kjv_chars  # the course's shipped data (checksum verified)

kjv = load_kjv_chars()
train_text, val_text = kjv.train[:300_000], kjv.validation[:50_000]
d_model, context_chars = 768, 1_000


def median_cpu_seconds(fn, warmup=0, repeats=3):
    """(median CPU seconds of ``fn()`` over ``repeats`` timed calls after ``warmup`` untimed
    ones, the last call's result). The thread's clock: other programs on the machine do not
    inflate it (module 14 explains why, and builds the full tool)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        result = fn()
        times.append(time.thread_time() - start)
    return float(np.median(times)), result


def measure(name, make):
    seconds_to_train, tok = median_cpu_seconds(make)
    seconds, ids = median_cpu_seconds(lambda: tok.encode(val_text), warmup=1)
    assert tok.decode(ids) == val_text
    per_char = len(ids) / len(val_text)
    tokens = per_char * context_chars
    return (name, tok.vocab_size, seconds_to_train, per_char, len(val_text) / seconds / 1e6,
            tok.vocab_size * d_model * 4 / 1e6, tokens * tokens / 1e3)


rows = [measure("char", lambda: CharTokenizer().train(kjv.train))]
for vocab_size in (256, 384, 512, 1024, 2048):
    rows.append(measure("bpe", lambda: BPETokenizer().train(train_text, vocab_size=vocab_size)))

print(f"{'tokenizer':9} {'V':>5} {'train s':>8} {'tok/char':>8} {'MB/s':>6} "
      f"{'emb MB':>7} {'attn k':>7}")
for name, v, t_train, per_char, mbps, emb_mb, attn_k in rows:
    print(f"{name:9} {v:>5} {t_train:>8.3f} {per_char:>8.3f} {mbps:>6.2f} {emb_mb:>7.2f} "
          f"{attn_k:>7.0f}")

# %% [markdown]
# ### Exercise: why incremental counts matter
#
# Below is the direct trainer: before every merge it recounts the pairs of every distinct
# chunk. It learns exactly the same merges as yours; time both on 50 KB.

# %%
def train_recounting(text, vocab_size, pattern=SPLIT_PATTERN):
    counts = Counter(pretokenize(text, pattern))
    words, freq = [list(c.encode("utf-8")) for c in counts], list(counts.values())
    merges = {}
    for new_id in range(256, vocab_size):
        stats = Counter()
        for word, f in zip(words, freq):
            for pair, n in pair_counts(word).items():
                stats[pair] += n * f
        best = min(stats, key=lambda p: (-stats[p], p), default=None)
        if best is None or stats[best] < 2:
            break
        merges[best] = new_id
        words = [merge_pair(word, best, new_id) for word in words]
    return merges


sample = kjv.train[:50_000]
t_slow, slow = median_cpu_seconds(lambda: train_recounting(sample, 384))
t_fast, fast = median_cpu_seconds(lambda: BPETokenizer().train(sample, vocab_size=384))
print(f"{len(slow)} merges: recounting {t_slow:.2f} s, incremental {t_fast:.3f} s "
      f"({t_slow / t_fast:.0f}x), same merges: {slow == fast.merges}")
# Expected shape: the same merges, the incremental trainer several times faster (at least 3x),
# and the gap grows with the text and the number of merges.

# %% [markdown]
# ## 8. ML systems thinking (graded by hand)

# %% [raw]
# # BEGIN QUESTION
# name: written_vocab_tradeoff
# manual: true
# points: 5

# %% [markdown]
# **Q1 · Choosing a vocabulary size.** Using your table: for a small transformer with
# `d = 128` and 4 layers (about 0.8 M parameters outside the embeddings) trained on this text
# with a context of 256 tokens, compare a character vocabulary with a 2,048-token BPE. What
# fraction of the parameters is the embedding (plus a tied output layer) in each case, how
# many characters of text does one context window cover, and how does the attention cost per
# character change? Which would you pick, and why?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Characters: V = 62, embedding 62 × 128 ≈ 8 K parameters (1 % of 0.8 M); a 256-token
# context covers 256 characters. BPE 2,048: 2,048 × 128 ≈ 262 K parameters, about a quarter
# of the model (more if the output layer is not tied); at 0.285 tokens per character
# (measured) the same context covers ~900 characters, and attention per character costs
# about (0.285)² ≈ 1/12 of the character model's for the same span. For a tiny model on 1 MB of
# text, characters are the safer choice: every embedding row gets plenty of training signal
# and the model cannot waste capacity on rare tokens; BPE pays off when the model and the data
# are large enough to learn 2 K embeddings well and long-range context matters.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_bytes
# manual: true
# points: 5

# %% [markdown]
# **Q2 · Bytes and languages.** Why does a byte-level BPE never need an `<unk>` token, while
# a character tokenizer does? A BPE trained mostly on English text encodes a Chinese or Hindi
# sentence with many more tokens than an English sentence of the same meaning. Explain why
# (think about UTF-8 lengths and which merges were learned), and name two consequences for
# the users of a model priced or limited per token.

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Every string is a sequence of bytes and all 256 bytes are in the base vocabulary, so any
# input, even a character never seen, encodes (in the worst case byte by byte); a character
# tokenizer only knows the characters of its training text. Chinese characters take 3 UTF-8
# bytes and Devanagari 3 per code point (often several per letter), and an English-heavy
# corpus rarely merges those byte sequences, so each character costs 1–3 tokens while an
# English word costs ~1. Consequences: the same content costs several times more per request
# (price), fits less text in the context window (quality, truncation), and is slower to
# generate; the model also sees shorter effective context in those languages. Training the
# tokenizer on balanced multilingual data reduces the gap.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: written_special_tokens
# manual: true
# points: 5

# %% [markdown]
# **Q3 · Special tokens in the wild.** A chat service puts user messages between special
# tokens (`<|user|> ... <|end|>`). What can go wrong if it encodes user text with
# `allow_special=True`? And why do we give special tokens fixed ids *before* training instead
# of appending them after the merges, as GPT-2 did with `<|endoftext|>` = 50256?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# A user who types `<|end|><|user|>...` or `<|endoftext|>` gets real control tokens: they can
# close their own turn and forge another speaker's turn or a system instruction, or cut the
# document so the model ignores the rest (special-token injection); untrusted text must be
# encoded with `allow_special=False` so those strings become ordinary bytes. Fixed ids before
# training make the special ids independent of the number of merges: code and checkpoints that
# use `<pad> = 0` keep working when the tokenizer is retrained with a different vocabulary
# size, and adding merges never moves them. (GPT-2's choice works for one frozen vocabulary,
# but any retraining or extension shifts an appended id.)

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# ## Summary
#
# You built the bridge between text and tensors: special tokens with reserved ids, a
# character tokenizer, and byte-level BPE with deterministic, incremental training, encoding
# by merge rank and an exact round trip for any Unicode string, saved as plain JSON. Export
# with `python export.py 10`. Module 11 turns these ids into vectors with an `Embedding`
# table whose size you have just learned to budget, and the 2017 transformer milestone trains
# on the King James text with your `CharTokenizer`.
