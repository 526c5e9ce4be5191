from otter.test_files import test_case

OK_FORMAT = False

name = "bpe_train"
points = 0

@test_case(points=None, hidden=False)
def test_bpe_learns_the_hand_computed_merges(BPETokenizer):
    tok = BPETokenizer(split_pattern=None).train('aaabdaaabac', vocab_size=259)
    want = {(97, 97): 256, (97, 98): 257, (256, 257): 258}
    assert tok.merges == want, f"'aaabdaaabac': (a,a) 4 times -> 256; then (256,a) and (a,b) tie at 2 and the smaller pair (97,98) wins -> 257; then (256,257) -> 258. Expected {want}, got {tok.merges}"
    assert tok.vocab_size == 259 and tok.vocab[258] == b'aaab', f"vocab[258] should be the bytes b'aaab', got {tok.vocab.get(258)!r}: call self._build_vocab() at the end of train"
    words = BPETokenizer().train('low lower lowest', vocab_size=300)
    assert list(words.merges)[:2] == [(108, 111), (256, 119)], f"chunks 'low', ' lower', ' lowest': (l,o) and (o,w) occur 3 times, the smaller (l,o) first, then (256,w); got {list(words.merges)[:2]}"
    crossing = [words.vocab[i] for i in words.merges.values() if words.vocab[i].count(b' ') > 1 or words.vocab[i].endswith(b' ')]
    assert crossing == [], f'a merge crossed a chunk boundary (tokens {crossing}): pre-tokenize each piece with pretokenize(piece, self.split_pattern) and merge inside chunks only'
    assert len(words.merges) == 4, f"min_frequency=2: after (l,o), (256,w), (' ',257) and (258,e) every pair occurs once, so training stops after 4 merges although vocab_size allows 44; got {len(words.merges)}"

@test_case(points=None, hidden=False)
def test_bpe_counts_chunk_frequencies_and_reserves_special_ids(BPETokenizer):
    tok = BPETokenizer(special_tokens=['<pad>', '<|endoftext|>'])
    tok.train('ab cd cd cd<|endoftext|>ab<|endoftext|>', vocab_size=262)
    assert tok.merges == {(34, 101): 258, (258, 102): 259, (99, 100): 260}, f"with 2 special tokens byte b has id b + 2 and the first merge id is 258. The chunk ' cd' occurs 3 times: (' ', c) = (34, 101) and (c, d) = (101, 102) tie at 3 and the smaller pair wins -> 258, then (258, d) -> 259; 'ab' occurs twice -> 260; then no pair occurs twice (the special tokens are cut out, never merged). Got {tok.merges}"
    tok.train('xyxy', vocab_size=259)
    assert tok.merges == {(122, 123): 258}, f'training again must start from no merges; got {tok.merges}'
    try:
        BPETokenizer(special_tokens=['<pad>']).train('abc', vocab_size=256)
    except ValueError:
        pass
    else:
        raise AssertionError('vocab_size 256 < 1 special token + 256 bytes must raise ValueError')

