from otter.test_files import test_case

OK_FORMAT = False

name = "bpe_codec"
points = 0

@test_case(points=None, hidden=False)
def test_bpe_encode_replays_merges_in_training_order(BPETokenizer):
    tok = BPETokenizer(split_pattern=None).train('aaabdaaabac', vocab_size=259)
    got = tok.encode('aaabdaaabac')
    assert got == [258, 100, 258, 97, 99], f'encoding the training text replays its merges: expected [258, 100, 258, 97, 99] (X d X a c), got {got}'
    tok = BPETokenizer(split_pattern=None)
    tok.merges = {(98, 99): 256, (97, 98): 257}
    tok._build_vocab()
    got = tok.encode('abc')
    assert got == [97, 256], f"(b,c) was learned first (id 256), so 'abc' is [a, bc] = [97, 256], got {got}: merge the pair with the LOWEST merge id, not the first pair from the left"

@test_case(points=None, hidden=False)
def test_bpe_round_trip_specials_and_partial_characters(BPETokenizer):
    tok = BPETokenizer(special_tokens=['<|endoftext|>'])
    tok.train('the cat sat on the mat. the end.<|endoftext|>' * 5, vocab_size=290)
    for text in ['the cat', 'naïve café, 3 € 🙂 日本語', '', '  \n\t x', '<|endoftext|>']:
        got = tok.decode(tok.encode(text))
        assert got == text, f'decode(encode({text!r})) gave {got!r}: the round trip must be exact'
    ids = tok.encode('a<|endoftext|>b')
    assert ids == [98, 0, 99], f"the special token is one id (0) between 'a' and 'b', got {ids}"
    plain = tok.encode('<|endoftext|>', allow_special=False)
    assert 0 not in plain and tok.decode(plain) == '<|endoftext|>', f'allow_special=False encodes the string as ordinary bytes, got {plain}'
    euro = tok.encode('€')
    assert euro == [227, 131, 173] and tok.decode(euro[:2]) == '�', f"'€' is the 3 bytes e2 82 ac (ids 227, 131, 173 after 1 special token), got {euro}; the first two alone end inside the character and decode to U+FFFD (errors='replace')"
    got = BPETokenizer().decode([226, 130, 172])
    assert got == '€', f"expected '€', got {got!r}: decode the joined bytes once; the three bytes of '€' are three tokens here, and decoding each alone gives three U+FFFD"
    try:
        tok.decode([tok.vocab_size])
    except ValueError:
        pass
    else:
        raise AssertionError('an id outside the vocabulary must raise ValueError')

