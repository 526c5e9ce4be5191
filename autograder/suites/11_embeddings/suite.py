"""Hidden suite · module 11 (embeddings). Cases are probes; the trusted parent compares.

Each case returns plain data computed with the package under test ``tt``; the expected value
is the same case run against tinytorch_ref. Every input (tables, indices, seeds) comes from
``rng``. Points sum to module 11's ``points`` (50).
"""

from __future__ import annotations

import importlib

import numpy as np

from autograder.suite import Suite, outcome

suite = Suite(module="11_embeddings", version="2027.2")
case = suite.case
EMBEDDING_FN = suite.unit("embedding", "_EmbeddingFn", "embedding")
EMBEDDING = suite.unit("Embedding", "Embedding", uses=(EMBEDDING_FN,))
SINUSOIDAL_TABLE = suite.unit("sinusoidal_positional_encoding", "sinusoidal_positional_encoding")
SINUSOIDAL = suite.unit("SinusoidalPositionalEncoding", "SinusoidalPositionalEncoding.forward",
                        uses=(SINUSOIDAL_TABLE,))
LEARNED = suite.unit("LearnedPositionalEmbedding", "LearnedPositionalEmbedding")


def _emb(tt):
    return importlib.import_module(f"{tt.__name__}.embeddings")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _seed(tt, rng):
    tt.manual_seed(int(rng.integers(2**31)))


def _table(tt, rng, v, d, requires_grad=False):
    return tt.Tensor(_f32(rng, v, d), requires_grad=requires_grad)


def _table_grad(tt, rng, ids, v, d, padding_idx=None):
    """Gradient of sum(embedding(ids, W) * R) for a random W and R: R scattered into rows."""
    w = _table(tt, rng, v, d, requires_grad=True)
    out = tt.nn.functional.embedding(tt.Tensor(ids), w, padding_idx=padding_idx)
    r = _f32(rng, *out.shape)
    (out * tt.Tensor(r)).sum().backward()
    return None if w.grad is None else w.grad.numpy()


# ----------------------------------------------------------------------------- lookup (9)
@case(unit=EMBEDDING_FN, points=4,
      hint="embedding(ids, W) is W[ids]: one row of W per index, shape (*ids.shape, D).",
      stated={"embedding": (
                  "input: integer indices of any shape (a Tensor, an array or a list).",
                  "A tensor of shape ``(*input.shape, D)`` and ``weight``'s dtype.",
              ),
              "_EmbeddingFn.forward": "Return ``weight[indices]`` (NumPy integer indexing gathers whole rows).",
              "test:test_embedding_gathers_rows_for_any_index_shape": "int32 indices work too"})
def functional_gathers_rows(tt, rng):
    F = tt.nn.functional
    w = _table(tt, rng, 11, 5)
    ids = rng.integers(0, 11, size=(3, 4))
    out = F.embedding(tt.Tensor(ids), w)
    as_int32 = F.embedding(tt.Tensor(ids.astype(np.int32)), w)
    from_array = F.embedding(ids[0], w)
    return [out.numpy(), str(out.dtype), as_int32.numpy(), from_array.numpy()]


@case(unit=EMBEDDING_FN, points=2,
      hint="embedding: any index shape works: () gives (D,), (n,) gives (n, D), (a, b, c) gives "
           "(a, b, c, D); an empty index gives (0, D).",
      stated={"embedding": (
                  "A tensor of shape ``(*input.shape, D)``",
                  "if ``idx`` is non-empty and ``idx.min() < 0`` or ``idx.max() >= V``",
              ),
              "_EmbeddingFn.forward": "Gather the rows of ``weight`` named by ``indices``: output ``(*indices.shape, D)``.",
              "test:test_embedding_gathers_rows_for_any_index_shape": "a single (0-d) index gives one row of shape (D,)"})
