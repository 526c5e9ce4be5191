from otter.test_files import test_case

OK_FORMAT = False

name = "formats"
points = 0

@test_case(points=None, hidden=False)
def test_read_idx_gzipped_and_raw(read_idx, np):
    import gzip
    import struct
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.mkdtemp())
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    (folder / 'img.gz').write_bytes(gzip.compress(struct.pack('>IIII', 2051, 2, 3, 4) + images.tobytes()))
    got = read_idx(folder / 'img.gz')
    assert got.shape == (2, 3, 4) and got.dtype == np.uint8, f"a gzipped IDX3 file of 2 images of 3×4 gives a (2, 3, 4) uint8 array, got {getattr(got, 'shape', None)} {getattr(got, 'dtype', None)}: read the dimensions as big-endian uint32 ('>u4') after the 4 magic bytes"
    assert np.array_equal(got, images), f'the pixels follow the 16-byte header, row-major: first image expected {images[0, 0].tolist()}..., got {got[0, 0].tolist()}...'
    values = np.array([-2, 70000], dtype='>i4')
    (folder / 'ints').write_bytes(struct.pack('>BBBBI', 0, 0, 12, 1, 2) + values.tobytes())
    got = read_idx(folder / 'ints')
    assert got.tolist() == [-2, 70000] and got.dtype == np.int32, f'type code 0x0C is big-endian int32: expected [-2, 70000] int32, got {got!r}'
    (folder / 'bad').write_bytes(struct.pack('>IIII', 2051, 2, 3, 4) + b'\x00' * 5)
    try:
        read_idx(folder / 'bad')
    except ValueError:
        pass
    else:
        raise AssertionError('a truncated file must raise ValueError naming it, not parse')

@test_case(points=None, hidden=False)
def test_read_cifar10_bin_planes_to_hwc(read_cifar10_bin, np):
    import tempfile
    from pathlib import Path
    rng = np.random.default_rng(0)
    planes = rng.integers(0, 256, size=(2, 3, 32, 32), dtype=np.uint8)
    labels = np.array([6, 9], dtype=np.uint8)
    records = np.concatenate([labels[:, None], planes.reshape(2, -1)], axis=1)
    path = Path(tempfile.mkdtemp()) / 'data_batch_1.bin'
    path.write_bytes(records.tobytes())
    images, got_labels = read_cifar10_bin(path)
    assert images.shape == (2, 32, 32, 3) and images.dtype == np.uint8, f"2 records give images (2, 32, 32, 3) uint8 (HWC), got {getattr(images, 'shape', None)}"
    assert got_labels.tolist() == [6, 9] and got_labels.dtype == np.int64, f'the first byte of each 3,073-byte record is its label, as int64; got {got_labels!r}'
    assert np.array_equal(images, planes.transpose(0, 2, 3, 1)), f'pixel (0, 0) of image 0 should be RGB {planes[0, :, 0, 0].tolist()}, got {images[0, 0, 0].tolist()}: each record stores whole R, G, B planes: reshape to (N, 3, 32, 32) first, then move the channel axis last'

