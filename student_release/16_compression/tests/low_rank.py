from otter.test_files import test_case

OK_FORMAT = False

name = "low_rank"
points = 0

@test_case(points=None, hidden=False)
def test_low_rank_linear_is_the_truncated_svd(low_rank_linear, Linear, Tensor, manual_seed, no_grad, np):
    manual_seed(0)
    lin = Linear(6, 4)
    full = low_rank_linear(lin, 4)
    assert full[0].weight.shape == (4, 6) and full[1].weight.shape == (4, 4), f'rank 4: weights (4, 6) then (4, 4), got {full[0].weight.shape}, {full[1].weight.shape}'
    assert full[0].bias is None and np.allclose(full[1].bias.numpy(), lin.bias.numpy()), f"the bias is added once: none in the first layer, the original {lin.bias.numpy().round(4)} in the second; got {getattr(full[0].bias, 'data', None)} and {getattr(full[1].bias, 'data', None)}"
    x = Tensor(np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32))
    with no_grad():
        out, ref = (full(x).numpy(), lin(x).numpy())
    assert np.allclose(out, ref, atol=1e-05), f'full rank reproduces the layer exactly (U Σ Vᵀ = W), max difference {np.abs(out - ref).max():.3g}'
    one = low_rank_linear(lin, 1)
    w = lin.weight.numpy().astype(np.float64)
    s = np.linalg.svd(w, compute_uv=False)
    got = np.linalg.norm(one[1].weight.numpy() @ one[0].weight.numpy() - w) / np.linalg.norm(w)
    expected = np.sqrt((s[1:] ** 2).sum() / (s ** 2).sum())
    assert np.isclose(got, expected, rtol=0.0001), f'rank 1 keeps the largest singular value: relative error {expected:.4f} expected (Eckart-Young), got {got:.4f} — are you keeping the *first* r values of s?'

