from otter.test_files import test_case

OK_FORMAT = False

name = "timing"
points = 0

@test_case(points=None, hidden=False)
def test_summarize_and_measure(summarize, measure):

    class FakeClock:
        now = 0

        def __call__(self):
            return self.now

        def work(self, durations):
            it = iter(durations)

            def fn():
                self.now += next(it)
            return fn
    t = summarize([102, 101, 103, 100, 250, 101, 102])
    assert (t.median, t.q1, t.q3, t.iqr, t.min, t.max) == (102.0, 101.0, 102.5, 1.5, 100.0, 250.0), f'median 102, quartiles 101 and 102.5 (linear interpolation), IQR 1.5; got {t}'
    clock = FakeClock()
    got = measure(clock.work([1000, 900, 5, 7, 6, 50]), warmup=2, repeats=4, timer=clock)
    assert got.samples == (5, 7, 6, 50), f'the 2 warm-up calls (1000 and 900 ns) are not timed; the 4 timed calls take 5, 7, 6 and 50 ns; got samples {got.samples}'
    assert got.median == 6.5, f'the median of 5, 7, 6, 50 is 6.5; got {got.median}'
    try:
        measure(lambda: None, repeats=0)
    except ValueError:
        pass
    else:
        raise AssertionError('repeats=0 measures nothing: raise ValueError')

@test_case(points=None, hidden=False)
def test_median_ci_and_compare(median_ci, compare, np):

    class FakeClock:
        now = 0

        def __call__(self):
            return self.now

        def work(self, durations):
            it = iter(durations)

            def fn():
                self.now += next(it)
            return fn
    got = median_ci([5.0, 1.0, 4.0, 2.0, 3.0, 6.0])
    assert got == (1.0, 6.0), f'6 values at 95%: k = 1, the interval is [min, max] = (1.0, 6.0) (coverage 1 - 2/64), got {got}'
    got = median_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert got == (-np.inf, np.inf), f"5 values cannot give 95% (2/32 > 0.05): expected (-inf, inf), got {got}: an honest 'no conclusion' rather than a narrower interval that covers less"
    got = median_ci(list(range(1, 21)))
    assert got == (6.0, 15.0), f'20 values at 95%: 2*P(X <= 5) = 0.041 <= 0.05 but 2*P(X <= 6) = 0.115 is not, so k = 6 and the interval is (v_6, v_15) = (6, 15); got {got}'
    clock = FakeClock()
    a = clock.work([100] * 2 + [40, 30, 20, 10, 50, 60])
    b = clock.work([100] * 2 + [20, 10, 10, 10, 25, 20])
    got = compare(a, b, warmup=2, repeats=6, timer=clock)
    assert got.ratios == (2.0, 3.0, 2.0, 1.0, 2.0, 3.0), f'pair i gives a_i / b_i: expected (2, 3, 2, 1, 2, 3), got {got.ratios}'
    assert got.ratio == 2.0 and (got.low, got.high) == (1.0, 3.0), f'median ratio 2 with the interval [min, max] = [1, 3] for 6 pairs; got {got[1:4]}'
    assert got.a.median == 35.0 and got.b.median == 15.0, f'a and b summarise each version: expected medians 35.0 and 15.0, got {got.a.median} and {got.b.median}'

