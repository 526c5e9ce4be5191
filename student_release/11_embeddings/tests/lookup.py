from otter.test_files import test_case

OK_FORMAT = False

name = "lookup"
points = 0

@test_case(points=None, hidden=False)
def test_embedding_gathers_rows_for_any_index_shape(embedding, Tensor, np):
    w = Tensor(np.arange(15, dtype=np.float32).reshape(5, 3))
    ids = Tensor(np.array([[0, 2, 2], [4, 1, 2]]))
    out = embedding(ids, w)
    assert out.shape == (2, 3, 3), f'indices (2, 3) and a table with D = 3 give (2, 3, 3), got {out.shape}'
    assert np.array_equal(out.numpy()[1, 0], [12.0, 13.0, 14.0]), f'out[1, 0] is row 4 of the table [12, 13, 14], got {out.numpy()[1, 0].tolist()}'
    assert out.dtype == np.float32, f"the output has the table's dtype, got {out.dtype}"
    got = embedding(Tensor(np.array(3)), w).shape
    assert got == (3,), f'a single (0-d) index gives one row of shape (D,) = (3,), got {got}'
    got = embedding(Tensor(np.array([1, 4], dtype=np.int32)), w).shape
    assert got == (2, 3), f'int32 indices work too: expected shape (2, 3), got {got}'

@test_case(points=None, hidden=False)
def test_embedding_rejects_bad_indices(embedding, Tensor, np):
    w = Tensor(np.zeros((5, 3), dtype=np.float32))
    for bad, kind, why in [([5], IndexError, '5 is outside [0, 5)'), ([-1], IndexError, "negative ids are errors, not 'the last row'"), (np.array([1.0]), RuntimeError, 'float indices are refused')]:
        try:
            embedding(Tensor(np.asarray(bad)), w)
        except kind:
            continue
        except NotImplementedError:
            raise
        except Exception as exc:
            raise AssertionError(f'{bad}: expected {kind.__name__} ({why}), got {type(exc).__name__}') from None
        raise AssertionError(f'{bad}: expected {kind.__name__} ({why}), nothing was raised')

