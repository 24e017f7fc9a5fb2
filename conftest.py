"""Test-run environment: Jupyter, IPython and matplotlib kept away from $HOME, one BLAS thread,
a course secret of the run's own, and no fork beside a thread the test started
(tests/fork_guard.py)."""

import atexit
import hashlib
import os
import shutil
import tempfile

import pytest

pytest_plugins = ["tests.fork_guard"]

_DIRS = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR")
if not all(_name in os.environ for _name in _DIRS):
    # Made by the first process (xdist workers inherit the variables) and removed when it ends.
    _scratch = tempfile.mkdtemp(prefix="attention-lab-tests-")
    atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
    for _name in _DIRS:
        os.environ.setdefault(_name, os.path.join(_scratch, _name.lower()))
os.environ.setdefault("MPLBACKEND", "Agg")
# The grading command's course secret (autograder/pipeline/course/course_secret.py): a fixed one of
# the test run's own, so that no test reads or writes the user's, and the in-process grading of the
# same submissions (the public development secret) draws other hidden inputs.
if "ATTENTION_LAB_SECRET_FILE" not in os.environ:
    _secret_folder = tempfile.mkdtemp(prefix="attention-lab-test-secret-")
    atexit.register(shutil.rmtree, _secret_folder, ignore_errors=True)
    _secret_file = os.path.join(_secret_folder, "course-secret")
    with open(os.open(_secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as _file:
        _file.write(hashlib.sha256(b"attention-lab tests: the grading course secret").hexdigest())
    os.environ["ATTENTION_LAB_SECRET_FILE"] = _secret_file
# On a small machine, OpenMP threads of two busy processes (pytest and a kernel, or two
# kernels) spin against each other and slow small-tensor work down many times over.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Notebooks show progress bars; tqdm's refreshes only slow the run down under pytest.
os.environ.setdefault("TQDM_MININTERVAL", "5")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every solution notebook run by nbval is slow."""
    if item.nodeid.startswith("solutions/"):
        item.add_marker(pytest.mark.slow)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use.  Many tests wait on
    timeouts they test (a cell past its limit, a judge's deadline, workers ending after a kill),
    and meanwhile the extra worker keeps the cores busy."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The heaviest scopes first (the mutation corpus's classes that train models again, then
    those that grade through the sandbox, then other slow ones), each kept whole and in its
    order.  `--dist loadscope` hands scopes out in this order (`--no-loadscope-reorder`), so the
    quick ones fill the end and no worker idles while the other finishes a batch it took last."""

    def scope(item: pytest.Item) -> str:
        return item.nodeid.rsplit("::", 1)[0]  # as xdist's loadscope splits it

    weight: dict[str, int] = {}
    for item in items:
        heavy = (
            3
            if getattr(getattr(item, "cls", None), "trains", False) is True
            else 2
            if item.get_closest_marker("sandbox")
            else int(bool(item.get_closest_marker("slow")))
        )
        weight[scope(item)] = max(weight.get(scope(item), 0), heavy)
    items.sort(key=lambda item: -weight[scope(item)])  # stable


@pytest.fixture(scope="session")
def sandbox_required() -> None:
    """Fail, never skip, where the grading sandbox cannot be built: CI must exercise it."""
    from autograder.isolation import sandbox

    available, why = sandbox.sandbox_available()
    if not available:
        pytest.fail(f"the grading sandbox is unavailable: {why}", pytrace=False)
