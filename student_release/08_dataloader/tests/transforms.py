from otter.test_files import test_case

OK_FORMAT = False

name = "transforms"
points = 0

@test_case(points=None, hidden=False)
def test_normalize_is_per_channel_and_keeps_float32(Normalize, Tensor, np):
    x = np.stack([np.full((2, 3), 0.5), np.full((2, 3), 1.0)]).astype(np.float32)
    y = Normalize(mean=[0.5, 0.0], std=[0.25, 2.0])(x)
    assert isinstance(y, np.ndarray) and y.shape == (2, 2, 3), f'an array in gives an array of the same shape out, got {type(y).__name__}'
    assert np.allclose(y[0], 0.0) and np.allclose(y[1], 0.5), f'channel 0: (0.5 - 0.5) / 0.25 = 0; channel 1: (1 - 0) / 2 = 0.5; got {y[:, 0, 0].tolist()} — mean/std must broadcast per channel, shape (C, 1, 1)'
    assert y.dtype == np.float32, f"the result must stay float32, got {y.dtype}: convert mean/std to the image's dtype"
    t = Normalize([0.5, 0.0], [0.25, 2.0])(Tensor(x))
    assert isinstance(t, Tensor) and np.allclose(t.data, y), f'a Tensor in gives a Tensor out with the same values, got {type(t).__name__}'

@test_case(points=None, hidden=False)
def test_random_crop_and_flip(RandomCrop, RandomHorizontalFlip, manual_seed, np):
    img = np.arange(1, 2 * 4 * 4 + 1, dtype=np.float32).reshape(2, 4, 4)
    padded = np.pad(img, [(0, 0), (2, 2), (2, 2)])
    windows = {padded[:, i:i + 4, j:j + 4].tobytes() for i in range(5) for j in range(5)}
    manual_seed(0)
    crops = [RandomCrop(4, padding=2)(img) for _ in range(20)]
    assert all((c.shape == (2, 4, 4) for c in crops)), f'RandomCrop(4, padding=2) pads (2, 4, 4) to (2, 8, 8) and cuts (2, 4, 4), got {crops[0].shape}'
    outside = sum((c.tobytes() not in windows for c in crops))
    assert outside == 0, f'every crop must be a 4×4 window (all channels, same place) of the zero-padded image; {outside} of {len(crops)} were not'
    places = len({c.tobytes() for c in crops})
    assert places > 3, f"20 crops came from {places} places: the window's corner must be drawn at random"
    same = RandomCrop(4)(img)
    assert np.array_equal(same, img), f'a crop as large as the image is the image, got shape {np.shape(same)}' + ('' if np.shape(same) != img.shape else ' with other values')
    flipped = RandomHorizontalFlip(p=1.0)(img)
    assert np.array_equal(flipped, img[..., ::-1]), f'p=1 must always mirror the LAST axis (width) of (C, H, W); x[:, ::-1] flips the height. First row expected {img[0, 0, ::-1].tolist()}, got {np.asarray(flipped)[0, 0].tolist()}'
    kept = RandomHorizontalFlip(p=0.0)(img)
    assert kept is img, f'p=0 never flips: return the input itself, got a {type(kept).__name__} copy (a copy per sample costs memory bandwidth for nothing)'

