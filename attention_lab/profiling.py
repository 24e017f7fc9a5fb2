"""Wall-clock time and peak memory of a call, on the CPU or a CUDA GPU.

``measure(fn)`` times ``fn()`` several times and reports the median, then runs it
once more to record the peak memory it allocates; ``peak_memory(fn)`` does only the
latter, in a single call. ``sweep_lengths`` measures over sequence lengths and returns
lists ready for ``attention_lab.plots.plot_scaling``.

How peak memory is measured:

* CUDA: ``torch.cuda.reset_peak_memory_stats`` before the call and
  ``torch.cuda.max_memory_allocated`` after it, minus what was allocated before.
* CPU: PyTorch's CPU allocator reports every allocation (+bytes) and free (-bytes)
  to the autograd profiler when it runs with memory profiling on. The call runs
  once under the profiler's legacy in-process variant (``torch.autograd``'s
  ``_enable_profiler_legacy``; the Kineto-based ``torch.profiler`` takes about a
  second to start and logs to stderr); replaying the reported allocations and frees
  in order gives the exact peak of tensor memory held above the level at the start
  of the call. It is a measurement, not an estimate, but it cannot see memory that a
  library allocates behind PyTorch's back (e.g. BLAS scratch space) or allocations
  made on threads other than the calling one.

Either way the figure counts tensors created *during* the call (temporaries and
the returned output), not the inputs built before it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch.autograd import (
    ProfilerConfig,
    ProfilerState,
    _disable_profiler_legacy,
    _enable_profiler_legacy,
    _profiler_enabled,
)

_MIB = 2**20


@dataclass(frozen=True)
class Measurement:
    """Median seconds over ``times`` and peak bytes allocated by one call on ``device``."""

    seconds: float
    peak_bytes: int
    times: tuple[float, ...]
    device: str

    @property
    def peak_mib(self) -> float:
        """Peak memory in MiB (2**20 bytes)."""
        return self.peak_bytes / _MIB


def _check_count(name: str, value: object, minimum: int) -> None:
    """Require an int (not a bool) of at least ``minimum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"expected {name} to be an int >= {minimum}, got {value!r}")


def _resolve_device(device: torch.device | str | None) -> torch.device:
    """The device to synchronise and measure on; None means the CPU."""
    device = torch.device("cpu" if device is None else device)
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"expected a 'cpu' or 'cuda' device, got {device}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("got a CUDA device, but CUDA is not available on this machine")
    return device


def _sync(device: torch.device) -> None:
    """Wait for queued GPU work so the clock measures the work, not its launch."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _time_once(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds for one call of ``fn``, GPU work included."""
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - start


def _peak_bytes_cuda(fn: Callable[[], object], device: torch.device) -> int:
    """Peak CUDA bytes allocated by one call, above the level before it."""
    _sync(device)
    baseline = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    result = fn()
    _sync(device)
    peak = torch.cuda.max_memory_allocated(device) - baseline
    del result
    return max(int(peak), 0)


def _peak_bytes_cpu(fn: Callable[[], object]) -> int:
    """Peak CPU tensor bytes allocated by one call, replayed from the profiler's memory events."""
    if _profiler_enabled():
        raise RuntimeError("cannot measure CPU memory while another torch profiler is running")
    config = ProfilerConfig(
        ProfilerState.CPU,
        False,  # record_shapes
        True,  # profile_memory: the allocator reports each alloc (+bytes) and free (-bytes)
        False,  # with_stack
        False,  # with_flops
        False,  # with_modules
        torch._C._profiler._ExperimentalConfig(),
    )
    _enable_profiler_legacy(config)
    try:
        result = fn()
    finally:
        records = _disable_profiler_legacy()
    del result
    # Events of one thread arrive in order; the index breaks ties between equal timestamps.
    events = sorted(
        (record.start_us(), thread, index, record.cpu_memory_usage())
        for thread, thread_records in enumerate(records)
        for index, record in enumerate(thread_records)
        if record.kind() == "memory_alloc"
    )
    live = peak = 0
    for *_, nbytes in events:
        live += nbytes
        peak = max(peak, live)
    return peak


def peak_memory(fn: Callable[[], object], *, device: torch.device | str | None = None) -> int:
    """Peak bytes allocated by one call of ``fn`` on ``device`` (None means the CPU), not timed."""
    if not callable(fn):
        raise TypeError(f"expected a callable taking no arguments, got {type(fn).__name__}")
    device = _resolve_device(device)
    return _peak_bytes_cuda(fn, device) if device.type == "cuda" else _peak_bytes_cpu(fn)


def measure(
    fn: Callable[[], object],
    *,
    repeats: int = 5,
    warmup: int = 1,
    device: torch.device | str | None = None,
) -> Measurement:
    """Median time of ``repeats`` calls (after ``warmup`` untimed ones) and peak memory of one more.

    ``device`` is where ``fn`` does its work (None means the CPU); on CUDA the clock
    waits for the GPU to finish. See the module docstring for how memory is counted.
    """
    if not callable(fn):
        raise TypeError(f"expected a callable taking no arguments, got {type(fn).__name__}")
    _check_count("repeats", repeats, 1)
    _check_count("warmup", warmup, 0)
    device = _resolve_device(device)
    for _ in range(warmup):
        fn()
        _sync(device)
    times = tuple(_time_once(fn, device) for _ in range(repeats))
    # Memory is measured on a separate call so the profiler's bookkeeping never enters the timings.
    peak = peak_memory(fn, device=device)
    return Measurement(
        seconds=statistics.median(times), peak_bytes=peak, times=times, device=str(device)
    )


def sweep_lengths(
    make_fn: Callable[[int], Callable[[], object]],
    lengths: Sequence[int],
    *,
    repeats: int = 3,
    warmup: int = 1,
    device: torch.device | str | None = None,
) -> dict[str, list]:
    """``measure(make_fn(L))`` for each L: {"lengths", "seconds", "peak_bytes", "peak_mib"} lists.

    ``make_fn(L)`` builds the inputs for length L (untimed) and returns the call to
    measure. The lists line up with ``lengths``, so e.g.
    ``plot_scaling(r["lengths"], {"naive": r["seconds"]}, y_label="seconds")``.
    """
    if not callable(make_fn):
        raise TypeError(f"expected make_fn to be callable, got {type(make_fn).__name__}")
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Sequence):
        raise TypeError(f"expected a sequence of lengths, got {type(lengths).__name__}")
    if len(lengths) == 0:
        raise ValueError("expected at least one sequence length, got none")
    for length in lengths:
        _check_count("every length", length, 1)
    result: dict[str, list] = {"lengths": [], "seconds": [], "peak_bytes": [], "peak_mib": []}
    for length in lengths:
        fn = make_fn(length)
        if not callable(fn):
            raise TypeError(
                f"expected make_fn({length}) to return a callable, got {type(fn).__name__}"
            )
        m = measure(fn, repeats=repeats, warmup=warmup, device=device)
        result["lengths"].append(length)
        result["seconds"].append(m.seconds)
        result["peak_bytes"].append(m.peak_bytes)
        result["peak_mib"].append(m.peak_mib)
    return result
