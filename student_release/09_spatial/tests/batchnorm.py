from otter.test_files import test_case

OK_FORMAT = False

name = "batchnorm"
points = 0

@test_case(points=None, hidden=False)
def test_batchnorm_train_normalises_and_tracks(BatchNorm2d, Tensor, np):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 3, 4, 4)) * [[[[2.0]], [[0.5]], [[3.0]]]] + 5.0).astype(np.float32)
    bn = BatchNorm2d(3)
    y = bn(Tensor(x)).numpy()
    assert y.shape == x.shape and y.dtype == np.float32, f'shape and dtype kept, got {y.shape}, {y.dtype}'
    assert np.allclose(y.mean(axis=(0, 2, 3)), 0.0, atol=1e-05) and np.allclose(y.var(axis=(0, 2, 3)), 1.0, atol=0.001), f'in training every channel is normalised over (N, H, W) to mean 0, variance 1; got means {y.mean(axis=(0, 2, 3)).round(3).tolist()}, variances {y.var(axis=(0, 2, 3)).round(3).tolist()}'
    m = 8 * 4 * 4
    want_var = 0.9 + 0.1 * x.var(axis=(0, 2, 3)) * m / (m - 1)
    want_mean = 0.1 * x.mean(axis=(0, 2, 3))
    assert np.allclose(bn.running_mean.numpy(), want_mean, rtol=1e-05), f'running_mean = 0.9 * 0 + 0.1 * batch mean after one training step: expected {want_mean.round(4).tolist()}, got {bn.running_mean.numpy().round(4).tolist()}'
    assert np.allclose(bn.running_var.numpy(), want_var, rtol=1e-05), f'running_var = 0.9 * 1 + 0.1 * the UNBIASED batch variance (times M / (M - 1), M = N*H*W): expected {want_var.round(4).tolist()}, got {bn.running_var.numpy().round(4).tolist()}'
    steps = int(bn.num_batches_tracked.item())
    assert steps == 1, f'num_batches_tracked counts training steps: expected 1 after one, got {steps}'

@test_case(points=None, hidden=False)
def test_batchnorm_eval_uses_running_stats(BatchNorm2d, Tensor, np):
    bn = BatchNorm2d(2)
    bn.running_mean.data[...] = [1.0, -1.0]
    bn.running_var.data[...] = [4.0, 0.25]
    bn.eval()
    x = np.ones((1, 2, 1, 1), dtype=np.float32)
    y = bn(Tensor(x)).numpy().ravel()
    want = np.array([0.0, 2.0 / np.sqrt(0.25 + 1e-05)])
    assert np.allclose(y, want, rtol=1e-05), f'eval() normalises with running_mean/running_var (even for one image): expected {want.round(4).tolist()}, got {y.round(4).tolist()}'
    kept = bn.running_mean.numpy().tolist()
    assert kept == [1.0, -1.0], f'eval() never changes the buffers: expected running_mean [1.0, -1.0], got {kept}; evaluating would otherwise leak test statistics into the model'

@test_case(points=None, hidden=False)
def test_batchnorm_gradient_matches_finite_differences(batch_norm, gradcheck, Tensor, np):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 2, 2, 3))
    w = rng.uniform(0.5, 2.0, 2)
    b = rng.standard_normal(2)
    probe = rng.standard_normal((3, 2, 2, 3))
    for training in (True, False):
        rm, rv = (Tensor(np.array([0.3, -0.2])), Tensor(np.array([1.5, 0.7])))

        def fn(a, g, h, rm=rm, rv=rv, training=training):
            return batch_norm(a, rm, rv, g, h, training=training) * Tensor(probe)
        try:
            gradcheck(fn, [x, w, b])
        except AssertionError as err:
            raise AssertionError(f'batch_norm (training={training}) backward disagrees with finite differences: {err}') from None

