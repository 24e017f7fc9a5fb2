"""The student bundle's README says what the install costs on each system, and how to get the
CPU-only build of torch on Linux, where PyPI's wheel is the CUDA build (gigabytes)."""

from __future__ import annotations

import re

from autograder.pipeline.course.release import README


def test_the_readme_warns_that_linux_gets_the_cuda_build():
    text = " ".join(README.split())
    assert "Linux and WSL:** PyPI's torch wheel for Linux is the **CUDA build**" in text
    assert re.search(r"\d+(\.\d+)? GiB of downloads", text), "the CUDA download, measured"


def test_the_readme_gives_the_cpu_only_install_by_name():
    assert (
        "python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu\n"
        in README
    )
    assert "macOS (Apple silicon) and Windows:** PyPI's torch wheels are CPU builds" in README


def test_the_readme_states_the_venv_size_with_its_date_and_machine():
    text = " ".join(README.split())
    assert re.search(r"\d\.\d+ GiB measured on \d{4}-\d\d-\d\d on x86_64 Linux", text), text