def functional_output_shapes_any_rank(tt, rng):
    F = tt.nn.functional
    w = _table(tt, rng, 7, 3)
    shapes = [(), (5,), (2, 3), (2, 1, 4), (0,)]
    outs = [F.embedding(tt.Tensor(rng.integers(0, 7, size=s)), w) for s in shapes]
    return [[tuple(o.shape) for o in outs], outs[0].numpy(), outs[3].numpy()]


@case(unit=EMBEDDING_FN, points=3,
      hint="embedding: float or bool indices raise RuntimeError; an index < 0 or >= V raises "
           "IndexError (NumPy would silently wrap -1 to the last row); padding_idx outside [-V, "
           "V) raises ValueError.",
      stated={"embedding": (
                  "RuntimeError: the indices are not integers (floats, bools).",
                  "IndexError: an index is outside ``[0, V)`` — negative ones too",
                  "ValueError: ``padding_idx`` is outside ``[-V, V)``",
                  "Unless ``padding_idx`` is None or ``-V <= padding_idx < V``: raise ``ValueError(",
              )})
def functional_rejects_bad_indices(tt, rng):
    F = tt.nn.functional
    v = int(rng.integers(4, 9))
    w = _table(tt, rng, v, 2)
    return [outcome(F.embedding, tt.Tensor(np.array([0.0, 1.0], dtype=np.float32)), w),
            outcome(F.embedding, tt.Tensor(np.array([True, False])), w),
            outcome(F.embedding, tt.Tensor(np.array([0, v])), w),
            outcome(F.embedding, tt.Tensor(np.array([[1, -1]])), w),
            outcome(F.embedding, tt.Tensor(np.array([v - 1, 0])), w),
            outcome(F.embedding, tt.Tensor(np.array([0])), w, padding_idx=v),
            outcome(F.embedding, tt.Tensor(np.array([0])), w, padding_idx=-v - 1),
            outcome(F.embedding, tt.Tensor(np.array([0])), w, padding_idx=-v),
            outcome(F.embedding, tt.Tensor(np.array([0])), w, padding_idx=v - 1),
            F.embedding(tt.Tensor(rng.integers(0, v, 5)), w).numpy()]  # a valid lookup too


# ----------------------------------------------------------------------------- backward (10)
@case(unit=EMBEDDING_FN, points=5,
      hint="embedding: the table's gradient is a scatter-ADD: a row named k times gets the sum of "
           "k output gradients (np.add.at, not g[idx] += rows); unused rows are 0.",
      stated={"_EmbeddingFn.backward": (
                  "Row ``v`` of the result is the sum of ``grad[..., :]`` over every position where ``indices == v``; rows no index names stay zero",
                  "``np.add.at(g, idx, rows)`` adds every row, *also when an index repeats*.",
              )})
def backward_accumulates_repeated_indices(tt, rng):
    v, d = 6, 4
    ids = rng.integers(0, v, size=(5, 7))
    ids[0, :3] = 2  # certainly repeated
    one = rng.integers(0, v, size=(9,))
    return [_table_grad(tt, rng, ids, v, d), _table_grad(tt, rng, one, v, d)]


@case(unit=EMBEDDING_FN, points=5,
      hint="embedding: padding_idx: the forward reads the row as it is, but its gradient is zero; "
           "a negative padding_idx counts from the end (V + padding_idx).",
      stated={"_EmbeddingFn.backward": "the ``padding_idx`` row is zero whatever its count.",
              "embedding": (
                  "padding_idx: a row that receives no gradient, in ``[-V, V)``; negative values count from the end.",
                  "(A negative one needs no conversion: NumPy's ``g[-1]`` is the last row, as PyTorch means it.)",
              ),
              "test:test_padding_row_gets_no_gradient": "the forward pass still reads the padding row as it is"})
