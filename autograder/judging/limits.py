"""The judge process's limits, importable without torch (the grader's main process uses them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeLimits:
    """What one submission's judge process may use."""

    call_seconds: float = 150.0  # one exchange with the kernel
    total_seconds: float = 300.0  # every check of the submission together
    memory_bytes: int = 2 * 2**30  # address space beyond what the worker had mapped at fork
    file_bytes: int = 16 * 2**20
