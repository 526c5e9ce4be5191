from otter.test_files import test_case

OK_FORMAT = False

name = "chars"
points = 0

@test_case(points=None, hidden=False)
def test_char_tokenizer_ids_follow_the_rules(CharTokenizer):
    tok = CharTokenizer(special_tokens=['<pad>', '<eos>']).train('banana<eos>')
    assert tok.stoi == {'a': 2, 'b': 3, 'n': 4}, f"special tokens keep ids 0 and 1, then the characters in sorted order get 2, 3, 4: expected {{'a': 2, 'b': 3, 'n': 4}}, got {tok.stoi}; '<eos>' in the training text is one special token, not the characters '<', 'e', 'o', 's', '>'"
    assert tok.vocab_size == 5, f'2 special tokens + 3 characters = 5, got {tok.vocab_size}'
    assert tok.itos[0] == '<pad>' and tok.itos[4] == 'n', f"itos maps every id back to its string, special tokens included: expected itos[0] = '<pad>' and itos[4] = 'n', got {tok.itos!r}"
    got = tok.encode('nab<eos><pad>')
    assert got == [4, 2, 3, 1, 0], f'expected [4, 2, 3, 1, 0], got {got}'
    got = tok.decode([3, 2, 4, 1])
    assert got == 'ban<eos>', f"decode([3, 2, 4, 1]) should be 'ban<eos>', got {got!r}"

@test_case(points=None, hidden=False)
def test_char_tokenizer_round_trip_and_errors(CharTokenizer):
    text = 'In the beginning God created the heaven and the earth.\n'
    tok = CharTokenizer().train(text)
    ids = tok.encode(text)
    assert len(ids) == len(text), f'one id per character: {len(text)} ids, got {len(ids)}'
    back = tok.decode(ids)
    assert back == text, f'decode(encode(text)) must give the text back exactly, got {back[:40]!r}...: a tokenizer that loses characters corrupts every sample it generates'
    want = [tok.stoi['d'], tok.stoi['o'], tok.stoi['g']]
    got = tok.encode('dog')
    assert got == want, f"encode('dog') must be the ids of d, o, g: expected {want}, got {got}"
    try:
        tok.encode('Zebra')
    except ValueError:
        pass
    else:
        raise AssertionError("'Z' never occurs in the training text: encode must raise ValueError, not invent an id")
    for bad in (-1, tok.vocab_size):
        try:
            tok.decode([bad])
        except ValueError:
            continue
        raise AssertionError(f'decode([{bad}]) must raise ValueError: id {bad} is not in the vocabulary 0..{tok.vocab_size - 1}')
    special = CharTokenizer(special_tokens=['<eos>']).train('<eos>')
    assert special.stoi == {}, f"training on '<eos>' alone must learn no characters (the special token is atomic), got {special.stoi}"
    special.train('<eos>se<>o')
    got = special.encode('<eos>', allow_special=False)
    assert got == [1, 3, 4, 5, 2], f"allow_special=False encodes '<eos>' as its 5 characters, expected [1, 3, 4, 5, 2], got {got}"

