from otter.test_files import test_case

OK_FORMAT = False

name = "special"
points = 0

@test_case(points=None, hidden=False)
def test_split_special_cuts_at_special_tokens(split_special):
    specials = {'<pad>': 0, '<|endoftext|>': 1}
    got = split_special('hi<|endoftext|>yo<pad>', specials)
    assert got == ['hi', 1, 'yo', 0], f"expected ['hi', 1, 'yo', 0], got {got!r}: text pieces stay strings and each special token becomes its id"
    got = split_special('a|b', specials)
    assert got == ['a|b'], f"'a|b' holds no special token but came back as {got!r}: pass each token through re.escape, or the '|' inside <|endoftext|> means 'or' in the pattern"
    got = split_special('<pad><pad>x', specials)
    assert got == [0, 0, 'x'], f"adjacent special tokens: expected [0, 0, 'x'], got {got!r}"
    got = split_special('', specials)
    assert got == [], f'an empty text has no pieces: expected [], got {got!r} (an empty string piece would become an empty chunk to encode)'
    got = split_special('plain', {})
    assert got == ['plain'], f"no special tokens: the text is one piece, expected ['plain'], got {got!r}"
    got = split_special('<a><ab>', {'<a': 0, '<ab>': 1})
    assert got == [0, '>', 1], f"where '<a' and '<ab>' both start, the longest wins: expected [0, '>', 1], got {got!r}"

