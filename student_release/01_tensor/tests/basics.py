from otter.test_files import test_case

OK_FORMAT = False

name = "basics"
points = 0

@test_case(points=None, hidden=False)
def test_shape_dtype_ndim(Tensor, np):
    t = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3), f'shape should be (2, 3), got {t.shape!r}: return a tuple of ints'
    assert t.dtype == np.float32, f'Python floats should become float32, got {t.dtype}'
    assert t.ndim == 2, f'ndim should be 2, got {t.ndim}'
    assert Tensor(3.0).ndim == 0, 'a scalar tensor has 0 dimensions'

@test_case(points=None, hidden=False)
def test_numel_and_memory(Tensor, np):
    assert Tensor(np.zeros((2, 3, 4))).numel() == 24, 'numel is the product of the shape'
    assert Tensor(5.0).numel() == 1, 'a scalar tensor has one element (the empty product is 1)'
    batch = Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    assert batch.memory_footprint() == 19267584, '32 images x 3 x 224 x 224 float32 values x 4 bytes = 19,267,584 bytes (about 19 MB)'
    assert Tensor(np.zeros(10, dtype=np.float64)).memory_footprint() == 80, 'float64 takes 8 bytes per element'

