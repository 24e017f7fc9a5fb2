"""The notebooks' public check helpers: clean one-sentence failures, one line on success."""

from __future__ import annotations

import traceback

import numpy as np
import pytest
import torch

from attention_lab.checking import all_passed, check, check_close


def test_check_passes_silently_and_fails_with_the_message(capsys):
    check(True, "never shown")
    with pytest.raises(AssertionError, match=r"^rows must sum to 1$"):
        check(torch.tensor(False), "rows must sum to 1")
    assert capsys.readouterr() == ("", "")


def test_check_close_accepts_tensors_arrays_and_lists_alike():
    check_close(torch.ones(2, 3), np.ones((2, 3)), "unused")
    check_close([[1.0, 2.0]], torch.tensor([[1.0, 2.0 + 1e-7]]), "unused")
    check_close(torch.ones(3, dtype=torch.float64, requires_grad=True), torch.ones(3), "unused")


def test_check_close_names_the_first_difference():
    actual = torch.zeros(2, 3)
    actual[1, 2] = 0.5
    with pytest.raises(AssertionError) as failure:
        check_close(actual, torch.zeros(2, 3), "weights differ")
    assert str(failure.value) == (
        "weights differ (1 of 6 values differ; first at index (1, 2): got 0.5, expected 0)"
    )


@pytest.mark.parametrize(
    ("actual", "expected_text"),
    [
        (torch.zeros(3, 2), "weights differ (expected shape (2, 3), got (3, 2))"),
        (None, "weights differ (expected a tensor, got None)"),
        (torch.full((2, 3), float("nan")), "weights differ (6 of 6 values differ"),
    ],
)
def test_check_close_explains_shape_type_and_nan(actual, expected_text):
    with pytest.raises(AssertionError) as failure:
        check_close(actual, torch.zeros(2, 3), "weights differ")
    assert str(failure.value).startswith(expected_text)


def test_no_frame_from_inside_torch():
    with pytest.raises(AssertionError) as failure:
        check_close(torch.ones(2), torch.zeros(2), "outputs differ")
    files = [frame.filename for frame in traceback.extract_tb(failure.value.__traceback__)]
    assert not any(
        "torch" in name.replace("\\", "/").split("/site-packages/")[-1] for name in files
    )


def test_all_passed_prints_one_line_on_stdout(capsys):
    all_passed("attention")
    assert capsys.readouterr() == ("\u2713 attention: all public checks passed\n", "")


@pytest.mark.slow
def test_a_failing_public_check_shows_its_message_first_in_a_real_kernel():
    """In ipykernel, as JupyterLab runs it, the rendered traceback opens with the message and
    holds no frame of attention_lab/checking.py."""
    import nbformat
    from nbclient import NotebookClient

    source = (
        "import torch\nfrom attention_lab.checking import check, check_close\n"
        "check_close(torch.zeros(3), torch.ones(3), 'rows must sum to 1 over the keys')"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    client = NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True)
    client.execute()
    (error,) = [o for o in notebook.cells[0].outputs if o.output_type == "error"]
    assert error.ename == "AssertionError"
    assert error.traceback[0].startswith("AssertionError: rows must sum to 1 over the keys")
    assert not any("checking.py" in line for line in error.traceback), error.traceback
