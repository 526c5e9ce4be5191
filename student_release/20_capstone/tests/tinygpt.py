from otter.test_files import test_case

OK_FORMAT = False

name = "tinygpt"
points = 0

@test_case(points=None, hidden=False)
def test_int8_weight_linear_stores_int8_and_computes_in_float32(Int8WeightLinear, PerChannelMinMaxObserver, quantize_per_channel, qint8, per_channel_symmetric, model_bytes, Linear, Tensor, manual_seed, np):
    manual_seed(4)
    lin = Linear(12, 5)
    q = Int8WeightLinear.from_float(lin)
    obs = PerChannelMinMaxObserver(ch_axis=0, dtype=qint8, qscheme=per_channel_symmetric)
    obs(lin.weight)
    scale, zp = obs.calculate_qparams()
    want = quantize_per_channel(lin.weight, scale, zp, 0, qint8).int_repr().data
    assert q.qweight.data.dtype == np.int8 and np.array_equal(q.qweight.data, want), "qweight: module 15's symmetric per-channel int8 quantization of the weight"
    assert np.allclose(q.weight_scale.data, scale) and q.weight_scale.data.dtype == np.float32, f"weight_scale: the observer's scales as float32, got {q.weight_scale.data}"
    state = sorted(q.state_dict())
    assert state == ['bias', 'qweight', 'weight_scale'], f'the stored state is qweight, weight_scale and bias (no float32 weight); got {state}'
    assert model_bytes(q) == 12 * 5 + 4 * 5 + 4 * 5, f'60 int8 weights + 5 float32 scales + 5 biases = 100 bytes; got {model_bytes(q)}'
    lin.bias.data[0] = 99.0
    assert q.bias.data[0] != 99.0, 'copy the bias: the float layer must not change yours'
    deq = want.astype(np.float32) * np.asarray(scale, np.float32)[:, None]
    assert np.array_equal(q.dequantized, deq), 'dequantized = qweight.astype(float32) * weight_scale[:, None], computed once'
    x = np.random.default_rng(4).standard_normal((3, 7, 12)).astype(np.float32)
    got = q(Tensor(x)).data
    assert got.shape == (3, 7, 5) and got.dtype == np.float32, f'(*, in) -> (*, out) float32; got {got.shape} {got.dtype}'
    assert np.allclose(got, x @ deq.T + q.bias.data, rtol=1e-05, atol=1e-06), 'forward is x @ dequantized.T + bias'
    none = Int8WeightLinear.from_float(Linear(4, 3, bias=False))
    assert none.bias is None and none(Tensor(np.ones((2, 4), np.float32))).shape == (2, 3), 'a Linear without bias gives an Int8WeightLinear without bias'

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
    assert np.allclose(q.reshape(-1, 8), gelu @ mlp.proj.weight.data.T + mlp.proj.bias.data, rtol=0.0001, atol=1e-05), 'with an Int8WeightLinear fc, FusedMLP multiplies by its dequantized weight (linear_weight)'

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
def test_optimize_gpt_and_greedy_generation(optimize_gpt, generate_greedy, FusedMLP, Int8WeightLinear, GPT, Tensor, manual_seed, np):
    manual_seed(9)
    gpt = GPT(12, 24, 16, 2, 2)
    gpt.eval()
    before = {n: p.data.copy() for n, p in gpt.named_parameters()}
    opt = optimize_gpt(gpt)
    kinds = sorted({type(m).__name__ for m in opt.modules()} & {'MLP', 'FusedMLP', 'Linear', 'Int8WeightLinear'})
    assert kinds == ['FusedMLP', 'Int8WeightLinear'], f'every MLP fused, every Linear (attention output, MLP, head) INT8; module types found: {kinds}'
    assert all((np.array_equal(p.data, before[n]) for n, p in gpt.named_parameters())), 'optimize_gpt works on a copy: the original GPT must not change'
    assert 'head.qweight' in opt.state_dict() and 'tok_emb.weight' in opt.state_dict(), 'the head is quantized (head.qweight); the embeddings stay float (tok_emb.weight)'
    assert not opt.training, 'optimize_gpt returns the model in eval mode'
    prompt = np.random.default_rng(9).integers(0, 12, 5)
    plain = gpt.generate(Tensor(prompt[None]), 10, top_k=1).data
    cached = generate_greedy(gpt, prompt, 10)
    assert cached.dtype == np.int64 and cached.shape == (1, 15), f'(1, 5 + 10) int64 token ids; got {cached.dtype} {cached.shape}'
    assert np.array_equal(cached, plain), "with the KV cache, greedy generation gives module 13's tokens exactly"
    assert np.array_equal(generate_greedy(gpt, prompt, 10, kv_cache=False), plain), "kv_cache=False is module 13's own generate, greedy"
    fused = optimize_gpt(gpt, int8_weights=False)
    assert np.array_equal(generate_greedy(fused, prompt, 10), plain), 'fusing bias + GELU changes the rounding, not the model: the same greedy tokens here'
    same = optimize_gpt(gpt, int8_weights=False, fused_gelu=False)
    kinds = {type(m).__name__ for m in same.modules()}
    assert 'MLP' in kinds and 'FusedMLP' not in kinds and ('Int8WeightLinear' not in kinds), f'with both options off, optimize_gpt is a plain copy; got {sorted(kinds)}'

