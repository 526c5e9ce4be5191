from otter.test_files import test_case

OK_FORMAT = False

name = "observers"
points = 0

@test_case(points=None, hidden=False)
def test_determine_qparams_affine_and_symmetric(determine_qparams, per_tensor_symmetric, np):
    s, z = determine_qparams(-1.0, 2.0, 0, 255)
    assert np.isclose(float(s), 3.0 / 255) and int(z) == 85, f'asymmetric [-1, 2] on [0, 255]: s = 3 / 255 = 0.01176, z = 0 - round(-1 / s) = 85; got s = {float(s):.6g}, z = {int(z)}'
    s, z = determine_qparams(2.0, 5.0, 0, 255)
    assert np.isclose(float(s), 5.0 / 255) and int(z) == 0, f'[2, 5] is widened to [0, 5] so that 0.0 stays exact: s = 5 / 255, z = 0; got s = {float(s):.6g}, z = {int(z)}'
    s, z = determine_qparams(-1.0, 2.0, -128, 127, per_tensor_symmetric)
    assert np.isclose(float(s), 2.0 / 127.5) and int(z) == 0, f'symmetric qint8: s = max(|min|, |max|) / 127.5 = 2 / 127.5, z = 0; got s = {float(s):.6g}, z = {int(z)}'
    s, z = determine_qparams(np.zeros(2), np.zeros(2), -128, 127)
    assert s.shape == (2,) and np.all(s > 0), f'an all-zero range still needs a positive scale (eps), got {s}'

@test_case(points=None, hidden=False)
def test_observers_track_ranges(MinMaxObserver, MovingAverageMinMaxObserver, PerChannelMinMaxObserver, Tensor, np):
    obs = MinMaxObserver()
    x = Tensor([1.0, 3.0])
    returned = obs(x)
    assert returned is x, f'an observer only records the range and returns its input itself (it sits between layers), got a {type(returned).__name__} that is not x'
    obs(Tensor([-2.0, 2.0]))
    assert (float(obs.min_val.data), float(obs.max_val.data)) == (-2.0, 3.0), f'MinMaxObserver keeps the running min and max: expected (-2, 3), got ({float(obs.min_val.data)}, {float(obs.max_val.data)})'
    scale, zp = obs.calculate_qparams()
    assert np.allclose(scale, [5.0 / 255]) and zp.tolist() == [102], f'[-2, 3] on quint8: scale 5/255, zero point 102; got {scale}, {zp}'
    avg = MovingAverageMinMaxObserver(averaging_constant=0.5)
    avg(Tensor([0.0, 4.0]))
    avg(Tensor([-2.0, 2.0]))
    assert (float(avg.min_val.data), float(avg.max_val.data)) == (-1.0, 3.0), f'moving average with c = 0.5: first batch [0, 4], then 0 + 0.5 * (-2 - 0) = -1 and 4 + 0.5 * (2 - 4) = 3; got ({float(avg.min_val.data)}, {float(avg.max_val.data)})'
    pc = PerChannelMinMaxObserver(ch_axis=1)
    pc(Tensor(np.array([[1.0, -2.0, 0.0], [3.0, 5.0, -1.0]])))
    pc(Tensor(np.array([[-4.0, 0.0, 0.5]])))
    assert pc.min_val.data.tolist() == [-4.0, -2.0, -1.0] and pc.max_val.data.tolist() == [3.0, 5.0, 0.5], f'per channel along axis 1: min [-4, -2, -1], max [3, 5, 0.5]; got {pc.min_val.data.tolist()}, {pc.max_val.data.tolist()}'

