from otter.test_files import test_case

OK_FORMAT = False

name = "l1_masks"
points = 0

@test_case(points=None, hidden=False)
def test_nparams_to_prune_follows_pytorch(nparams_to_prune):
    got = [nparams_to_prune(0.5, 5), nparams_to_prune(0.5, 7), nparams_to_prune(0.3, 10), nparams_to_prune(4, 10), nparams_to_prune(0.0, 3), nparams_to_prune(1.0, 3)]
    assert got == [2, 4, 3, 4, 0, 3], f"expected [2, 4, 3, 4, 0, 3], got {got}: a float is round(amount * n) with Python's round (2.5 -> 2, 3.5 -> 4); an int is a count"
    for bad, err in [(1.5, ValueError), (-1, ValueError), (11, ValueError), ('half', TypeError)]:
        try:
            nparams_to_prune(bad, 10)
        except err:
            continue
        raise AssertionError(f'amount={bad!r} of 10 must raise {err.__name__}, as PyTorch does')

@test_case(points=None, hidden=False)
def test_l1_unstructured_mask_and_repeated_pruning(l1_unstructured_mask, Tensor, np):
    w = np.array([[0.9, -0.1, 0.4], [-0.2, 0.3, -0.7]], dtype=np.float32)
    m1 = l1_unstructured_mask(w, 0.5)
    assert m1.shape == (2, 3) and m1.dtype == np.float32, f"a mask has the weight's shape and dtype, got {m1.shape} {m1.dtype}"
    assert m1.tolist() == [[1, 0, 1], [0, 0, 1]], f'0.5 of 6 = 3 smallest |w| (0.1, 0.2, 0.3) are pruned: expected [[1, 0, 1], [0, 0, 1]], got {m1.tolist()}'
    m2 = l1_unstructured_mask(Tensor(w), 0.5, default_mask=m1)
    assert m2.tolist() == [[1, 0, 0], [0, 0, 0]], f'pruning again works on the 3 weights left: round(0.5 * 3) = round(1.5) = 2 (half to even), so 0.4 and 0.7 go and only 0.9 stays; expected [[1, 0, 0], [0, 0, 0]], got {m2.tolist()} (counting all 6 entries would prune 3: everything that was left)'
    assert m1.tolist() == [[1, 0, 1], [0, 0, 1]], f'do not modify the default_mask you were given (the caller still holds it): it is now {m1.tolist()}'
    ties = l1_unstructured_mask(np.array([0.5, -0.5, 0.5, 2.0], dtype=np.float32), 2)
    assert ties.tolist() == [0, 0, 1, 1], f'equal magnitudes: the lowest indices go first (stable sort), got {ties.tolist()}'

