"""The root causes the differential fuzzer found in modules 01-07, one reproduction each.

Each line of ``ROOT_CAUSES`` is a fuzzer reproduction (minimised, in the vocabulary of
``namespaces.py``) that differed from PyTorch in the reference before the fix (checked against
the reference of commit d2d5e09). ``GUARDS`` are edge cases the fixes must keep (they agreed
before, or only an intermediate fix got them wrong). ``tests/parity/test_fuzz.py`` runs every
line in both libraries and requires the same outcome. Later modules append their own.
"""

from __future__ import annotations

#: (root cause, reproduction line)
ROOT_CAUSES: list[tuple[str, str]] = [
    # type promotion: default float32, weak numbers (Python and NumPy), 0-d tensors
    ("promotion: an int tensor times a float is float32",
     "a = T([1, 2], 'int64'); out = a * 0.5"),
    ("promotion: NumPy numbers are weak", "a = T([1, 2], 'int8'); out = a + np.int32(5)"),
    ("promotion: a 0-d tensor does not widen a tensor with dimensions",
     "a = T([1.0], 'float32'); b = T(2.0, 'float64'); out = a + b"),
    ("promotion: int64 with float32 tensors is float32",
     "a = T([1, 2], 'int64'); b = T([0.5, 1.5], 'float32'); out = a + b"),
    ("promotion: a bool tensor with a NumPy int is int64",
     "a = T([True, False], 'bool'); out = a * np.int32(3)"),
    ("promotion: a small int dtype keeps its dtype with a number (and wraps)",
     "a = T([1, 2], 'int8'); out = a + 300"),
    ("promotion: comparisons promote (float32 == np.float64(0.1) compares in float32)",
     "a = T([0.1], 'float32'); out = a == np.float64(0.1)"),
    ("promotion: unsigned with a 0-d signed tensor wraps like PyTorch",
     "a = T([0], 'uint8'); b = T(-3, 'int64'); out = a <= b"),
    # integer inputs to float operations
    ("exp/log/sqrt/tanh of integers are float32", "a = T([1, 4], 'int64'); out = a.sqrt()"),
    ("sigmoid of integers is float32, not integer zeros",
     "a = T([1, -2], 'int64'); out = F.sigmoid(a)"),
    ("pow: an int tensor to a float power is float32", "a = T([4, 9], 'int64'); out = a ** 0.5"),
    ("clamp of an int tensor with a float bound is float32",
     "a = T([1, 2], 'int64'); out = a.clamp(min=0.5)"),
    # missing operators and conversions
    ("__rpow__", "a = T([1.0, 2.0], 'float32', grad=True); out = 2 ** a"),
    ("floor division and remainder", "a = T([5, -5], 'int64'); out = (a // 2, a % -3)"),
    ("__bool__ of a multi-element tensor raises", "a = T([0.0, 1.0], 'float32'); out = bool(a)"),
    ("__bool__ of a one-element tensor is its value", "a = T([0.0], 'float32'); out = bool(a)"),
    ("__float__ and __int__", "a = T([2.5], 'float32'); out = (float(a), int(a))"),
    ("in-place operators write into the tensor (and its views)",
     "a = T([[1.0, 2.0]], 'float32'); v = a[0]; v += 1; out = a"),
    ("in-place on a leaf that requires grad raises",
     "a = T([1.0], 'float32', grad=True); a += 1; out = a"),
    ("in-place float into an int tensor raises", "a = T([1, 2], 'int64'); a += 0.5; out = a"),
    ("bool subtraction raises", "a = T([True], 'bool'); out = a - 0.5"),
    ("abs of bool raises", "a = T([True], 'bool'); out = a.abs()"),
    (".float()/.double() keep the graph",
     "a = T([1.0, 2.0], 'float32', grad=True); out = a.double() * 2"),
    ("requires_grad on an integer tensor raises", "out = T([1, 2], 'int64', grad=True)"),
    ("factories: full infers its dtype from the value", "out = lib.full((2,), 3)"),
    ("factories: arange with a float argument is float32", "out = lib.arange(0, 2, 0.5)"),
    ("factories: arange refuses an inconsistent step", "out = lib.arange(0, -3, 0.5)"),
    # indexing and views
    ("indexing: integers are applied before index arrays",
     "a = T([[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]], 'float32', grad=True); "
     "i = T([1, 0], 'int64'); out = a[0, :, i]"),
    ("indexing: a negative slice step raises", "a = T([1.0, 2.0], 'float32'); out = a[::-1]"),
    ("indexing: an empty index list selects nothing", "a = T([1.0, 2.0], 'float32'); out = a[[]]"),
    ("view works when the strides allow it, not only when contiguous",
     "a = T([1.0, 2.0, 3.0], 'float32'); x = a[::2]; out = x.view(2, 1)"),
    ("a tensor with no elements is contiguous",
     "a = T([], 'float32', shape=(3, 0)); out = a.T.is_contiguous()"),
    ("transpose of a 0-d tensor", "a = T(2.0, 'float32'); out = a.transpose(0, -1)"),
    # reductions
    ("reductions: dim=() reduces everything", "a = T([[1.0, 2.0]], 'float32'); out = a.sum(dim=())"),
    ("reductions: integer sums are int64", "a = T([200, 100], 'uint8'); out = a.sum()"),
    ("reductions: the mean of integers raises", "a = T([1, 2], 'int64'); out = a.mean()"),
    ("argmax with keepdim and no dim", "a = T([[1.0, 3.0]], 'float32'); out = a.argmax(keepdim=True)"),
    # matmul and layers
    ("matmul of different dtypes raises",
     "a = T([1.0, 2.0], 'float32'); b = T([1.0, 2.0], 'float64'); out = a @ b"),
    ("Linear with a float64 input raises",
     "x = T([[1.0, 2.0]], 'float64'); m = nn.Linear(2, 1); out = m(x)"),
    ("Flatten refuses out-of-range dims", "a = T([[1.0]], 'float32'); out = nn.Flatten(0, 5)(a)"),
    ("Flatten of a 0-d tensor with start_dim=1 raises", "a = T(1.0, 'float32'); out = nn.Flatten()(a)"),
    # activations
    ("softmax of an empty row", "a = T([], 'float32', shape=(2, 0)); out = F.softmax(a, dim=1)"),
    ("softmax of an integer tensor raises", "a = T([1, 2], 'int64'); out = F.softmax(a, dim=0)"),
    # gradients at non-differentiable points and edges
    ("ReLU's gradient at 0 is 0", "a = T([0.0, 1.0], 'float32', grad=True); out = F.relu(a)"),
    ("ReLU passes the gradient of a NaN input", "a = T([nan], 'float32', grad=True); out = F.relu(a)"),
    ("x ** 0 has gradient 0 at 0", "a = T([0.0, 2.0], 'float32', grad=True); out = a ** 0"),
    ("pow's gradient is grad * (p * a ** (p - 1)): in float32 the bracket overflows first",
     "a = T([5e12], 'float32', grad=True); out = (a ** 4) * 0.25"),
    ("the same order with a tensor exponent",
     "a = T([5e12], 'float32', grad=True); b = T([4.0], 'float32'); out = (a ** b) * 0.25"),
    ("the exponent's gradient is grad * (out * log(base)) (the bracket overflows first)",
     "a = T(-3.734375, 'float32', grad=True); out = (1e-10 ** a) * 0.1"),
    ("x ** -0.5 is 1 / sqrt(x) (C's pow differs at -0.0 and -inf)",
     "a = T([-0.0, -inf, 4.0], 'float32', grad=True); out = a ** -0.5"),
    ("the gradient of x ** 0.5 uses 1 / sqrt(x) too",
     "a = T([-0.0, -inf, 4.0], 'float32', grad=True); out = a ** 0.5"),
    ("number / tensor is a reciprocal, then a product (where its gradient overflows)",
     "a = T([0.0, nan, 1e-30, 2.0], 'float32', grad=True); out = False / a"),
    ("clamp's gradient uses where (inf * 0 is not NaN)",
     "a = T([0.0], 'float32', grad=True); out = F.relu(a).sqrt()"),
    ("abs' at NaN is 0", "a = T([nan, -1.0], 'float32', grad=True); out = a.abs()"),
    ("a NaN maximum takes the whole gradient",
     "a = T([0.0, nan, 1.0], 'float32', grad=True); out = a.max() * 2"),
    ("a second backward through a freed graph raises",
     "a = T([1.0], 'float32', grad=True); y = (a * a).sum(); y.backward(); y.backward(); "
     "out = a.grad; no_backward = True"),
    ("retain_graph=True keeps the graph",
     "a = T([1.0], 'float32', grad=True); y = (a * a).sum(); y.backward(retain_graph=True); "
     "y.backward(); out = a.grad; no_backward = True"),
    ("number % tensor has no derivative",
     "a = T([1.5], 'float32', grad=True); out = 3.0 % a"),
    ("assigning a gradient of the wrong shape raises",
     "a = T([1.0, 2.0], 'float32', grad=True); a.grad = T([1.0], 'float32'); out = a.grad"),
    # losses
    ("cross-entropy with every target ignored: NaN mean, zero gradients",
     "x = T([[1.0, 2.0]], 'float32', grad=True); t = T([-100], 'int64'); "
     "out = F.cross_entropy(x, t)"),
    ("cross-entropy with a masked (-inf) class stays finite",
     "x = T([[0.0, 0.0, -inf]], 'float32', grad=True); t = T([0], 'int64'); "
     "out = F.cross_entropy(x, t)"),
    ("label smoothing above 1 raises, at or below 0 means none",
     "x = T([[0.0, 1.0]], 'float32'); t = T([0], 'int64'); "
     "out = (F.cross_entropy(x, t, label_smoothing=-0.1), F.cross_entropy(x, t))"),
    ("loss modules check their arguments when called",
     "m = nn.MSELoss(reduction='avg'); out = 0"),
    ("BCE refuses targets outside [0, 1]",
     "x = T([0.5], 'float32'); t = T([2.0], 'float32'); out = F.binary_cross_entropy(x, t)"),
    ("BCE refuses NaN inputs", "x = T([nan], 'float32'); t = T([0.0], 'float32'); "
     "out = F.binary_cross_entropy(x, t)"),
    # optimizers and schedulers
    ("Adam refuses a negative weight decay",
     "p = T([1.0], 'float32', grad=True); out = optim.Adam([p], weight_decay=-0.1)"),
    ("optimizer defaults have PyTorch's types",
     "p = T([1.0], 'float32', grad=True); o = optim.SGD([p], lr=0.1); "
     "out = [o.defaults[k] for k in ('momentum', 'dampening', 'weight_decay')]"),
    ("LinearLR(total_iters=0) keeps start_factor",
     "p = T([1.0], 'float32', grad=True); o = optim.SGD([p], lr=1.0); "
     "s = lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=0); o.step(); s.step(); "
     "out = s.get_last_lr()"),
    ("clip_grad_norm_ with a NaN gradient makes every gradient NaN",
     "a = T([0.0], 'float32', grad=True); b = T([0.0], 'float32', grad=True); "
     "a.grad = T([nan], 'float32'); b.grad = T([1.0], 'float32'); "
     "n = clip_grad_norm_([a, b], 1.0); out = [n, a.grad, b.grad]; no_backward = True"),
    ("clip_grad_norm_ with norm_type 0 and -inf",
     "a = T([0.0, 0.0], 'float32', grad=True); a.grad = T([3.0, 0.0], 'float32'); "
     "out = [clip_grad_norm_([a], 5.0, norm_type=0.0), "
     "clip_grad_norm_([a], 5.0, norm_type=-inf)]; no_backward = True"),
    # module 09
    ("max pooling: a NaN maximum takes the gradient (the last NaN of its window)",
     "x = T([[[nan, 1.0], [nan, 2.0]]], 'float32', grad=True); out = F.max_pool2d(x, 2)"),
    ("max pooling: an infinite gradient is not multiplied by 0 elsewhere in the window",
     "x = T([[[1.0, 1.0], [0.0, 0.0]]], 'float32', grad=True); out = F.max_pool2d(x, 2) * inf"),
    ("conv2d: an input and weights of different dtypes raise",
     "x = T([[[[1.0]]]], 'float64'); w = T([[[[1.0]]]], 'float32'); out = F.conv2d(x, w)"),
    # issue 30 (modules 01-18; each differed from PyTorch, or was missing, at commit af88ff3)
    ("abs(t), Python's builtin", "a = T([1.0, -2.0], 'float32', grad=True); out = abs(a)"),
    ("a list index holding lists is read as a tuple",
     "a = T([[1.0, 2.0], [3.0, 4.0]], 'float32', grad=True); out = a[[[0, 1]]]"),
    ("Tensor(data) keeps NumPy float64 numbers float64",
     "out = tensor_of([np.float64(1.5), 2]); no_backward = True"),
    ("Tensor(data) refuses an int beyond int64", "out = tensor_of([1, 2**63]); no_backward = True"),
    ("class-index targets must be int64 (or uint8 for (N, C) inputs)",
     "x = T([[1.0, 2.0]], 'float32'); t = T([0], 'int32'); out = F.cross_entropy(x, t)"),
    ("BCE refuses a target of another dtype",
     "x = T([0.5], 'float32'); t = T([1.0], 'float64'); out = F.binary_cross_entropy(x, t)"),
    ("BCE with logits returns the target's dtype",
     "x = T([0.5], 'float64', grad=True); t = T([1.0], 'float32'); "
     "out = F.binary_cross_entropy_with_logits(x, t)"),
    ("MSE promotes a 0-d target as if broadcast first",
     "x = T([0.5], 'float32', grad=True); t = T(1.0, 'float64'); out = F.mse_loss(x, t)"),
    ("DataLoader(batch_size=None): no batching",
     "ds = data.TensorDataset(T([1.0, 2.0], 'float32'), T([3, 4], 'int64')); "
     "out = [b for b in data.DataLoader(ds, batch_size=None)]; no_backward = True"),
    ("transforms.pad refuses a reflect padding as wide as the image",
     "x = T([[[1.0]]], 'float32'); out = tv.pad(x, 1, padding_mode='reflect'); no_backward = True"),
    ("conv2d: dilation and groups",
     "x = T([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[0.5, 1.0, 1.5], [2.0, 2.5, "
     "3.0], [3.5, 4.0, 4.5]]]], 'float32', grad=True); w = T([[[[1.0, -1.0], [2.0, 0.5]]], "
     "[[[0.25, 1.0], [-1.0, 2.0]]]], 'float32', grad=True); "
     "out = F.conv2d(x, w, None, 1, 0, 2, 2)"),
    ("conv2d: padding='same' pads the odd extra row at the bottom",
     "x = T([[[[1.0, 2.0], [3.0, 4.0]]]], 'float32', grad=True); "
     "w = T([[[[1.0, 2.0], [3.0, 4.0]]]], 'float32'); out = F.conv2d(x, w, padding='same')"),
    ("max pooling: ceil_mode and dilation",
     "x = T([[[1.0, 5.0, 2.0, 4.0, 3.0]]], 'float32', grad=True); "
     "out = F.max_pool2d(x, (1, 2), 2, 0, (1, 2), True)"),
    ("average pooling: count_include_pad=False, ceil_mode, divisor_override",
     "x = T([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]], 'float32', grad=True); "
     "out = [F.avg_pool2d(x, 2, 2, 1, True, False), F.avg_pool2d(x, 2, 1, divisor_override=3)]"),
    ("integer pooling", "x = T([[[-7, 0], [0, 0]]], 'int64'); out = [F.avg_pool2d(x, 2), "
     "F.max_pool2d(x, 2, 1, 1)]"),
    ("MultiheadAttention defaults to batch_first=False", "out = nn.MultiheadAttention(4, 2).batch_first"),
    ("MultiheadAttention: a query with no allowed key is NaN with need_weights=True",
     "x = T([[[1.0, 0.0], [0.0, 1.0]]], 'float32'); m = T([[True, True], [False, True]], 'bool');"
     " a = nn.MultiheadAttention(2, 1, batch_first=True); "
     "load(a, in_proj_weight=A([[1.0, 0.0], [0.0, 1.0]] * 3, 'float32'), "
     "out_proj__weight=A([[1.0, 0.0], [0.0, 1.0]], 'float32')); "
     "out = [a(x, x, x, attn_mask=m)[0], a(x, x, x, attn_mask=m, need_weights=False)[0]]; "
     "no_backward = True"),
    ("SDPA: a float mask that requires grad gets its gradient",
     "q = T([[1.0, 0.0], [0.0, 1.0]], 'float32'); m = T([[0.0, 0.5], [1.0, 0.0]], 'float32', "
     "grad=True); out = F.scaled_dot_product_attention(q, q, q, attn_mask=m)"),
    ("SDPA: a float64 mask with float32 queries raises",
     "q = T([[1.0, 0.0]], 'float32'); m = T([[0.0]], 'float64'); "
     "out = F.scaled_dot_product_attention(q, q, q, attn_mask=m)"),
    ("SDPA: a NaN or +inf score makes its row NaN",
     "q = T([[1.0]], 'float32'); k = T([[1.0], [1.0]], 'float32'); m = T([[0.0, inf]], "
     "'float32'); out = F.scaled_dot_product_attention(q, k, k, attn_mask=m)"),
    ("F.layer_norm refuses an int normalized_shape and integer inputs",
     "x = T([[1.0, 2.0]], 'float32'); out = F.layer_norm(x, 2)"),
    ("Embedding.from_pretrained keeps the table's dtype",
     "w = T([[1.0, 2.0]], 'float64'); out = nn.Embedding.from_pretrained(w).weight"),
    ("quantize_per_tensor rounds x/s + z once (fused multiply-add)",
     "x = T([0.05, 0.15, 0.25, 0.35], 'float32'); "
     "out = lib.quantize_per_tensor(x, 0.1, 3, lib.quint8).int_repr()"),
    ("quantize_per_tensor: NaN to the top of the range, any scale, float32 only",
     "x = T([nan, 1.0], 'float32'); out = [lib.quantize_per_tensor(x, 0.0, 0, lib.qint8)"
     ".int_repr(), lib.quantize_per_tensor(x, -0.5, 0, lib.qint8).int_repr()]"),
    ("observers: int32 zero points for affine schemes",
     "o = obs.MinMaxObserver(); o(T([-1.0, 2.0], 'float32')); out = list(o.calculate_qparams()); "
     "no_backward = True"),
    ("fake_quantize_per_tensor_affine: rounds, then adds the zero point; straight-through grad",
     "x = T([0.05, 0.15, 9.0, nan], 'float32', grad=True); "
     "out = lib.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 15)"),
    ("pruning masks have the parameter's dtype",
     "m = PR.prunable(nn.Linear(2, 2).double()); PR.l1_unstructured(m, 'weight', 1); "
     "out = m.weight_mask.dtype; no_backward = True"),
    ("module 18 kernels keep the dtype; integers wrap",
     "a = T([[100, 100]], 'int8'); b = T([[2], [1]], 'int8'); "
     "out = [K.loops(a, b), K.broadcast(a, b), K.blocked(a, b, 1)]; no_backward = True"),
    ("bias_gelu halves before multiplying (no overflow near float32's maximum)",
     "x = T([[-2.0]], 'float32', grad=True); b = T([3e38], 'float32'); out = K.bias_gelu(x, b)"),
    ("gelu_tanh's cube is x * x * x: no NaN gradient where 3x² overflows but x² does not",
     "a = T([1.5e19, -1.5e19], 'float32', grad=True); out = F.gelu(a, approximate='tanh')"),
    ("Conv2d padding_mode: reflect, replicate and circular pad with the image's pixels",
     "x = T([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]], 'float32', grad=True); "
     "w = A([[[[1.0, 2.0], [3.0, 4.0]]]], 'float32'); "
     "out = [load(nn.Conv2d(1, 1, 2, padding=1, padding_mode=m, bias=False), weight=w)(x) "
     "for m in ('reflect', 'replicate', 'circular')]; no_backward = True"),
    ("Conv2d padding_mode with padding='same' pads the odd extra row at the bottom",
     "x = T([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]], 'float32', grad=True); "
     "w = A([[[[1.0, 2.0], [3.0, 4.0]]]], 'float32'); "
     "out = load(nn.Conv2d(1, 1, 2, padding='same', padding_mode='reflect', bias=False), "
     "weight=w)(x)"),
    ("max_pool2d return_indices: the padding never wins over a real -inf; NaN to the last NaN",
     "x = T([[[-inf, -inf, 1.0], [nan, 2.0, nan]]], 'float32'); "
     "out = list(F.max_pool2d(x, 2, 1, 1, return_indices=True))"),
    ("max_unpool2d puts each value back where max_pool2d found it",
     "x = T([[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 7.0]]], 'float32', grad=True); "
     "p, i = F.max_pool2d(x, 2, return_indices=True); out = F.max_unpool2d(p, i, 2)"),
    ("max_unpool2d into an empty plane: the forward is empty, the backward's gather fails "
     "(found by the long run, seed 20261206)",
     "x = T([[[0.0, 1.0, 2.0]]], 'float32', grad=True); "
     "p, i = F.max_pool2d(x, 2, 2, 1, ceil_mode=True, return_indices=True); "
     "out = F.max_unpool2d(p, i, 2, None, 1)"),
    ("DataLoader takes PyTorch's positional order (drop_last is the ninth)",
     "ds = data.TensorDataset(T([1, 2, 3], 'int64')); "
     "out = [b for b in data.DataLoader(ds, 2, False, None, None, 0, None, False, True)]; "
     "no_backward = True"),
    ("a binary operation's gradient is computed at the result's dtype, then cast to the "
     "input's (found by the long run, seed 20261208)",
     "a = T([1.0], 'float32'); b = T(1e-30, 'float64', grad=True); out = a / b"),
    ("ln_mask: an inf norm over an empty dimension raises, as vector_norm does (found by the "
     "long run, seed 20261208)",
     "t = T([], 'float32', shape=(0, 4, 0)); out = PR.ln_mask(t, 0.5, inf, -1)"),
]

