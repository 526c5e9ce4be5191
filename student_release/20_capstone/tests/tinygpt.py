from otter.test_files import test_case

OK_FORMAT = False

name = "tinygpt"
points = 0

@test_case(points=None, hidden=False)
def test_int8_weight_linear_from_float_stores_int8(Int8WeightLinear, PerChannelMinMaxObserver, quantize_per_channel, qint8, per_channel_symmetric, model_bytes, Linear, manual_seed, np):
    manual_seed(4)
    lin = Linear(12, 5)
    q = Int8WeightLinear.from_float(lin)
    obs = PerChannelMinMaxObserver(ch_axis=0, dtype=qint8, qscheme=per_channel_symmetric)
    obs(lin.weight)
    scale, zp = obs.calculate_qparams()
    want = quantize_per_channel(lin.weight, scale, zp, 0, qint8).int_repr().data
    got = q.qweight.data
    assert got.dtype == np.int8 and np.array_equal(got, want), f"qweight: module 15's symmetric per-channel int8 quantization of the weight; expected int8 {want[0].tolist()} in row 0, got {got.dtype} {got[0].tolist()}"
    assert np.allclose(q.weight_scale.data, scale) and q.weight_scale.data.dtype == np.float32, f"weight_scale: the observer's scales as float32, got {q.weight_scale.data}"
    state = sorted(q.state_dict())
    assert state == ['bias', 'qweight', 'weight_scale'], f'the stored state is qweight, weight_scale and bias (no float32 weight); got {state}'
    assert model_bytes(q) == 12 * 5 + 4 * 5 + 4 * 5, f'60 int8 weights + 5 float32 scales + 5 biases = 100 bytes; got {model_bytes(q)}'
    lin.bias.data[0] = 99.0
    assert q.bias.data[0] != 99.0, f'copy the bias: the float layer must not change yours; your bias[0] is now {q.bias.data[0]}'
    deq = want.astype(np.float32) * np.asarray(scale, np.float32)[:, None]
    assert np.array_equal(q.dequantized, deq), f'dequantized = qweight.astype(float32) * weight_scale[:, None], computed once; expected {deq[0, :3].tolist()} to start row 0, got {q.dequantized[0, :3].tolist()}'
    none = Int8WeightLinear.from_float(Linear(4, 3, bias=False))
    assert none.bias is None, f'a Linear without bias gives an Int8WeightLinear without bias; got bias {none.bias}'

@test_case(points=None, hidden=False)
def test_int8_weight_linear_forward_computes_in_float32(Int8WeightLinear, Tensor, np):
    rng = np.random.default_rng(4)
    q = Int8WeightLinear(12, 5)
    q.qweight = Tensor(rng.integers(-127, 128, (5, 12)).astype(np.int8))
    q.weight_scale = Tensor((rng.random(5) * 0.01 + 0.001).astype(np.float32))
    q.bias = Tensor(rng.standard_normal(5).astype(np.float32))
    q.dequantized = q.qweight.data.astype(np.float32) * q.weight_scale.data[:, None]
    x = rng.standard_normal((3, 7, 12)).astype(np.float32)
    got = q(Tensor(x)).data
    assert got.shape == (3, 7, 5) and got.dtype == np.float32, f'(*, in) -> (*, out) float32; got {got.shape} {got.dtype}'
    want = x @ q.dequantized.T + q.bias.data
    assert np.allclose(got, want, rtol=1e-05, atol=1e-06), f'forward is x @ dequantized.T + bias; largest difference {np.abs(got - want).max():.2e}'
    q.bias = None
    out = q(Tensor(x[0])).data
    assert out.shape == (7, 5) and np.allclose(out, x[0] @ q.dequantized.T, rtol=1e-05, atol=1e-06), f'without a bias, forward is x @ dequantized.T; got shape {out.shape}'

@test_case(points=None, hidden=False)
def test_fused_mlp_matches_the_mlp(FusedMLP, Int8WeightLinear, MLP, Tensor, manual_seed, no_grad, np):
    manual_seed(5)
    mlp = MLP(8)
    mlp.eval()
    fused = FusedMLP(mlp)
    names = [n for n, _ in fused.named_parameters()]
    assert names == ['fc.weight', 'fc.bias', 'proj.weight', 'proj.bias'], f"FusedMLP keeps the MLP's layers, so its parameter names; got {names}"
    x = Tensor(np.random.default_rng(5).standard_normal((2, 6, 8)).astype(np.float32))
    with no_grad():
        want, got = (mlp(x).data, fused(x).data)
    assert got.shape == (2, 6, 8), f'(B, T, C) in, (B, T, C) out; got {got.shape}'
    assert np.allclose(got, want, rtol=1e-05, atol=1e-06), f'proj(bias_gelu(x W_fc^T, b_fc)) equals the MLP up to float rounding; largest difference {np.abs(got - want).max():.2e}'
    fused.fc = Int8WeightLinear.from_float(mlp.fc)
    with no_grad():
        q = fused(x).data
    pre = x.data.reshape(-1, 8) @ fused.fc.dequantized.T + fused.fc.bias.data
    gelu = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre ** 3)))
    want = gelu @ mlp.proj.weight.data.T + mlp.proj.bias.data
    assert np.allclose(q.reshape(-1, 8), want, rtol=0.0001, atol=1e-05), f'with an Int8WeightLinear fc, FusedMLP multiplies by its dequantized weight (linear_weight); largest difference {np.abs(q.reshape(-1, 8) - want).max():.2e}'

