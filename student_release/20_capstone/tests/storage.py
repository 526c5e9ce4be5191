from otter.test_files import test_case

OK_FORMAT = False

name = "storage"
points = 0

@test_case(points=None, hidden=False)
def test_storage_bytes_picks_the_smaller_layout(storage_bytes, model_bytes, Linear, np):
    lin = Linear(64, 64)
    dense = storage_bytes(lin)
    assert dense == model_bytes(lin) == 64 * 64 * 4 + 64 * 4, f'no zeros: CSR is larger, so the dense size {64 * 64 * 4 + 64 * 4} is stored; got {dense}'
    lin.weight.data[:, :32] = 0.0
    half = storage_bytes(lin)
    assert half == 2048 * 5 + 65 * 4 + 256, f'half zeros: CSR 2048 * (4 + 1) + 65 * 4 = 10500 plus the bias 256; got {half}'
    wide = Linear(300, 2)
    wide.weight.data[:, 1:] = 0.0
    got = storage_bytes(wide)
    assert got == 2 * (4 + 2) + 3 * 4 + 8, f'300 columns need 2-byte column indices: 2 * 6 + 12 + 8 = 32 bytes, got {got}'
    assert isinstance(got, int), f'return a Python int, got {type(got).__name__}'

