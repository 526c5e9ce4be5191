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
    scalar = Tensor(3.0)
    assert scalar.ndim == 0, f'Tensor(3.0) has shape () and so 0 dimensions, got ndim {scalar.ndim!r}: a loss is a 0-d tensor, and code that counts its dimensions must not see 1'

@test_case(points=None, hidden=False)
def test_numel_and_memory(Tensor, np):
    n = Tensor(np.zeros((2, 3, 4))).numel()
    assert n == 24, f'a (2, 3, 4) tensor has 2 * 3 * 4 = 24 elements, numel() gave {n!r}: multiply the sizes of the shape; every memory and FLOP estimate starts from this count'
    n0 = Tensor(5.0).numel()
    assert n0 == 1, f'a 0-d tensor holds one element (the empty product is 1), numel() gave {n0!r}: start the product at 1, or every scalar loss counts as empty'
    batch = Tensor(np.zeros((32, 3, 224, 224), dtype=np.float32))
    got = batch.memory_footprint()
    assert got == 19267584, f'32 images x 3 x 224 x 224 float32 values x 4 bytes = 19,267,584 bytes (about 19 MB), memory_footprint() gave {got!r}: numel() times the bytes of one element'
    got64 = Tensor(np.zeros(10, dtype=np.float64)).memory_footprint()
    assert got64 == 80, f'10 float64 values take 10 x 8 = 80 bytes, memory_footprint() gave {got64!r}: use the element size of the dtype (self.data.itemsize), not 4 for every tensor'

