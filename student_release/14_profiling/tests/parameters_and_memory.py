from otter.test_files import test_case

OK_FORMAT = False

name = "parameters_and_memory"
points = 0

@test_case(points=None, hidden=False)
def test_parameters_by_module_counts_each_parameter_once(parameters_by_module, Sequential, Linear, ReLU):
    model = Sequential(Linear(4, 8), ReLU(), Linear(8, 3, bias=False))
    got = parameters_by_module(model)
    assert got == {'0': 40, '2': 24}, f'Linear(4, 8) owns 4*8 + 8 = 40, Linear(8, 3, bias=False) owns 24 and ReLU nothing; got {got}'
    tied = Sequential(Linear(3, 3), Linear(3, 3))
    tied[1].weight = tied[0].weight
    got = parameters_by_module(tied)
    assert got == {'0': 12, '1': 3}, f"a shared weight is stored once and counted at its first owner: expected {{'0': 12, '1': 3}}, got {got}"

@test_case(points=None, hidden=False)
def test_training_memory_adam_is_four_times_the_weights(training_memory, Linear):
    lin = Linear(100, 10)
    got = training_memory(lin, 'adam', activation_bytes=123)
    assert got == {'parameters': 4040, 'gradients': 4040, 'optimizer': 8080, 'activations': 123, 'total': 16283}, f'1,010 float32 parameters = 4,040 bytes; gradients the same; Adam keeps 2 arrays per parameter; got {got}'
    got = training_memory(lin, 'sgd')['optimizer']
    assert got == 0, f'plain SGD keeps no state: expected 0 optimizer bytes, got {got}'
    lin.bias.requires_grad = False
    frozen = training_memory(lin, 'momentum')
    assert frozen['gradients'] == 4000 and frozen['optimizer'] == 4000, f'a frozen bias has no gradient and no momentum buffer; got {frozen}'
    try:
        training_memory(lin, 'adagrad')
    except ValueError:
        pass
    else:
        raise AssertionError('an unknown optimizer name must raise ValueError')

