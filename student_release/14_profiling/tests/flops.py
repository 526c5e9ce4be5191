from otter.test_files import test_case

OK_FORMAT = False

name = "flops"
points = 0

@test_case(points=None, hidden=False)
def test_linear_and_conv_flops(linear_flops, conv2d_flops):
    got = linear_flops((32, 784), 256)
    assert got == 12853248, f'2*32*784*256 multiply-add FLOPs + 32*256 bias adds = 12,853,248; got {got}'
    got = linear_flops((2, 5, 3), 4, bias=False)
    assert got == 240, f'rows = 2*5 = 10: 2*10*3*4 = 240 without a bias; got {got}'
    got = conv2d_flops((2, 8, 5, 5), 3, 3)
    assert got == 22000, f'400 outputs, each a dot product of 3*3*3 = 27 (2 FLOPs per multiply-add) plus a bias: 400*(54 + 1) = 22,000; got {got}'
    got = conv2d_flops((1, 4, 2, 3), 6, (1, 2), bias=False, groups=2)
    assert got == 288, f'groups=2: each output sees 6/2 = 3 channels: 2*24*3*2 = 288; got {got}'

@test_case(points=None, hidden=False)
def test_attention_and_module_flops(attention_flops, module_flops, MultiheadAttention, Linear, ReLU, Softmax, Tensor, np):
    got = attention_flops((8, 128, 16), (8, 128, 16), (8, 128, 16))
    assert got == 8388608, f'2*8*128*128*(16 + 16) = 8,388,608; got {got}'
    got = attention_flops((2, 4, 5, 8), (5, 8), (2, 1, 5, 6))
    assert got == 5600, f'batch dims broadcast to (2, 4), b = 8: 2*8*5*5*(8 + 6) = 5,600; got {got}'
    x = Tensor(np.zeros((3, 7), np.float32))
    lin = Linear(7, 5)
    got = module_flops(lin, (x,), lin(x))
    assert got == 2 * 3 * 7 * 5 + 3 * 5, f'a Linear(7, 5) on (3, 7) uses linear_flops: expected 2*3*7*5 + 3*5 = 225, got {got}'
    got = module_flops(ReLU(), (x,), x)
    assert got == 21, f'ReLU: 1 FLOP per element, expected 21 for (3, 7), got {got}'
    got = module_flops(Softmax(dim=-1), (x,), x)
    assert got == 105, f'softmax: 5 FLOPs per element, expected 105 for (3, 7), got {got}'
    mha = MultiheadAttention(16, 4, batch_first=True)
    q = Tensor(np.zeros((2, 5, 16), np.float32))
    got = module_flops(mha, (q, q, q), mha(q, q, q))
    assert got == 20040, f'3 projections (2*10*16*16 + 10*16 = 5,280 each) + attention over b = 2*4 heads (2*8*5*5*(4 + 4) = 3,200) + softmax (5*8*5*5 = 1,000) = 20,040; got {got}'
    got = module_flops(object(), (x,), x)
    assert got == 0, f'a layer that only moves data costs 0 FLOPs, got {got}'

