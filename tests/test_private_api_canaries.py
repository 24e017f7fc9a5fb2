"""Canaries for the private APIs the grader relies on (autograder/private_apis.py lists them): an
upgrade that changes one fails here, naming the API and what uses it, instead of somewhere deep
in a grading batch."""

from __future__ import annotations

import inspect
import multiprocessing
import os
import subprocess
from concurrent.futures import ProcessPoolExecutor

import pytest
import torch

from autograder import private_apis
from autograder.judging.kernel import observe
from autograder.pipeline.engines.preloaded_workers import stop_forkserver
from tests.processes import start_a_child_of_a_daemon


def changed(api: str, used_by: str, seen: object) -> str:
    return (
        f"the private API {api} changed in this version (found {seen!r}); {used_by} relies on "
        "it: adapt autograder/private_apis.py"
    )


def test_the_forkserver_is_reachable_and_stoppable_as_the_grader_does_it():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([])
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        assert pool.submit(os.getpid).result(timeout=60) > 0
        processes = private_apis.pool_processes(pool)
        assert processes and all(p.pid for p in processes), changed(
            "ProcessPoolExecutor._processes", "batch.py's _end_now", processes
        )
    pid = private_apis.forkserver_pid()
    assert isinstance(pid, int), changed(
        "multiprocessing.forkserver._forkserver._forkserver_pid", "preloaded_workers.py", pid
    )
    stop_forkserver()
    after = private_apis.forkserver_pid()
    assert after is None, changed(
        "multiprocessing.forkserver._forkserver._stop()", "preloaded_workers.py", after
    )


@pytest.mark.slow  # two fresh interpreters
def test_a_daemonic_process_may_start_children_where_the_grader_allows_it():
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    daemon = context.Process(target=start_a_child_of_a_daemon, args=(results,), daemon=True)
    daemon.start()
    daemon.join(timeout=60)
    seen = [results.get(timeout=10), results.get(timeout=10)]
    assert seen[0][0] == "refused", changed(
        "multiprocessing's daemon refusal", "dask_engine.py's grading processes", seen
    )
    assert seen[1] == ("allowed", 0), changed(
        'current_process()._config["daemon"]', "dask_engine.py's grading processes", seen
    )


def test_a_forkserver_starts_before_any_worker_asks_for_it():
    multiprocessing.get_context("forkserver").set_forkserver_preload([])
    private_apis.start_forkserver()
    try:
        pid = private_apis.forkserver_pid()
        assert isinstance(pid, int), changed(
            "multiprocessing.forkserver.ensure_running()", "preloaded_workers.py", pid
        )
        os.kill(pid, 0)  # it runs
    finally:
        stop_forkserver()


@pytest.mark.slow  # half a second or more: out of the fast tier (tests/tiers.py)
def test_torch_dispatch_modes_still_observe_aten_ops():
    result, ops = observe("aten_ops", torch.add, (torch.ones(2), torch.ones(2)), {})
    assert torch.equal(result, torch.full((2,), 2.0)), result
    assert "aten.add.Tensor" in ops, changed(
        "torch.utils._python_dispatch.TorchDispatchMode", "judging/kernel.py's observe", ops
    )


def test_nbgrader_still_scores_each_graded_cell_through_get_score():
    from nbgrader.preprocessors import GetGrades

    source = inspect.getsource(GetGrades.preprocess_cell)
    assert "self._get_score(cell, resources)" in source, changed(
        "nbgrader GetGrades._get_score(cell, resources)",
        "feedback.py's GetGradesOrPending ('pending' on ungraded answers)",
        source,
    )


def test_nbconvert_still_takes_template_paths_from_its_private_default():
    from nbconvert.exporters import TemplateExporter

    from autograder.pipeline.feedback.feedback import TEMPLATES, OfflineFeedbackExporter

    paths = OfflineFeedbackExporter().template_paths
    assert hasattr(TemplateExporter, "_template_paths") and paths[:1] == [str(TEMPLATES)], changed(
        "nbconvert TemplateExporter._template_paths",
        "feedback.py's OfflineFeedbackExporter (its templates first: no MathJax script)",
        paths[:2],
    )


def test_torch_legacy_profiler_still_reports_cpu_memory():
    from attention_lab.profiling import peak_memory

    peak = peak_memory(lambda: torch.ones(1024, 1024), device="cpu")
    assert peak >= 4 * 1024 * 1024, changed(
        "torch.autograd._enable_profiler_legacy / torch._C._profiler._ExperimentalConfig",
        "attention_lab/profiling.py (CPU peak memory)",
        peak,
    )


def test_a_new_gradebook_is_stamped_without_the_alembic_program(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook
    from sqlalchemy import create_engine, text

    def no_program(*args, **kwargs):
        raise AssertionError(f"nbgrader started a program for a new gradebook: {args}")

    private_apis.stamp_gradebooks_in_process()
    monkeypatch.setattr(subprocess, "Popen", no_program)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    try:
        Gradebook(url).close()
    except AssertionError as error:
        raise AssertionError(
            changed(
                "nbgrader.api.get_alembic_version",
                "stamp_gradebooks_in_process (Course.load, nbgrader_app.py, release.py)",
                error,
            )
        ) from None
    with create_engine(url).connect() as db:
        stamped = db.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    assert stamped == private_apis.gradebook_schema_revision()


@pytest.mark.slow
def test_the_revision_read_in_process_is_the_one_the_alembic_program_prints():
    from nbgrader.dbutil import _temp_alembic_ini

    from autograder.pipeline.course.course import tool_env

    with _temp_alembic_ini("sqlite:///unused.db") as ini:
        printed = subprocess.check_output(["alembic", "-c", ini, "heads"], env=tool_env())
    assert printed.decode().split() == [private_apis.gradebook_schema_revision(), "(head)"]