def backward_padding_row_gets_no_gradient(tt, rng):
    F = tt.nn.functional
    v, d = 7, 3
    ids = rng.integers(0, v, size=(4, 6))
    ids[1, 1:4] = 3
    ids[2, 0] = v - 2
    w = _table(tt, rng, v, d)
    fwd = F.embedding(tt.Tensor(ids), w, padding_idx=3).numpy()
    return [fwd, _table_grad(tt, rng, ids, v, d, padding_idx=3),
            _table_grad(tt, rng, ids, v, d, padding_idx=-2),
            _table_grad(tt, rng, ids, v, d, padding_idx=0)]


# ----------------------------------------------------------------------------- nn.Embedding (13)
@case(unit=EMBEDDING, points=4,
      hint="Embedding: weight ~ N(0, 1): one default_generator().standard_normal((V, D)) draw, "
           "cast to float32; the padding row is zeroed after the draw.",
      stated={"Embedding.__init__": (
                  "``self.weight = Parameter(default_generator().standard_normal((V, D)) .astype(np.float32))``.",
                  "If there is a padding row, set it to zero in ``self.weight.data``.",
                  "draw the whole table first, then zero the row, so the same seed gives the same other rows with or without padding.",
              ),
              "Embedding": "weight: Parameter ``(num_embeddings, embedding_dim)``, float32, ``N(0, 1)``.",
              "test:test_embedding_module_init": "the table is registered as the parameter 'weight'"})
def module_init_from_seed(tt, rng):
    nn = tt.nn
    seed = int(rng.integers(2**31))
    tt.manual_seed(seed)
    plain = nn.Embedding(9, 4)
    tt.manual_seed(seed)
    padded = nn.Embedding(9, 4, padding_idx=2)
    _seed(tt, rng)
    big = nn.Embedding(3000, 8).weight.numpy()
    # the big table's mean and std are compared with the reference's (the same single draw)
    return [plain.weight.numpy(), padded.weight.numpy(), str(plain.weight.dtype),
            bool(plain.weight.requires_grad), float(big.mean()), float(big.std()),
            [n for n, _ in plain.named_parameters()]]


@case(unit=EMBEDDING, points=4,
      hint="Embedding: padding_idx in [-V, V): a negative one is stored as V + padding_idx and "
           "that row starts at zero; outside the range raise ValueError.",
      stated={"Embedding.__init__": (
                  "If ``padding_idx`` is not None: unless ``-num_embeddings <= padding_idx < num_embeddings``, raise ``ValueError(",
                  "a negative value becomes ``padding_idx + num_embeddings``. Store it as ``self.padding_idx``.",
                  "If there is a padding row, set it to zero in ``self.weight.data``.",
              ),
              "Embedding": "None for no padding row."})
def module_padding_idx_normalised_and_checked(tt, rng):
    nn = tt.nn
    v = int(rng.integers(5, 12))
    neg = int(rng.integers(-v, 0))
    e = nn.Embedding(v, 3, padding_idx=neg)
    first = nn.Embedding(v, 3, padding_idx=-v)
    last = nn.Embedding(v, 3, padding_idx=v - 1)
    rows = [e.weight.numpy()[e.padding_idx].tolist() if isinstance(e.padding_idx, int) else None]
    return [e.padding_idx, first.padding_idx, last.padding_idx, nn.Embedding(v, 3).padding_idx,
            rows, outcome(nn.Embedding, v, 3, padding_idx=v),
            outcome(nn.Embedding, v, 3, padding_idx=-v - 1),
            tt.Tensor(_f32(rng, 3)).numpy()]  # what this variant drew: no answer fits them all


@case(unit=EMBEDDING, points=3,
      hint="forward(ids) = embedding(ids, self.weight, self.padding_idx).",
      stated={"Embedding.forward": "return ``embedding(input, self.weight, self.padding_idx)``.",
              "Embedding.__init__": "store ``num_embeddings`` and ``embedding_dim``.",
              "Embedding": "weight: Parameter ``(num_embeddings, embedding_dim)``"})
