from otter.test_files import test_case

OK_FORMAT = False

name = "samplers"
points = 0

@test_case(points=None, hidden=False)
def test_random_sampler_is_a_reproducible_fresh_permutation(RandomSampler, Generator, manual_seed):
    g = Generator().manual_seed(3)
    sampler = RandomSampler(range(10), generator=g)
    first, second = (list(sampler), list(sampler))
    assert sorted(first) == list(range(10)), f'one epoch must visit every index exactly once, got {first}'
    kinds = sorted({type(i).__name__ for i in first})
    assert kinds == ['int'], f'yield Python ints (use .tolist()), got {kinds}: NumPy integers leak into every batch and label'
    assert first != second, f"two epochs gave the same order {first}: draw a new permutation in every call to __iter__ (the generator's stream continues), or the model sees the same batches every epoch"
    again = list(RandomSampler(range(10), generator=Generator().manual_seed(3)))
    assert again == first, f'the same seed must give the same order: got {again} and {first}'
    manual_seed(5)
    a = list(RandomSampler(range(10)))
    manual_seed(5)
    b = list(RandomSampler(range(10)))
    assert a == b, f'manual_seed(5) twice gave {a} and then {b}: without a generator, seed a fresh one from the global generator (_numpy_rng(None)) so that manual_seed makes the order reproducible'

@test_case(points=None, hidden=False)
def test_batch_sampler_groups_and_counts(BatchSampler):
    got = list(BatchSampler(range(10), batch_size=4, drop_last=False))
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], f'10 indices in batches of 4: the last batch keeps the 2 left over, got {got}'
    got = list(BatchSampler(range(10), batch_size=4, drop_last=True))
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7]], f'drop_last drops the short batch, got {got}'
    n = (len(BatchSampler(range(10), 4, False)), len(BatchSampler(range(10), 4, True)))
    assert n == (3, 2), f'len() = ceil(10 / 4) = 3, or floor(10 / 4) = 2 with drop_last; got {n}: a training loop that counts steps (schedulers, progress bars) relies on it'