@test_case(points=None, hidden=False)
def test_perplexity_of_known_models(perplexity, Module, Tensor, np):

    class Uniform(Module):

        def forward(self, ids):
            return Tensor(np.zeros((*np.asarray(ids.data).shape, 7), np.float32))
    windows = np.random.default_rng(6).integers(0, 7, (3, 9))
    got = perplexity(Uniform(), windows)
    assert isinstance(got, float) and abs(got - 7.0) < 1e-09, f'equal logits over 7 tokens: perplexity 7, got {got!r}'

    class Sure(Module):

        def forward(self, ids):
            out = np.zeros((*np.asarray(ids.data).shape, 7), np.float32)
            out[..., 3] = 5.0
            return Tensor(out)
    always3 = np.full((2, 5), 3)
    want = float(np.exp(-(5.0 - np.log(np.exp(5.0) + 6.0))))
    got = perplexity(Sure(), always3)
    assert abs(got - want) < 1e-09, f'p(next) = e^5 / (e^5 + 6) at every position: perplexity {want:.6f}, got {got}'

@test_case(points=None, hidden=False)
def test_optimize_gpt_fuses_and_quantizes_a_copy(optimize_gpt, FusedMLP, Int8WeightLinear, GPT, Tensor, manual_seed, np):
    manual_seed(9)
    gpt = GPT(12, 24, 16, 2, 2)
    gpt.eval()
    before = {n: p.data.copy() for n, p in gpt.named_parameters()}
    opt = optimize_gpt(gpt)
    kinds = sorted({type(m).__name__ for m in opt.modules()} & {'MLP', 'FusedMLP', 'Linear', 'Int8WeightLinear'})
    assert kinds == ['FusedMLP', 'Int8WeightLinear'], f'every MLP fused, every Linear (attention output, MLP, head) INT8; module types found: {kinds}'
    changed = [n for n, p in gpt.named_parameters() if not np.array_equal(p.data, before[n])]
    assert changed == [], f'optimize_gpt works on a copy: the original GPT must not change; changed: {changed}'
    state = opt.state_dict()
    assert 'head.qweight' in state and 'tok_emb.weight' in state, f'the head is quantized (head.qweight); the embeddings stay float (tok_emb.weight); state keys {sorted(state)[:6]}...'
    assert not opt.training, f'optimize_gpt returns the model in eval mode; training={opt.training}'
    prompt = np.random.default_rng(9).integers(0, 12, 5)
    plain = gpt.generate(Tensor(prompt[None]), 10, top_k=1).data
    fused = optimize_gpt(gpt, int8_weights=False)
    got = fused.generate(Tensor(prompt[None]), 10, top_k=1).data
    assert np.array_equal(got, plain), f'fusing bias + GELU changes the rounding, not the model: the same greedy tokens here; expected {plain.tolist()}, got {got.tolist()}'
    same = optimize_gpt(gpt, int8_weights=False, fused_gelu=False)
    kinds = {type(m).__name__ for m in same.modules()}
    assert 'MLP' in kinds and 'FusedMLP' not in kinds and ('Int8WeightLinear' not in kinds), f'with both options off, optimize_gpt is a plain copy; got {sorted(kinds)}'

@test_case(points=None, hidden=False)
def test_generate_greedy_gives_module_13s_tokens(generate_greedy, GPT, Tensor, manual_seed, np):
    manual_seed(9)
    gpt = GPT(12, 24, 16, 2, 2)
    gpt.eval()
    prompt = np.random.default_rng(9).integers(0, 12, 5)
    plain = gpt.generate(Tensor(prompt[None]), 10, top_k=1).data
    cached = generate_greedy(gpt, prompt, 10)
    assert cached.dtype == np.int64 and cached.shape == (1, 15), f'(1, 5 + 10) int64 token ids; got {cached.dtype} {cached.shape}'
    assert np.array_equal(cached, plain), f"with the KV cache, greedy generation gives module 13's tokens exactly; expected {plain.tolist()}, got {cached.tolist()}"
    uncached = generate_greedy(gpt, prompt, 10, kv_cache=False)
    assert np.array_equal(uncached, plain), f"kv_cache=False is module 13's own generate, greedy; expected {plain.tolist()}, got {np.asarray(uncached).tolist()}"
    batch = np.stack([prompt, prompt[::-1]])
    both = generate_greedy(gpt, Tensor(batch), 4)
    want = gpt.generate(Tensor(batch), 4, top_k=1).data
    assert np.array_equal(both, want), f'a (B, P) prompt, array or Tensor, continues every row; expected {want.tolist()}, got {np.asarray(both).tolist()}'

