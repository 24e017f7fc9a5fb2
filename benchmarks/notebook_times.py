"""Execute every solution notebook top to bottom and time it, kernel start included.

The last line printed is a JSON object: seconds per notebook and in total.
Goals on a 2-core CPU: each notebook <= 60 s, the whole course <= 150 s.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def run_notebook(path: Path) -> float:
    """Seconds to start a kernel and run every cell of the notebook at ``path``."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": scratch}}
        ).execute()
    return time.perf_counter() - start


def main() -> None:
    scratch = tempfile.mkdtemp(prefix="notebook-times-")
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        os.environ.setdefault(name, os.path.join(scratch, name.lower()))
    os.environ.setdefault("MPLBACKEND", "Agg")
    only = set(sys.argv[1:])
    seconds = {}
    for path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        if only and path.stem not in only:
            continue
        seconds[path.stem] = round(run_notebook(path), 1)
        print(f"{path.stem}: {seconds[path.stem]} s", flush=True)
    print(
        json.dumps(
            {
                "benchmark": "notebook_times",
                "cpu_count": os.cpu_count(),
                "machine": platform.machine(),
                "seconds": seconds,
                "total_s": round(sum(seconds.values()), 1),
                "max_s": max(seconds.values(), default=0.0),
                "goal_each_s": 60,
                "goal_total_s": 150,
            }
        )
    )


if __name__ == "__main__":
    main()
