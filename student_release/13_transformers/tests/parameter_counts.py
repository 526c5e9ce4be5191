from otter.test_files import test_case

OK_FORMAT = False

name = "parameter_counts"
points = 0

@test_case(points=None, hidden=False)
def test_parameter_formula_matches_counting(gpt_parameter_counts, count_parameters, GPT):
    for config in [(65, 32, 64, 2, 4), (11, 7, 8, 3, 2), (100, 20, 24, 1, 3)]:
        formula = gpt_parameter_counts(*config)
        counted = count_parameters(GPT(*config))
        assert formula == counted, f'GPT{config}: your formula gives {formula}, counting .parameters() gives {counted}'

