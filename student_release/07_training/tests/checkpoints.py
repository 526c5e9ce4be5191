from otter.test_files import test_case

OK_FORMAT = False

name = "checkpoints"
points = 0

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
    assert np.allclose(m2.w.data, m.w.data), f"the model's parameters must be restored: expected w = {m.w.data}, got {m2.w.data}; pass {{name: Tensor}} for every 'model/<name>' key to model.load_state_dict"
    assert opt2.param_groups[0]['lr'] == 0.1, f"the saved lr 0.1 must replace the new optimizer's 0.5, got {opt2.param_groups[0]['lr']}: restore every 'optim/group/<j>/<key>'; a scheduled LR lives only there"
    restored = opt2.state.get(m2.w, {})
    assert restored.get('step') == 1 and np.allclose(restored.get('exp_avg', np.nan), opt.state[m.w]['exp_avg']), f"Adam's state must be restored: expected step 1 and exp_avg {opt.state[m.w]['exp_avg']}, got step {restored.get('step')!r} and exp_avg {restored.get('exp_avg')!r}; without them resuming restarts bias correction"
    pickled = []
    with np.load(path, allow_pickle=False) as data:
        for k in data.files:
            try:
                data[k]
            except ValueError:
                pickled.append(k)
    assert pickled == [], f'expected plain numeric arrays only, got object arrays under {pickled}: an object array needs pickle, which can run arbitrary code when the file is loaded'