def module_forward_uses_weight(tt, rng):
    nn = tt.nn
    e = nn.Embedding(8, 5)
    e.weight.data[...] = _f32(rng, 8, 5)
    ids = rng.integers(0, 8, size=(2, 6))
    out = e(tt.Tensor(ids))
    return [out.numpy(), bool(out.requires_grad), e.embedding_dim, e.num_embeddings]


@case(unit=EMBEDDING, points=2,
      hint="Embedding: through the module the padding row still gets no gradient, so an optimizer "
           "step leaves it at zero while used rows move.",
      stated={"Embedding": "padding_idx: a row that starts at zero and never receives a gradient",
              "Embedding.forward": "pass the stored ``padding_idx`` so the padding row gets no gradient."})
def module_training_step_keeps_padding_row(tt, rng):
    nn = tt.nn
    _seed(tt, rng)
    e = nn.Embedding(6, 4, padding_idx=0)
    ids = rng.integers(0, 6, size=(3, 5))
    ids[:, -1] = 0
    target = _f32(rng, 3, 5, 4)
    loss = ((e(tt.Tensor(ids)) - tt.Tensor(target)) ** 2).mean()
    loss.backward()
    e.weight.data[...] = e.weight.data - np.float32(0.5) * e.weight.grad.data
    return [e.weight.grad.numpy(), e.weight.numpy()[0], float(loss.item())]


# ----------------------------------------------------------------------------- dtype, no_grad (2)
@case(unit=EMBEDDING_FN, points=2,
      hint="embedding: keep the table's dtype (float64 stays float64, in forward and backward); "
           "under no_grad nothing is recorded.",
      stated={"embedding": (
                  "A tensor of shape ``(*input.shape, D)`` and ``weight``'s dtype.",
                  "Return ``_EmbeddingFn.apply(weight, indices=idx, padding_idx=padding_idx)``.",
              ),
              "_EmbeddingFn.backward": "``g = np.zeros(shape, grad.dtype)``"})
def float64_and_no_grad(tt, rng):
    F = tt.nn.functional
    w = tt.Tensor(rng.standard_normal((5, 2)), requires_grad=True)
    ids = tt.Tensor(rng.integers(0, 5, size=(4,)))
    out = F.embedding(ids, w)
    (out * tt.Tensor(rng.standard_normal(out.shape))).sum().backward()
    with tt.no_grad():
        quiet = F.embedding(ids, w)
    return [str(out.dtype), str(w.grad.dtype), w.grad.numpy(), bool(quiet.requires_grad)]


# ----------------------------------------------------------------------------- positions (12)
@case(unit=SINUSOIDAL_TABLE, points=4, atol=1e-5,
      hint="sinusoidal_positional_encoding: P[pos, 2i] = sin(pos * 10000^(-2i/D)), P[pos, 2i+1] = "
           "cos(same angle); an odd D ends with a sine column; float32.",
      stated={"sinusoidal_positional_encoding": (
                  "The fixed table ``P (num_positions, embedding_dim)`` of Vaswani et al., float32.",
                  "``P[pos, 2i] = sin(pos / 10000^(2i/D))`` and ``P[pos, 2i+1] = cos(pos / 10000^(2i/D))``.",
                  "(an odd ``D`` has one sine more)",
              )})
def sinusoidal_table(tt, rng):
    E = _emb(tt)
    n = int(rng.integers(20, 60))
    even = E.sinusoidal_positional_encoding(n, 8)
    odd = E.sinusoidal_positional_encoding(int(rng.integers(3, 9)), 7)
    return [even.numpy(), str(even.dtype), odd.numpy(), tuple(odd.shape),
            tt.Tensor(_f32(rng, 3)).numpy()]  # what this variant drew: no answer fits them all


