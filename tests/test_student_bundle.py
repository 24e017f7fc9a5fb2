"""The student bundle of every assignment N holds nothing of the grader and no line of an answer of
N or later, installs by its own files into a fresh venv, runs every notebook up to N to its first
TODO there, and a student kernel cannot import autograder.

The venv is installed once, from the last assignment's bundle; each bundle N's notebook N then
runs with that bundle's own folder first on the path, so its attention_lab is bundle N's (the
probe says so). Notebook k < N is the same file in bundle N as in bundle k, and bundle N's
package holds bundle k's: bundle k, the smallest package, is where notebook k must run.

The fresh venv does not download its third-party wheels again (CI has no time for it): it sees
exactly the installed distributions that the bundle's requirements.txt names and what they
require, found from their metadata (a site folder of links to their files; no autograder, no
nbgrader, no editable checkout), and pip then installs the bundle's requirements.txt into it with
no index. So pip itself checks every pin, and the bundle's pyproject.toml builds and installs
attention_lab from the bundle's own copy; a package the notebooks need but the requirements
do not name fails the notebooks.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from autograder.pipeline.cli import main
from tests.test_notebooks import marked_region

# every bundle installed and run, 71 s of the 6-minute tier before pushing: complete tier only
pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the fresh venv: each notebook up to the check cell of its first TODO (where the
# stub's NotImplementedError surfaces); then a cell that imports every module any cell of the
# notebook imports (so a library the requirements forget fails here, whatever cell needs it),
# and at last `import autograder`.
RUN_TO_FIRST_TODO = r"""
import ast, json, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient

PROBE = '''import importlib
for name in {modules!r}:
    importlib.import_module(name)
    print("imported", name)
import attention_lab
print("attention_lab:", attention_lab.__file__)
import autograder'''
results = {}
for path in map(Path, sys.argv[1:]):
    nb = nbformat.read(path, 4)
    modules = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    modules.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    modules.add(node.module)
    meta = [c.metadata.get("nbgrader", {}) if c.cell_type == "code" else {} for c in nb.cells]
    todo = next(i for i, m in enumerate(meta) if m.get("solution"))
    check = next(i for i, m in enumerate(meta) if i > todo and m.get("grade"))
    probe = PROBE.format(modules=sorted(modules))
    nb.cells = nb.cells[: check + 1] + [nbformat.v4.new_code_cell(probe)]
    NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [[f"{o.ename}: {o.evalue}" for o in c.get("outputs", []) if o.output_type == "error"]
              for c in nb.cells]
    streams = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    results[path.stem] = {
        "errors": errors, "todo": todo, "probe_output": streams, "modules": sorted(modules)
    }
