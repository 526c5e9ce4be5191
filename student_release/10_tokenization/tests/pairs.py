from otter.test_files import test_case

OK_FORMAT = False

name = "pairs"
points = 0

@test_case(points=None, hidden=False)
def test_pair_counts_counts_every_position(pair_counts):
    got = pair_counts([97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99])
    want = {(97, 97): 4, (97, 98): 2, (98, 100): 1, (100, 97): 1, (98, 97): 1, (97, 99): 1}
    assert got == want, f'expected {want}, got {got}'
    got = (pair_counts([5]), pair_counts([]))
    assert got == ({}, {}), f'fewer than 2 ids: no pairs, expected {{}} twice, got {got}'
    got = pair_counts((7, 7, 7))
    assert got == {(7, 7): 2}, f'[7, 7, 7] holds (7, 7) at two positions, got {got}'

@test_case(points=None, hidden=False)
def test_merge_pair_left_to_right_without_overlap(merge_pair):
    ids = [97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99]
    got = merge_pair(ids, (97, 97), 256)
    assert got == [256, 97, 98, 100, 256, 97, 98, 97, 99], f"'aaa' becomes [256, 97] (left to right, no overlap); got {got}"
    assert ids == [97, 97, 97, 98, 100, 97, 97, 97, 98, 97, 99], f'merge_pair must not modify ids (build a new list): the input became {ids}'
    got = merge_pair([7, 7, 7, 7], (7, 7), 300)
    assert got == [300, 300], f'[7, 7, 7, 7] holds two non-overlapping (7, 7): got {got}'
    got = merge_pair([1, 2, 1], (2, 3), 9)
    assert got == [1, 2, 1], f'no occurrence: the ids come back unchanged, got {got}'
    got = merge_pair([3, 1, 2], (1, 2), 9)
    assert got == [3, 9], f'a pair at the very end is merged too: expected [3, 9], got {got}'

