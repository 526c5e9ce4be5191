"""The optimization modules' measured model (modules 15 and 16), for their tests.

The 1986 milestone's MLP ``64 -> 64 (ReLU) -> 10`` trained on the shipped 8x8 digits exactly as
the lessons of modules 15 and 16 train it (Adam, lr 3e-3, 30 epochs of batches of 32).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import tinytorch_ref as tt


class TrainedDigitsMlp(NamedTuple):
    model: Any                 # the trained model, in eval mode
    train_x: np.ndarray        # (1437, 64) float32 in [0, 1]
    test_x: Any                # Tensor (360, 64) float32 in [0, 1]
    test_y: np.ndarray         # (360,)
    train_y: np.ndarray        # (1437,)
    rng: np.random.Generator   # the batch generator, after training (for fine-tuning)

    def accuracy(self, model: Any) -> float:
        with tt.no_grad():
            return float((model(self.test_x).numpy().argmax(1) == self.test_y).mean())


def trained_digits_mlp(seed: int) -> TrainedDigitsMlp:
    from tinytorch_data.loaders import load_digits

    digits = load_digits()
    train_x = digits.train_x.astype(np.float32) / np.float32(16.0)
    tt.manual_seed(seed)
    model = tt.nn.Sequential(tt.nn.Linear(64, 64), tt.nn.ReLU(), tt.nn.Linear(64, 10))
    trainer = tt.training.Trainer(model, tt.nn.CrossEntropyLoss(),
                                  tt.optim.Adam(model.parameters(), lr=3e-3))
    rng = np.random.default_rng(seed)
    for _ in range(30):
        trainer.train_epoch(train_x, digits.train_y, 32, rng)
    test_x = tt.Tensor(digits.test_x.astype(np.float32) / np.float32(16.0))
    return TrainedDigitsMlp(model.eval(), train_x, test_x, digits.test_y, digits.train_y, rng)
