from otter.test_files import test_case

OK_FORMAT = False

name = "roofline"
points = 0

@test_case(points=None, hidden=False)
def test_costs_and_roofline(matmul_cost, blocked_matmul_bytes, attainable_gflops):
    got = matmul_cost(512, 512, 512)
    assert got == (268435456, 3145728), f'2*512^3 FLOPs and 4*(3*512^2) bytes: expected (268435456, 3145728), got {got}'
    got = matmul_cost(2, 3, 4, itemsize=8)
    assert got == (48, 8 * (6 + 12 + 8)), f'float64 (itemsize 8): expected (48, 208), got {got}: itemsize scales the bytes, not the FLOPs'
    got = blocked_matmul_bytes(512, 512, 512, 64)
    assert got == 17825792, f'A and B are each read 512/64 = 8 times, C written once: 4*(8*512^2 + 8*512^2 + 512^2) = 17,825,792; got {got}'
    got = blocked_matmul_bytes(5, 3, 7, 2)
    assert got == 4 * (15 * 4 + 21 * 3 + 35), f'expected {4 * (15 * 4 + 21 * 3 + 35)}, got {got}: ceil(7/2) = 4 column tiles re-read A, ceil(5/2) = 3 row tiles re-read B (edge tiles count as whole re-reads)'
    got = blocked_matmul_bytes(64, 64, 64, 64)
    assert got == 4 * 3 * 64 * 64, f"one tile: expected {4 * 3 * 64 * 64} bytes, got {got}: every number moves once (the minimum, matmul_cost's bytes)"
    got = attainable_gflops(0.125, 100.0, 20.0)
    assert got == 2.5, f'memory-bound: expected 20 GB/s x 0.125 FLOP/B = 2.5 GFLOP/s, got {got}: below the ridge point the bandwidth limits'
    got = attainable_gflops(85.0, 100.0, 20.0)
    assert got == 100.0, f'compute-bound: expected the peak 100 GFLOP/s, got {got}: the roofline is min(peak, bandwidth x intensity)'

@test_case(points=None, hidden=False)
def test_machine_measurements_on_a_fake_clock(measure_bandwidth, measure_gflops):
    ticks = iter(range(0, 10 ** 12, 10 ** 6))
    got = measure_bandwidth(16 * 2 ** 20, repeats=3, timer=lambda: next(ticks))
    assert abs(got - 2 * 16 * 2 ** 20 / 1000000.0) < 1e-09, f'a copy reads and writes every byte: 2 * 16 MiB / 1 ms = 33.55 GB/s; got {got}'
    got = measure_gflops(100, repeats=3, timer=lambda: next(ticks))
    assert abs(got - 2.0) < 1e-12, f'2 * 100^3 FLOPs in 1 ms is 2 GFLOP/s; got {got}'