#: (edge case, reproduction line): agreed before the fixes; must keep agreeing.
GUARDS: list[tuple[str, str]] = [
    ("true division converts each integer operand straight to float32",
     "a = T([-1], 'int8'); b = T(1073741823, 'int32'); out = a / b"),
    ("an int tensor to a negative int power raises", "a = T([4, 9], 'int64'); out = a ** -1"),
    ("integer floor division by zero raises", "a = T([1, 2], 'int64'); out = a // 0"),
    ("integer division by zero of an empty tensor does not raise",
     "a = T([], 'int64', shape=(0,)); out = a // 0"),
    ("an Ellipsis covering no dimension does not separate index arrays",
     "a = T([[1.0, 2.0]], 'float32'); i = T([0], 'int64'); m = T([True, False], 'bool'); "
     "out = a[i, ..., m]"),
    ("softmax of a 0-d tensor", "a = T(2.0, 'float32'); out = F.log_softmax(a, dim=0)"),
    ("graphs without saved values can be walked twice",
     "a = T([1.0], 'float32', grad=True); y = (a + 1).sum(); y.backward(); y.backward(); "
     "out = a.grad; no_backward = True"),
    ("a bool tensor to a bool power", "a = T([False, True], 'bool'); out = a ** False"),
    ("integer tensor exponents may be negative (truncated results)",
     "a = T([-2, -1, 0, 1, 2], 'int64'); b = T([-1, -3, -2, -5, -2], 'int64'); out = a ** b"),
    ("a 0-d tensor accepts dim 0 and -1",
     "a = T(3.0, 'float32'); out = (a.argmax(dim=0), tuple(a.max(dim=-1)), a.sum(dim=0))"),
    ("mixed-dtype products and remainders: both gradients at the result's dtype",
     "a = T([1.0, 3.0], 'float32', grad=True); b = T(1e-30, 'float64', grad=True); "
     "out = (a * b, a % b)"),
    ("ln_mask: a -inf norm over an empty dimension raises",
     "t = T([], 'float32', shape=(3, 0)); out = PR.ln_mask(t, 0.5, -inf, 0)"),
    ("ln_mask: an inf norm with only `dim` itself empty does not raise",
     "t = T([], 'float32', shape=(0, 3)); out = PR.ln_mask(t, 0.5, -inf, 0)"),
]
