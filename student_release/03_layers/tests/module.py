from otter.test_files import test_case

OK_FORMAT = False

name = "module"
points = 0

@test_case(points=None, hidden=False)
def test_module_registers_parameters_and_children(Module, Parameter, Tensor, np):

    class Tiny(Module):

        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones((2, 2), dtype=np.float32))
            self.scale = 3.0

    class Outer(Module):

        def __init__(self):
            super().__init__()
            self.inner = Tiny()
            self.b = Parameter(np.zeros(2, dtype=np.float32))
    model = Outer()
    names = [n for n, _ in model.named_parameters()]
    assert names == ['b', 'inner.w'], f"named_parameters should list own parameters first, then children's with dotted names; got {names}"
    count = len(list(model.parameters()))
    assert count == 2, f'parameters() must yield b and inner.w once each (the optimizer steps exactly these): expected 2, got {count}'
    returned = model.eval()
    assert returned is model, f'eval() returns the module itself (for chaining), got {type(returned).__name__}'
    assert not model.inner.training, f'eval() must reach every sub-module, but inner.training is {model.inner.training}: a Dropout inside would keep dropping at test time'
    model.train()
    assert model.inner.training, f'train() must reach every sub-module, but inner.training is {model.inner.training}'

@test_case(points=None, hidden=False)
def test_state_dict_round_trip(Module, Parameter, Tensor, np):

    class Tiny(Module):

        def __init__(self):
            super().__init__()
            self.w = Parameter(np.arange(4, dtype=np.float32).reshape(2, 2))
    a, b = (Tiny(), Tiny())
    b.w.data[...] = 0
    state = a.state_dict()
    assert list(state) == ['w'] and isinstance(state['w'], np.ndarray), f'state_dict maps dotted names to NumPy arrays (module 07 saves them as .npz), got {state!r}'
    w_before = b.w
    b.load_state_dict(state)
    assert b.w is w_before, f'load_state_dict must copy in place (optimizers hold the Parameter), but b.w is now a new {type(b.w).__name__}'
    assert np.array_equal(b.w.data, a.w.data), f'load_state_dict did not copy the values: expected {a.w.data.tolist()}, got {b.w.data.tolist()}'
    try:
        b.load_state_dict({'w': np.zeros((3, 3), dtype=np.float32)})
    except RuntimeError:
        pass
    else:
        raise AssertionError('a shape mismatch must raise RuntimeError')
    b.w.grad = Tensor(np.ones((2, 2), dtype=np.float32))
    b.zero_grad()
    assert b.w.grad is None, f"zero_grad() sets every parameter's .grad to None (PyTorch's default), got {type(b.w.grad).__name__}: gradients accumulate, a stale one corrupts the next step"

