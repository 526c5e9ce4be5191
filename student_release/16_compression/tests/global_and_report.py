from otter.test_files import test_case

OK_FORMAT = False

name = "global_and_report"
points = 0

@test_case(points=None, hidden=False)
def test_global_masks_rank_all_layers_together(global_unstructured_masks, np):
    a = np.array([0.01, 0.02, 0.03, 0.5], np.float32)
    b = np.array([[0.4, 0.6], [0.7, 0.8]], np.float32)
    ma, mb = global_unstructured_masks([a, b], 0.5)
    assert ma.shape == (4,) and mb.shape == (2, 2), f'one mask per tensor, in its shape; got {ma.shape} and {mb.shape}'
    assert ma.tolist() == [0, 0, 0, 1] and mb.tolist() == [[0, 1], [1, 1]], f'the 4 smallest of all 8 go: 0.01, 0.02, 0.03 in a and 0.4 in b; got {ma.tolist()} and {mb.tolist()}'
    ma2, mb2 = global_unstructured_masks([a, b], 2, [ma, mb])
    assert ma2.tolist() == [0, 0, 0, 0] and mb2.tolist() == [[0, 0], [1, 1]], f'2 more among the 4 still kept: 0.5 and 0.6; got {ma2.tolist()} and {mb2.tolist()}'

@test_case(points=None, hidden=False)
def test_sparsity_report_counts_effective_zeros(sparsity_report, prune_model, Linear, ReLU, Sequential, manual_seed):
    manual_seed(0)
    model = Sequential(Linear(10, 8), ReLU(), Linear(8, 4))
    before = sparsity_report(model)
    assert before['global'] == {'zeros': 0, 'total': 112, 'sparsity': 0.0}, f"a fresh model has 80 + 32 = 112 weights and no zeros, got {before['global']}"
    pruned = prune_model(model, 0.5)
    report = sparsity_report(pruned)
    assert set(report['layers']) == {'0', '2'}, f"one entry per layer with a weight, named as in named_modules(), got {sorted(report['layers'])}"
    assert report['global']['zeros'] == 56 and report['global']['sparsity'] == 0.5, f"global pruning of half of 112 weights leaves 56 effective zeros, got {report['global']}: count the zeros of weight * weight_mask"
    layer = report['layers']['0']
    assert layer['total'] == 80 and layer['sparsity'] == layer['zeros'] / 80, f'per layer: zeros, total and their ratio, got {layer}'