print(json.dumps(results))
"""


def _closure(requirements: list[str]) -> list[metadata.Distribution]:
    """The installed distributions ``requirements`` name and, recursively, what they require;
    each must be installed at the version pinned."""
    found: dict[str, metadata.Distribution] = {}
    # A pin whose marker leaves this Python out (zipp's on 3.12) is not installed here.
    todo = [r for r in map(Requirement, requirements) if r.marker is None or r.marker.evaluate()]
    while todo:
        requirement = todo.pop()
        dist = metadata.distribution(requirement.name)
        assert dist.version in requirement.specifier, f"{requirement} but {dist.version} installed"
        key = dist.metadata["Name"].lower().replace("_", "-")
        extras = set(requirement.extras)
        if key in found and not extras:
            continue
        found[key] = dist
        for line in dist.requires or ():
            needed = Requirement(line)
            envs = [{"extra": extra} for extra in extras] or [{"extra": ""}]
            if needed.marker is None or any(needed.marker.evaluate(env) for env in envs):
                todo.append(needed)
    return list(found.values())


def _site_of(dists: list[metadata.Distribution], folder: Path) -> None:
    """A folder of links to the top-level files of ``dists`` (as their RECORD lists them)."""
    folder.mkdir()
    for dist in dists:
        for file in dist.files or ():
            top = file.parts[0]
            source = Path(dist.locate_file(top))
            if top == ".." or (folder / top).exists() or not source.exists():
                continue  # scripts live outside site-packages
            (folder / top).symlink_to(source)


def _secret_lines(names: list[str]) -> set[str]:
    """Lines of every solution and hidden-test region of the assignments ``names``."""
    secrets = set()
    for name in names:
        for cell in nbformat.read(ROOT / "solutions" / name / f"{name}.ipynb", 4).cells:
            secrets.update(marked_region(cell.source, "BEGIN SOLUTION", "END SOLUTION"))
            secrets.update(marked_region(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"))
    return {line for line in secrets if len(line) > 25}


def _check_bundle(bundle: Path, names: list[str], later: list[str]) -> None:
    """The bundle holds the notebooks ``names``, no grader, no line of an answer of ``later``."""
    assert zipfile.ZipFile(bundle.with_suffix(".zip")).testzip() is None
    assert sorted(p.name for p in (bundle / "notebooks").iterdir()) == names
    files = sorted(p.relative_to(bundle) for p in bundle.rglob("*") if p.is_file())
    tops = {f.parts[0] for f in files}
    assert tops == {"README.md", "requirements.txt", "pyproject.toml", "attention_lab", "notebooks"}
    assert not any(p.name in ("solutions", "autograder", "nbgrader_config.py") for p in files)
    secrets = _secret_lines(later)
    for file in files:
        text = (bundle / file).read_text(errors="replace")
        if file.suffix == ".ipynb":
            text = "\n".join(c.source for c in nbformat.reads(text, 4).cells)
        lines = {line.strip() for line in text.splitlines()}
        assert not lines & secrets, f"{bundle.name}/{file} leaks: {sorted(lines & secrets)[:3]}"
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text, file


def test_each_bundle_installs_alone_runs_to_each_todo_and_hides_the_grader(tmp_path: Path):
    names = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    bundles = {name: tmp_path / f"bundle-{name}" for name in names}
    started = time.monotonic()
    for index, name in enumerate(names):
        assert main(["release", name, "--out", str(bundles[name])]) == 0
        _check_bundle(bundles[name], names[: index + 1], names[index:])
        earlier = bundles[names[index - 1]] if index else None
        if earlier is not None:  # the earlier bundle, grown by one notebook and one reference
            for notebook in (earlier / "notebooks").rglob("*.ipynb"):
                relative = notebook.relative_to(earlier)
                assert (bundles[name] / relative).read_bytes() == notebook.read_bytes()
            for module in (earlier / "attention_lab").rglob("*.py"):
                relative = module.relative_to(earlier)
                assert (bundles[name] / relative).read_bytes() == module.read_bytes()
    built = time.monotonic() - started
    bundle = bundles[names[-1]]

    lines = (bundle / "requirements.txt").read_text().splitlines()
    requirements = [line for line in lines if not line.startswith("#")]
    pins = [line for line in requirements if "==" in line]  # some with a python_version marker
    assert requirements[-1] == "." and not {"nbgrader", "autograder"} & {
        Requirement(p).name for p in pins
    }
    readme = (bundle / "README.md").read_text()
    assert "pip install -r requirements.txt" in readme and "jupyter lab" in readme

    # A fresh venv that sees only what the requirements name; setuptools builds the package.
    started = time.monotonic()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    _site_of(_closure([*pins, "setuptools"]), tmp_path / "wheels-installed")
    (site / "bundle-deps.pth").write_text(
        f"import site; site.addsitedir({str(tmp_path / 'wheels-installed')!r})\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
        + ["--no-build-isolation", "--no-input", "-r", "requirements.txt"],
        cwd=bundle,
        env=env,
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    installed = time.monotonic() - started

    started = time.monotonic()
    results = {}
    for name in names:  # each notebook in its own bundle, whose attention_lab comes first
        notebook = bundles[name] / "notebooks" / name / f"{name}.ipynb"
        run = subprocess.run(
            [python, "-c", RUN_TO_FIRST_TODO, str(notebook)],
            cwd=tmp_path,
            env={**env, "PYTHONPATH": str(bundles[name])},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        results.update(json.loads(run.stdout.strip().splitlines()[-1]))
    for name in names:
        *cells, probe = results[name]["errors"]
        first = next(i for i, errors in enumerate(cells) if errors)
        assert first >= results[name]["todo"], f"{name}: cell {first} fails before the TODO"
        assert cells[first] == ["NotImplementedError: "], f"{name}: the TODO raised {cells[first]}"
        shown = results[name]["probe_output"]
        for module in results[name]["modules"]:
            assert f"imported {module}\n" in shown, f"{name}: {module} cannot be imported: {probe}"
        package = bundles[name] / "attention_lab" / "__init__.py"
        assert f"attention_lab: {package}" in shown, f"{name}: attention_lab came from {shown}"
        wanted = ["ModuleNotFoundError: No module named 'autograder'"]
        assert probe == wanted, f"{name}: `import autograder` gave {probe}"
    ran = time.monotonic() - started
    print(
        f"\n{len(names)} bundles built in {built:.1f} s; the last installed in {installed:.1f} s; "
        f"notebooks run to their TODOs in {ran:.1f} s"
    )
