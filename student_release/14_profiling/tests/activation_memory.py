from otter.test_files import test_case

OK_FORMAT = False

name = "activation_memory"
points = 0

@test_case(points=None, hidden=False)
def test_graph_activation_bytes_counts_storage_once(graph_activation_bytes, Linear, Tensor, np):
    x = Tensor(np.ones((4, 8), np.float32), requires_grad=True)
    got = graph_activation_bytes((x * 2.0).reshape(8, 4).sum())
    assert got == 132, f'x * 2 owns 128 bytes, its reshape is a view (0 more) and the sum owns 4: 132; got {got} (count each storage once, follow .base)'
    lin = Linear(6, 5)
    inp = Tensor(np.ones((3, 6), np.float32))
    got = graph_activation_bytes(lin(inp))
    assert got == 3 * 5 * 4, f'Linear (one fused node, module 03) keeps its output (3x5 floats): 60 bytes; the rows it saves are a view of the input, a leaf like W and b; got {got}'
    got = graph_activation_bytes(x)
    assert got == 0, f'a leaf alone keeps no activations: expected 0 bytes, got {got}'

