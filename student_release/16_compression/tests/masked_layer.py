from otter.test_files import test_case

OK_FORMAT = False

name = "masked_layer"
points = 0

@test_case(points=None, hidden=False)
def test_masked_linear_applies_the_mask_and_blocks_gradients(MaskedLinear, Linear, l1_unstructured, Tensor, manual_seed, np):
    manual_seed(0)
    lin = Linear(3, 2)
    lin.weight.data[...] = [[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]]
    lin.bias.data[...] = [0.5, -0.5]
    masked = MaskedLinear.from_linear(lin)
    assert masked.weight is lin.weight, f"from_linear shares the Parameters (same objects, so an optimizer holding lin's keeps training them), got a {type(masked.weight).__name__} that is not lin.weight"
    l1_unstructured(masked, 'weight', 0.5)
    x = Tensor([[1.0, 2.0, 3.0]])
    y = masked(x)
    assert np.allclose(y.numpy(), [[0.9 + 1.2 + 0.5, -2.1 - 0.5]]), f'only kept weights count: [0.9, 0, 0.4] and [0, 0, -0.7] give [[2.6, -2.6]], got {y.numpy().tolist()}'
    stored = masked.weight.numpy()
    assert np.allclose(stored, [[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]]), f"the Parameter keeps the trained values (PyTorch's weight_orig): multiply in forward, never the stored .data; it now holds {np.round(stored, 4).tolist()}"
    y.sum().backward()
    g = masked.weight.grad.numpy()
    assert np.allclose(g, [[1.0, 0.0, 3.0], [0.0, 0.0, 3.0]]), f'pruned weights get a zero gradient (grad * mask), expected [[1, 0, 3], [0, 0, 3]], got {g.tolist()}: build the masked weight with Tensor operations'

