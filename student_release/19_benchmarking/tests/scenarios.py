from otter.test_files import test_case

OK_FORMAT = False

name = "scenarios"
points = 0

@test_case(points=None, hidden=False)
def test_single_stream_times_each_query(single_stream, np):

    class Clock:
        """Moves only when the SUT runs: call k takes durations[k]."""

        def __init__(self, durations):
            self.now, self.durations, self.calls = (0.0, list(durations), [])

        def __call__(self):
            return self.now

        def sut(self, batch):
            self.calls.append(batch.shape)
            self.now += self.durations.pop(0)
            return np.zeros((len(batch), 2))
    samples = np.arange(12.0).reshape(4, 3)
    clock = Clock([9.0, 9.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    got = single_stream(clock.sut, samples, queries=5, warmup=2, timer=clock)
    assert got == [1.0, 2.0, 3.0, 4.0, 5.0], f'2 untimed warm-up queries, then 5 timed one by one; expected [1, 2, 3, 4, 5], got {got}'
    assert clock.calls == [(1, 3)] * 7, f'every query is a batch of one sample (1, 3); got {clock.calls}'
    seen = []
    single_stream(lambda x: seen.append(float(x[0, 0])), samples, queries=6, warmup=0, timer=lambda: 0.0)
    assert seen == [0.0, 3.0, 6.0, 9.0, 0.0, 3.0], f'query q sends sample q % n (cycling through 4 samples); got first features {seen}'

@test_case(points=None, hidden=False)
def test_offline_times_the_whole_query(offline, np):

    class Clock:
        """Moves only when the SUT runs: call k takes durations[k]."""

        def __init__(self, durations):
            self.now, self.durations, self.calls = (0.0, list(durations), [])

        def __call__(self):
            return self.now

        def sut(self, batch):
            self.calls.append(batch.shape)
            self.now += self.durations.pop(0)
            return np.zeros((len(batch), 2))
    clock = Clock([100.0, 1.0, 2.0, 2.0])
    rate = offline(clock.sut, np.zeros((10, 3)), batch_size=4, warmup=1, timer=clock)
    assert abs(rate - 2.0) < 1e-12, f'10 samples in batches of 4, 4, 2 taking 1 + 2 + 2 = 5 s: 2 samples/s; got {rate}'
    assert clock.calls == [(4, 3), (4, 3), (4, 3), (2, 3)], f'one warm-up batch, then every sample once in batches of 4; got {clock.calls}'
    try:
        offline(clock.sut, np.zeros((10, 3)), batch_size=0)
    except ValueError:
        pass
    else:
        raise AssertionError('batch_size 0 must raise ValueError')

@test_case(points=None, hidden=False)
def test_evaluate_accuracy_sees_every_sample_once(evaluate_accuracy, Tensor, np):
    scores = np.eye(3)[[0, 2, 1, 1, 0]]
    acc = evaluate_accuracy(lambda x: x, scores, np.array([0, 2, 1, 0, 0]), batch_size=2)
    assert abs(acc - 0.8) < 1e-12, f'4 of 5 right, in batches of 2, 2 and 1: 0.8; got {acc}'
    seen = []

    def sut(batch):
        seen.append(len(batch))
        return Tensor(batch)
    acc = evaluate_accuracy(sut, scores, np.array([0, 2, 1, 1, 0]), batch_size=3)
    assert seen == [3, 2] and abs(acc - 1.0) < 1e-12, f'every sample once in batches of 3 (a Tensor result is fine): expected batches [3, 2] and accuracy 1.0, got {seen} and {acc}'

