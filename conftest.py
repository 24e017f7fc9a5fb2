"""Test-run environment: Jupyter, IPython and matplotlib kept away from $HOME, one BLAS thread."""

import os
import tempfile

import pytest

_scratch = tempfile.mkdtemp(prefix="attention-lab-tests-")
for _name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
    os.environ.setdefault(_name, os.path.join(_scratch, _name.lower()))
os.environ.setdefault("MPLBACKEND", "Agg")
# On a small machine, OpenMP threads of two busy processes (pytest and a kernel, or two
# kernels) spin against each other and slow small-tensor work down many times over.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Notebooks show progress bars; tqdm's refreshes only slow the run down under pytest.
os.environ.setdefault("TQDM_MININTERVAL", "5")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every solution notebook run by nbval is slow.  Under ``-n N --dist loadgroup``, a file's
    tests stay on one worker (a notebook's cells share a kernel; module fixtures such as a graded
    batch run once), except in modules that set ``SPREAD_ACROSS_WORKERS = True``."""
    for item in items:
        if item.nodeid.startswith("solutions/"):
            item.add_marker(pytest.mark.slow)
        module = getattr(item, "module", None)
        if not getattr(module, "SPREAD_ACROSS_WORKERS", False):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
