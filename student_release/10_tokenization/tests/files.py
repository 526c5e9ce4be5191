from otter.test_files import test_case

OK_FORMAT = False

name = "files"
points = 0

@test_case(points=None, hidden=False)
def test_saved_tokenizers_load_and_encode_identically(BPETokenizer, CharTokenizer, Tokenizer):
    import tempfile
    from pathlib import Path
    text = 'In the beginning God created the heaven and the earth. 🙂<pad>'
    bpe = BPETokenizer(special_tokens=['<pad>']).train(text * 3, vocab_size=280)
    char = CharTokenizer(special_tokens=['<pad>']).train(text)
    with tempfile.TemporaryDirectory() as tmp:
        for tok, name in [(bpe, 'bpe.json'), (char, 'char.json')]:
            tok.save(Path(tmp) / name)
            back = Tokenizer.load(Path(tmp) / name)
            assert type(back) is type(tok), f'{name} came back as {type(back).__name__}'
            assert back.encode(text) == tok.encode(text), f'{name}: the loaded tokenizer encodes differently; train must store what it learned in self.merges (BPE) or self.stoi/self.itos (characters)'
            again = back.decode(back.encode(text))
            assert again == text, f'{name}: the loaded tokenizer does not round-trip: got {again[:40]!r}...'

