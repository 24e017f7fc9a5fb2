"""Time one judged call's messages on the kernel-to-judge wire: today's (a JSON tree and
safetensors) against the pickle wire it replaced (``torch.save``, commit eb11aad^), in one run.

A judged call sends its arguments one way and its result back: here a request carrying the
payload's tensors and a short reply, over a socket pair, each side checking what it receives as
the judge does.  The old module is read from this repository's git history, so the benchmark needs
a clone with its history.  Prints one JSON line: microseconds per call for each wire and payload,
and the ratio new / old (below 1: the new wire is faster).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType

import torch

ROOT = Path(__file__).resolve().parents[1]
OLD_WIRE = "eb11aad^"  # the commit before the safetensors wire
# Typical judged calls: a scalar check, 01's attention on small random inputs (q, k, v, mask),
# 02's multi-head output with its weights, and one large tensor (an 06 logits batch).
PAYLOADS = {
    "scalar": [torch.tensor(0.5, dtype=torch.float64)],
    "attention_small": [torch.randn(3, 5, 7, dtype=torch.float64) for _ in range(3)]
    + [torch.ones(5, 5, dtype=torch.bool)],
    "multi_head": [torch.randn(4, 9, 24), torch.rand(4, 6, 9, 9)],
    "logits_large": [torch.randn(32, 64, 65)],
}


def load_protocol(revision: str | None) -> ModuleType:
    """The protocol module at ``revision`` of this repository (None: the working tree's)."""
    if revision is None:
        from autograder.judging import protocol

        return protocol
    source = subprocess.run(
        ["git", "show", f"{revision}:autograder/judging/protocol.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_protocol.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_protocol", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seconds_per_call(wire: ModuleType, tensors: list[torch.Tensor], calls: int) -> float:
    """Mean seconds for a request with ``tensors`` and its reply, the far side in a thread."""
    near, far = socket.socketpair()
    request = {"op": "call", "ref": 7, "args": [{"tensor": i} for i in range(len(tensors))]}
    reply = {"op": "result", "value": {"tensor": 0}}

    def serve() -> None:
        for _ in range(calls):
            _, received = wire.receive_message(far)
            wire.send_message(far, reply, received[:1])

    server = threading.Thread(target=serve)
    server.start()
    started = time.perf_counter()
    for _ in range(calls):
        wire.send_message(near, request, tensors)
        wire.receive_message(near)
    elapsed = time.perf_counter() - started
    server.join()
    near.close()
    far.close()
    return elapsed / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="calls per payload and round")
    parser.add_argument("--rounds", type=int, default=5, help="old and new, interleaved")
    args = parser.parse_args()
    torch.manual_seed(0)
    wires = {"pickle": load_protocol(OLD_WIRE), "safetensors": load_protocol(None)}
    best: dict[str, dict[str, float]] = {name: {} for name in wires}
    for _ in range(args.rounds):  # interleaved, so a busy moment costs both wires alike
        for payload, tensors in PAYLOADS.items():
            for name, wire in wires.items():
                seconds = seconds_per_call(wire, tensors, args.calls)
                best[name][payload] = min(best[name].get(payload, seconds), seconds)
    print(
        json.dumps(
            {
                "benchmark": "judge_wire",
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "python": platform.python_version(),
                "torch": torch.__version__,
                "calls": args.calls,
                "rounds": args.rounds,
                "microseconds_per_call": {
                    name: {p: round(s * 1e6, 1) for p, s in times.items()}
                    for name, times in best.items()
                },
                "ratio_new_over_old": {
                    p: round(best["safetensors"][p] / best["pickle"][p], 3) for p in PAYLOADS
                },
            }
        )
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
