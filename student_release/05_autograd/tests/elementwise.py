from otter.test_files import test_case

OK_FORMAT = False

name = "elementwise"
points = 0

@test_case(points=None, hidden=False)
def test_elementwise_formulas_directly(grad_add, grad_sub, grad_mul, grad_div, grad_neg, grad_pow, grad_exp, grad_log, grad_sqrt, grad_tanh, grad_abs, grad_clamp, Tensor, np):

    def check(name, fn, y, g, expected, why):
        got = fn(g, y._node, y.data)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected), f'{name}: expected {len(expected)} gradient(s), one per input, got {len(got)}: {why}'
        for i, (gi, ei) in enumerate(zip(got, expected)):
            gi = np.asarray(gi)
            shown = np.round(gi, 4).tolist() if gi.shape == ei.shape else f'shape {gi.shape}'
            assert gi.shape == ei.shape and np.allclose(gi, ei, rtol=1e-05, atol=1e-06), f'{name}, input {i}: expected {np.round(ei, 4).tolist()} (shape {ei.shape}), got {shown}: {why}'
    a = Tensor([0.5, -2.0, 3.0], requires_grad=True)
    b = Tensor([2.0, 4.0, -1.0], requires_grad=True)
    c = Tensor([0.5, 2.0, 4.0], requires_grad=True)
    A, B, C = (t.numpy().astype(np.float64) for t in (a, b, c))
    g = np.array([1.0, 10.0, 100.0], dtype=np.float32)
    check('a + b', grad_add, a + b, g, [g, g], 'd(a + b)/da = d(a + b)/db = 1')
    check('a - b', grad_sub, a - b, g, [g, -g], "d(a - b)/db = -1: b's gradient is -grad")
    check('a * b', grad_mul, a * b, g, [g * B, g * A], "each input's gradient is grad times the *other* input")
    check('a / b', grad_div, a / b, g, [g / B, -g * A / B ** 2], 'd(a/b)/da = 1/b and d(a/b)/db = -a/b²')
    check('-a', grad_neg, -a, g, [-g], 'negation flips the sign of the gradient')
    check('a ** 3', grad_pow, a ** 3, g, [g * 3 * A ** 2], 'the power rule n·a^(n-1), with n from node.saved')
    check('a.exp()', grad_exp, a.exp(), g, [g * np.exp(A)], 'exp is its own derivative: grad * out')
    check('c.log()', grad_log, c.log(), g, [g / C], 'd log(c)/dc = 1/c')
    check('c.sqrt()', grad_sqrt, c.sqrt(), g, [g / (2 * np.sqrt(C))], 'd sqrt(c)/dc = 1 / (2·sqrt(c)) = 0.5 / out')
    check('a.tanh()', grad_tanh, a.tanh(), g, [g * (1 - np.tanh(A) ** 2)], 'd tanh(a)/da = 1 - out²')
    check('a.abs()', grad_abs, a.abs(), g, [g * np.sign(A)], 'd|a|/da = sign(a)')
    check('a.clamp(-1, 1)', grad_clamp, a.clamp(min=-1.0, max=1.0), g, [g * ((A >= -1) & (A <= 1))], 'clamp passes the gradient only where a was inside the bounds (0 where it was clipped)')