@case(unit=SINUSOIDAL, points=4, atol=1e-6,
      hint="SinusoidalPositionalEncoding(D, max_len)(x, offset) = x + pe[offset:offset+T] for x "
           "(..., T, D); positions beyond max_len raise ValueError.",
      stated={"SinusoidalPositionalEncoding.forward": (
                  "Return ``x + self.pe[offset : offset + T]`` where ``T = x.shape[-2]``.",
                  "(given: it raises ``ValueError`` beyond ``max_len``)",
                  "``(T, D)`` broadcasts over the leading (batch) dimensions.",
              ),
              "SinusoidalPositionalEncoding": "it is rebuilt, never saved in ``state_dict``, and it has no gradient."})
def sinusoidal_module_adds_rows_from_offset(tt, rng):
    E = _emb(tt)
    enc = E.SinusoidalPositionalEncoding(6, max_len=12)
    x = tt.Tensor(_f32(rng, 2, 4, 6))
    off = int(rng.integers(1, 8))
    return [enc(x).numpy(), enc(x, offset=off).numpy(), enc(tt.Tensor(_f32(rng, 3, 6)), 9).numpy(),
            outcome(enc, x, offset=9), list(enc.state_dict())]


@case(unit=LEARNED, points=4,
      hint="LearnedPositionalEmbedding(max_len, D): weight ~ N(0, 1) (max_len, D); forward adds "
           "self.weight[offset:offset+T] (a Tensor slice, so those rows get gradients).",
      stated={"LearnedPositionalEmbedding.__init__": "``self.weight = Parameter(default_generator().standard_normal((max_len, embedding_dim)).astype(np.float32))``.",
              "LearnedPositionalEmbedding.forward": (
                  "Return ``x + self.weight[offset : offset + T]`` where ``T = x.shape[-2]``.",
                  "a Tensor slice, so the used rows get gradients.",
              ),
              "LearnedPositionalEmbedding": "weight: Parameter ``(max_len, embedding_dim)``, float32",
              "test:test_positional_modules_add_rows_from_offset": "do not exist in a max_len=10 table: ValueError"})
def learned_positional_embedding(tt, rng):
    E = _emb(tt)
    _seed(tt, rng)
    pos = E.LearnedPositionalEmbedding(10, 3)
    init = pos.weight.numpy().copy()
    x = tt.Tensor(_f32(rng, 2, 4, 3), requires_grad=True)
    off = int(rng.integers(0, 7))
    y = pos(x, offset=off)
    (y * tt.Tensor(_f32(rng, 2, 4, 3))).sum().backward()
    return [init, y.numpy(), pos.weight.grad.numpy(), x.grad.numpy(),
            [n for n, _ in pos.named_parameters()], outcome(pos, x, offset=7)]


# ----------------------------------------------------------------------------- together (4)
@case(unit=LEARNED, points=4, standins=(EMBEDDING_FN, EMBEDDING, SINUSOIDAL_TABLE, SINUSOIDAL),
      rtol=1e-4, atol=1e-5,
      hint="LearnedPositionalEmbedding: token embedding plus positions, trained: every piece must "
           "be right for the loss and the gradients to match.",
      stated={"LearnedPositionalEmbedding.__init__": "``self.weight = Parameter(default_generator().standard_normal((max_len, embedding_dim)).astype(np.float32))``.",
              "LearnedPositionalEmbedding.forward": "a Tensor slice, so the used rows get gradients.",
              "Embedding.__init__": "a negative value becomes ``padding_idx + num_embeddings``."})
def tokens_plus_positions_gradients(tt, rng):
    E = _emb(tt)
    nn = tt.nn
    _seed(tt, rng)
    tok = nn.Embedding(12, 6, padding_idx=-1)
    pos = E.LearnedPositionalEmbedding(8, 6)
    sin = E.SinusoidalPositionalEncoding(6, max_len=8)
    ids = rng.integers(0, 12, size=(3, 5))
    ids[0, 4] = 11
    h = sin(pos(tok(tt.Tensor(ids))), offset=2)
    loss = (h * tt.Tensor(_f32(rng, 3, 5, 6))).sum()
    loss.backward()
    return [float(loss.item()), tok.weight.grad.numpy(), pos.weight.grad.numpy()]
