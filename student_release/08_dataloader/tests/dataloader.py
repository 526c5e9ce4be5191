from otter.test_files import test_case

OK_FORMAT = False

name = "dataloader"
points = 0

@test_case(points=None, hidden=False)
def test_loader_batches_in_order_with_a_short_last_batch(DataLoader, TensorDataset, Tensor, np):
    ds = TensorDataset(Tensor(np.arange(20, dtype=np.float32).reshape(10, 2)), Tensor(np.arange(10)))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3, f'10 samples in batches of 4 make 3 batches, len() gave {len(loader)}'
    batches = list(loader)
    assert [yb.tolist() for _, yb in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], f'without shuffle the batches follow the dataset order and the last one holds the 2 samples left over; got {[yb.tolist() for _, yb in batches]}'
    assert batches[0][0].shape == (4, 2), f'X of batch 0 must be (4, 2), got {batches[0][0].shape}'
    dropped = DataLoader(ds, batch_size=4, drop_last=True)
    sizes = [len(yb) for _, yb in dropped]
    assert len(dropped) == 2 and sizes == [4, 4], f'drop_last=True drops the short last batch, and len() must agree with the iteration: expected len 2 and batches [4, 4], got len {len(dropped)} and batches {sizes}'

@test_case(points=None, hidden=False)
def test_loader_shuffles_reproducibly_per_epoch(DataLoader, TensorDataset, Generator, Tensor, np):
    ds = TensorDataset(Tensor(np.arange(12)))
    loader = DataLoader(ds, batch_size=5, shuffle=True, generator=Generator().manual_seed(0))
    epoch1 = [i for xb, in loader for i in xb.tolist()]
    epoch2 = [i for xb, in loader for i in xb.tolist()]
    assert sorted(epoch1) == list(range(12)), f'a shuffled epoch still visits every sample exactly once, got {sorted(epoch1)}'
    assert epoch1 != epoch2, f'each epoch must draw a new order (iterate the batch sampler anew); both epochs were {epoch1}'
    again = DataLoader(ds, batch_size=5, shuffle=True, generator=Generator().manual_seed(0))
    replay = [i for xb, in again for i in xb.tolist()]
    assert replay == epoch1, f'the same seeded generator must reproduce the same first epoch: expected {epoch1}, got {replay}'
    seen = []
    custom = DataLoader(ds, batch_size=4, collate_fn=lambda samples: len(samples))
    for b in custom:
        seen.append(b)
    assert seen == [4, 4, 4], f'use self.collate_fn (here it returns the batch size), got {seen}'

