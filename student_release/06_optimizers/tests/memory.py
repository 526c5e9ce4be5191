from otter.test_files import test_case

OK_FORMAT = False

name = "memory"
points = 0

@test_case(points=None, hidden=False)
def test_state_bytes_counts_buffers(SGD, Adam, Tensor, np):
    p = Tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
    p.grad = Tensor(np.ones(1000, dtype=np.float32))
    plain = SGD([p], lr=0.1)
    plain.step()
    assert plain.state_bytes() == 0, f'plain SGD keeps no state: expected 0 bytes, got {plain.state_bytes()}'
    mom = SGD([p], lr=0.1, momentum=0.9)
    mom.step()
    assert mom.state_bytes() == 4000, f'momentum keeps one float32 buffer: 1000 * 4 = 4000 bytes, got {mom.state_bytes()} (1000 means you counted elements: use nbytes)'
    adam = Adam([p])
    adam.step()
    assert adam.state_bytes() == 8000, f'Adam keeps m and v: 2 * 1000 * 4 = 8000 bytes, got {adam.state_bytes()} (the integer step counter does not count)'

