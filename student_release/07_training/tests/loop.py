from otter.test_files import test_case

OK_FORMAT = False

name = "loop"
points = 0

@test_case(points=None, hidden=False)
def test_early_stopping_patience(EarlyStopping):
    es = EarlyStopping(patience=2)
    got = [es.step(v) for v in [1.0, 0.9, 0.95, 0.91]]
    assert got == [False, False, False, True], f'patience 2: two checks without beating 0.9 stop training; got {got}'
    es = EarlyStopping(patience=1, min_delta=0.1)
    got = [es.step(v) for v in [1.0, 0.95]]
    assert got == [False, True], f'with min_delta 0.1, a drop of 0.05 is not an improvement (only < 0.9 is), so patience 1 stops at once; got {got}'

@test_case(points=None, hidden=False)
def test_checkpoint_roundtrip_restores_optimizer_state(save_checkpoint, load_checkpoint, Adam, Tensor, np):
    import tempfile
    from pathlib import Path

    class Tiny:

        def __init__(self):
            self.w = Tensor(np.ones(3, dtype=np.float32), requires_grad=True)

        def state_dict(self):
            return {'w': self.w}

        def load_state_dict(self, sd):
            self.w.data[...] = sd['w'].data
    m = Tiny()
    opt = Adam([m.w], lr=0.1)
    m.w.grad = Tensor(np.ones(3, dtype=np.float32))
    opt.step()
    path = Path(tempfile.mkdtemp()) / 'ckpt.npz'
    save_checkpoint(path, m, opt, epoch=4)
    m2 = Tiny()
    opt2 = Adam([m2.w], lr=0.5)
    epoch = load_checkpoint(path, m2, opt2)
    assert epoch == 4, f'load_checkpoint must return the saved epoch 4 as an int, got {epoch!r}'
    assert np.allclose(m2.w.data, m.w.data), "the model's parameters must be restored: pass {name: Tensor} for every 'model/<name>' key to model.load_state_dict"
    assert opt2.param_groups[0]['lr'] == 0.1, f"the saved lr 0.1 must replace the new optimizer's 0.5, got {opt2.param_groups[0]['lr']}: restore every 'optim/group/<j>/<key>'; a scheduled LR lives only there"
    assert opt2.state[m2.w]['step'] == 1 and np.allclose(opt2.state[m2.w]['exp_avg'], opt.state[m.w]['exp_avg']), "Adam's moments and step count must be restored, or resuming restarts bias correction"
    with np.load(path, allow_pickle=False) as data:
        assert all((data[k].dtype != object for k in data.files)), 'store plain numeric arrays only: an object array needs pickle, which can run arbitrary code when the file is loaded'

