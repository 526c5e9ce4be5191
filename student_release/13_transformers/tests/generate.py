from otter.test_files import test_case

OK_FORMAT = False

name = "generate"
points = 0

@test_case(points=None, hidden=False)
def test_generate_greedy_sampling_and_cropping(GPT, Tensor, manual_seed, np):
    manual_seed(0)
    gpt = GPT(vocab_size=9, context_length=5, d_model=16, n_layers=1, n_heads=2)
    rng = np.random.default_rng(7)
    for p in gpt.parameters():
        p.data[...] += rng.standard_normal(p.shape).astype(np.float32)
    prompt = rng.integers(0, 9, size=(2, 3))
    out = gpt.generate(Tensor(prompt), max_new_tokens=6, top_k=1)
    assert out.shape == (2, 9) and out.dtype == np.int64, f'(B, T) -> (B, T + max_new_tokens) int64; got {out.shape} {out.dtype}'
    seq = prompt.copy()
    for _ in range(6):
        nxt = gpt(Tensor(seq[:, -5:])).numpy()[:, -1].argmax(-1)
        seq = np.concatenate([seq, nxt[:, None]], axis=1)
    assert np.array_equal(out.numpy(), seq), f"top_k=1 is greedy: each new token is the argmax of the last position's logits, feeding only the last context_length tokens; expected {seq[0]}, got {out.numpy()[0]}"
    manual_seed(1)
    s1 = gpt.generate(prompt, max_new_tokens=8, temperature=2.0).numpy()
    manual_seed(1)
    s2 = gpt.generate(prompt, max_new_tokens=8, temperature=2.0).numpy()
    assert np.array_equal(s1, s2), f'the same manual_seed must give the same sample: got {s1[0].tolist()}, then {s2[0].tolist()}; draw from default_generator(), which manual_seed seeds'
    manual_seed(2)
    many = gpt.generate(np.repeat(prompt[:1], 400, axis=0), max_new_tokens=1, top_k=3).numpy()
    logits = gpt(Tensor(prompt[:1])).numpy()[0, -1]
    top3 = set(np.argsort(logits)[-3:].tolist())
    drawn = set(many[:, -1].tolist())
    assert drawn <= top3 and len(drawn) > 1, f'top_k=3 samples only among the 3 largest logits {sorted(top3)}; drew {sorted(drawn)}'

