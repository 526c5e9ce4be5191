"""PyTorch parity · module 14 (profiling): FLOP counts against ``torch.utils.flop_counter``
(Linear, Conv2d with stride/padding/groups, scaled dot-product attention, MultiheadAttention
on the same shapes), parameter counts of equivalent torch models, the activation bytes of the
graph against a hand count, and forward hooks with torch's semantics (torch 2.13).

Our convention adds to torch's matrix-product FLOPs the bias adds (1 per output), softmax
(5 per score) and element-wise layers; each test subtracts them by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_f
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

import tinytorch_ref as tt
from tinytorch_ref import profiling as P

pytestmark = pytest.mark.parity
torch.set_num_threads(1)


def torch_flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


@pytest.mark.parametrize("shape,out,bias", [((7, 5), 3, True), ((2, 4, 6), 9, False),
                                            ((6,), 4, True), ((2, 3, 4, 5), 2, True)])
def test_linear_flops_match_torch(shape, out, bias):
    lin = torch.nn.Linear(shape[-1], out, bias=bias)
    theirs = torch_flops(lambda: lin(torch.randn(*shape)))
    rows = int(np.prod(shape[:-1]))
    assert P.linear_flops(shape, out, bias) - (rows * out if bias else 0) == theirs


@pytest.mark.parametrize("cin,cout,k,stride,padding,groups,hw", [
    (3, 8, 3, 1, 0, 1, (9, 9)), (3, 8, 3, 2, 1, 1, (9, 7)), (4, 8, (3, 1), 1, 0, 2, (6, 6)),
    (6, 6, 5, 2, 2, 3, (11, 8)), (1, 16, 1, 1, 0, 1, (4, 4))])
def test_conv2d_flops_match_torch(cin, cout, k, stride, padding, groups, hw):
    conv = torch.nn.Conv2d(cin, cout, k, stride=stride, padding=padding, groups=groups)
    x = torch.randn(2, cin, *hw)
    theirs = torch_flops(lambda: conv(x))
    out_shape = tuple(conv(x).shape)
    outputs = int(np.prod(out_shape))
    assert P.conv2d_flops(out_shape, cin, k, True, groups) - outputs == theirs


@pytest.mark.parametrize("q,k,v", [((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)),
                                   ((4, 6, 16), (4, 9, 16), (4, 9, 16)),
                                   ((1, 2, 1, 8), (1, 2, 12, 8), (1, 2, 12, 8))])
def test_attention_flops_match_torch(q, k, v):
    tq, tk, tv = torch.randn(*q), torch.randn(*k), torch.randn(*v)
    with sdpa_kernel(SDPBackend.MATH):  # the fused CPU kernel is invisible to the counter
        theirs = torch_flops(lambda: torch_f.scaled_dot_product_attention(tq, tk, tv))
    assert theirs > 0, "torch's counter did not see the attention"
    assert P.attention_flops(q, k, v) == theirs


@pytest.mark.parametrize("e,h,n,length,source,bias", [(16, 4, 2, 5, 5, True),
                                                      (12, 3, 3, 4, 7, False),
                                                      (8, 1, 1, 6, 2, True)])
def test_multihead_attention_flops_match_torch(e, h, n, length, source, bias):
    theirs_mha = torch.nn.MultiheadAttention(e, h, bias=bias, batch_first=True)
    q, kv = torch.randn(n, length, e), torch.randn(n, source, e)
    # need_weights=True runs the explicit bmm path, which torch's counter sees
    theirs = torch_flops(lambda: theirs_mha(q, kv, kv, need_weights=True))
    ours_mha = tt.nn.MultiheadAttention(e, h, bias=bias, batch_first=True)
    tq, tkv = tt.Tensor(q.numpy()), tt.Tensor(kv.numpy())
    ours = (P.module_flops(ours_mha, (tq, tkv, tkv), ours_mha(tq, tkv, tkv))
            + P.linear_flops((n, length, e), e, bias))  # out_proj, a child row
    bias_adds = (n * length * e + 2 * n * source * e + n * length * e) if bias else 0
    softmax = 5 * n * h * length * source
    assert ours - bias_adds - softmax == theirs


def _torch_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_counts_match_torch_models():
    ours = tt.nn.Sequential(tt.nn.Linear(64, 128), tt.nn.ReLU(), tt.nn.Dropout(0.1),
                            tt.nn.Linear(128, 10, bias=False))
    theirs = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                 torch.nn.Dropout(0.1), torch.nn.Linear(128, 10, bias=False))
    got = P.parameters_by_module(ours)
    assert got == {n: sum(p.numel() for p in m.parameters(recurse=False))
                   for n, m in theirs.named_modules()
                   if any(True for _ in m.parameters(recurse=False))}
    assert sum(got.values()) == _torch_count(theirs)
    ours_att = tt.nn.Sequential(tt.nn.Embedding(65, 32), tt.nn.MultiheadAttention(32, 4))
    theirs_att = torch.nn.Sequential(torch.nn.Embedding(65, 32),
                                     torch.nn.MultiheadAttention(32, 4))
    got = P.parameters_by_module(ours_att)
    assert sum(got.values()) == _torch_count(theirs_att)
    assert got["1"] == 3 * 32 * 32 + 3 * 32 and got["1.out_proj"] == 32 * 32 + 32


def test_tied_weights_are_counted_once_like_torch():
    ours = tt.nn.Sequential(tt.nn.Linear(8, 8), tt.nn.Linear(8, 8))
    ours[1].weight = ours[0].weight
    theirs = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8))
    theirs[1].weight = theirs[0].weight
    assert sum(P.parameters_by_module(ours).values()) == _torch_count(theirs) == 72 + 8


def test_activation_bytes_of_an_mlp_by_hand():
    tt.manual_seed(0)
    b = 16
    mlp = tt.nn.Sequential(tt.nn.Linear(10, 20), tt.nn.ReLU(), tt.nn.Linear(20, 5))
    got = P.graph_activation_bytes(mlp(tt.Tensor(np.ones((b, 10), np.float32))))
    # each Linear is one node (module 03's fused linear, like torch's addmm) keeping its output
    # and its input rows: a view of the leaf input for the first, of ReLU's output (kept by
    # ReLU already) for the second; ReLU keeps its output.
    assert got == 4 * b * 20 + 4 * b * 20 + 4 * b * 5


# ----------------------------------------------------------------------------- forward hooks
def _both(fn_ours, fn_theirs):
    ours = tt.nn.Linear(3, 2)
    theirs = torch.nn.Linear(3, 2)
    with torch.no_grad():
        theirs.weight.copy_(torch.from_numpy(ours.weight.numpy()))
        theirs.bias.copy_(torch.from_numpy(ours.bias.numpy()))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return fn_ours(ours, tt.Tensor(x)), fn_theirs(theirs, torch.from_numpy(x))


def test_hooks_see_and_replace_inputs_and_outputs_like_torch():
    def run(layer, x):
        log = []
        h1 = layer.register_forward_pre_hook(lambda m, args: log.append(("pre", len(args))))
        h2 = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        h3 = layer.register_forward_hook(lambda m, args, out: out + 1)
        h4 = layer.register_forward_hook(lambda m, args, out: log.append(
            ("post", tuple(args[0].shape), out.sum().item())))
        y = layer(x)
        for h in (h1, h2, h3, h4):
            h.remove()
        z = layer(x)
        return log, y.sum().item(), z.sum().item()

    ours, theirs = _both(run, run)
    assert ours[0][0] == theirs[0][0] and ours[0][1][:2] == theirs[0][1][:2]
    np.testing.assert_allclose([ours[0][1][2], ours[1], ours[2]],
                               [theirs[0][1][2], theirs[1], theirs[2]], rtol=1e-5)


def test_a_non_tuple_pre_hook_result_becomes_the_only_argument_like_torch():
    def run(layer, x):
        with layer.register_forward_pre_hook(lambda m, args: args[0] * 0):
            y = layer(x)
        return y.sum().item(), layer(x).sum().item()

    ours, theirs = _both(run, run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)


def test_hooks_run_on_activations_and_containers():
    model = tt.nn.Sequential(tt.nn.Linear(3, 4), tt.nn.ReLU(), tt.nn.Linear(4, 2))
    order = []
    handles = [m.register_forward_hook(lambda m, a, o: order.append(type(m).__name__))
               for m in model.modules()]
    model(tt.Tensor(np.ones((1, 3), np.float32)))
    for h in handles:
        h.remove()
    assert order == ["Linear", "ReLU", "Linear", "Sequential"]  # torch's order too
