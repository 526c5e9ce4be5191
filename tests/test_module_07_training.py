"""Module 07 beyond the common contract (tests/test_module_contract.py)."""

from __future__ import annotations


def test_trainer_trains_an_nn_mlp_on_xor_and_checkpoints_it(tmp_path):
    """Integration with modules 03-04: nn.Linear + CrossEntropyLoss + Adam + StepLR + clipping."""
    import numpy as np

    from tinytorch_ref import manual_seed, nn, optim
    from tinytorch_ref.training import Trainer, load_checkpoint, save_checkpoint

    manual_seed(0)
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
    y = np.array([0, 1, 1, 0])
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = optim.Adam(model.parameters(), lr=0.05)
    trainer = Trainer(model, nn.CrossEntropyLoss(), opt,
                      scheduler=optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5),
                      max_grad_norm=5.0)
    trainer.fit(x, y, epochs=200, batch_size=4)
    assert trainer.evaluate(x, y)["accuracy"] == 1.0
    path = save_checkpoint(tmp_path / "xor.npz", model, opt, epoch=200)
    clone = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    opt2 = optim.Adam(clone.parameters(), lr=1.0)
    assert load_checkpoint(path, clone, opt2) == 200
    assert Trainer(clone, nn.CrossEntropyLoss(), opt2).evaluate(x, y)["accuracy"] == 1.0
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    assert nn.utils.clip_grad_norm_ is not None
