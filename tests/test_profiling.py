"""Tests for the timing and peak-memory helpers: measured values, sweeps and input errors."""

from __future__ import annotations

import time

import pytest
import torch

from attention_lab.profiling import Measurement, measure, peak_memory, sweep_lengths

CPU = torch.device("cpu")


def test_time_of_a_sleep_is_at_least_its_duration():
    m = measure(lambda: time.sleep(0.02), repeats=3, warmup=0, device=CPU)
    assert isinstance(m, Measurement)
    assert len(m.times) == 3 and all(t >= 0.02 for t in m.times)
    assert m.seconds >= 0.02
    assert m.seconds < 1.0  # a median, not a sum over repeats


def test_warmup_and_repeats_call_counts():
    calls = []
    measure(lambda: calls.append(1), repeats=4, warmup=2, device=CPU)
    assert len(calls) == 2 + 4 + 1  # warm-up, timed, one memory run


@pytest.mark.parametrize("n", [1_000, 250_000, 1_000_000])
def test_memory_of_a_float_tensor_is_at_least_its_size(n):
    m = measure(lambda: torch.ones(n), repeats=1, warmup=0, device=CPU)
    assert m.peak_bytes >= 4 * n
    assert m.peak_bytes < 4 * n + 4096  # one tensor, nothing else
    assert m.peak_mib == m.peak_bytes / 2**20


def test_memory_counts_freed_temporaries_at_their_peak():
    def fn():
        big = torch.ones(500_000)  # 2 MB, freed before the call returns
        small = big[:10].clone()
        del big
        return small

    m = measure(fn, repeats=1, warmup=0, device=CPU)
    assert m.peak_bytes >= 2_000_000


def test_memory_excludes_inputs_built_before_the_call():
    x = torch.ones(1_000_000)
    m = measure(lambda: x.sum(), repeats=1, warmup=0, device=CPU)
    assert m.peak_bytes < 4 * 1_000_000


def test_memory_grows_with_size():
    small = measure(lambda: torch.zeros(10_000), repeats=1, warmup=0, device=CPU)
    large = measure(lambda: torch.zeros(100_000), repeats=1, warmup=0, device=CPU)
    assert large.peak_bytes > 5 * small.peak_bytes


def test_peak_memory_calls_once_and_agrees_with_measure():
    calls = []

    def fn():
        calls.append(1)
        return torch.ones(300_000)

    peak = peak_memory(fn, device=CPU)
    assert len(calls) == 1
    assert isinstance(peak, int) and peak >= 4 * 300_000
    assert measure(fn, repeats=1, warmup=0, device=CPU).peak_bytes == peak


def test_peak_memory_rejects_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        peak_memory(42)
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        peak_memory(lambda: None, device="meta")


def test_sweep_lengths_lines_up_with_lengths():
    result = sweep_lengths(lambda n: lambda: torch.zeros(n, n), [8, 64, 256], repeats=1, device=CPU)
    assert result["lengths"] == [8, 64, 256]
    assert len(result["seconds"]) == len(result["peak_bytes"]) == len(result["peak_mib"]) == 3
    assert all(s >= 0 for s in result["seconds"])
    for n, peak in zip(result["lengths"], result["peak_bytes"], strict=True):
        assert peak >= 4 * n * n
    assert result["peak_bytes"] == sorted(result["peak_bytes"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"repeats": 0}, "repeats"),
        ({"repeats": -1}, "repeats"),
        ({"repeats": 2.5}, "repeats"),
        ({"repeats": True}, "repeats"),
        ({"warmup": -1}, "warmup"),
        ({"device": "meta"}, "'cpu' or 'cuda'"),
    ],
)
def test_measure_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        measure(lambda: None, **kwargs)


def test_measure_rejects_a_non_callable():
    with pytest.raises(TypeError, match="callable"):
        measure(torch.ones(3))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_measure_rejects_cuda_without_a_gpu():
    with pytest.raises(ValueError, match="CUDA is not available"):
        measure(lambda: None, device="cuda")


@pytest.mark.parametrize(
    ("lengths", "error", "match"),
    [
        ([], ValueError, "at least one"),
        ([8, 0], ValueError, "every length"),
        ([8, -4], ValueError, "every length"),
        ([8.0], ValueError, "every length"),
        (8, TypeError, "sequence"),
        ("128", TypeError, "sequence"),
    ],
)
def test_sweep_lengths_rejects_bad_lengths(lengths, error, match):
    with pytest.raises(error, match=match):
        sweep_lengths(lambda n: lambda: None, lengths)


def test_sweep_lengths_requires_make_fn_to_return_a_callable():
    with pytest.raises(TypeError, match=r"make_fn\(8\)"):
        sweep_lengths(lambda n: None, [8])


def test_cpu_memory_refuses_to_nest_in_another_profiler():
    from torch.autograd import profiler_legacy

    with profiler_legacy.profile(), pytest.raises(RuntimeError, match="another torch profiler"):
        measure(lambda: None, repeats=1, warmup=0, device=CPU)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_memory_of_a_float_tensor():
    device = torch.device("cuda")
    n = 1_000_000
    m = measure(lambda: torch.ones(n, device=device), repeats=2, device=device)
    assert m.peak_bytes >= 4 * n
    assert m.seconds > 0
