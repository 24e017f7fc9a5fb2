"""The student bundle: what students receive, and nothing of the grader.

``python -m autograder release NN_name`` makes the bundle of one assignment: it regenerates that
assignment and the earlier ones from ``solutions/`` with nbgrader (so the bundle never depends on
a stale ``notebooks/``), refuses to write a bundle in which any line of a solution or hidden-test
region of that assignment or a later one survives, and writes::

    <out>/README.md          two commands: install, then jupyter lab
    <out>/requirements.txt   the lock's pins of all the notebooks need, then the package (.)
    <out>/pyproject.toml     the attention_lab package alone
    <out>/attention_lab/     the tools, and the reference answers of the earlier assignments only
    <out>/notebooks/NN_name/NN_name.ipynb   this assignment's and the earlier ones

No ``solutions/``, no ``autograder/``, no ``nbgrader_config.py``: a JupyterLab started in the
bundle loads no instructor configuration, and nbgrader is not installed (students do not need
its Validate: each notebook's own check cells say what is wrong).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

import nbformat

from autograder.cells import REGIONS, region_lines
from autograder.isolation.staging import copy_package
from autograder.pipeline.course.course import GradingError

ROOT = Path(__file__).resolve().parents[3]
DEFAULT = Path("dist")  # under the repository root, git-ignored: dist/attention-lab-<assignment>
PACKAGE = "attention_lab"
# A secret line this short (`return out`) may legitimately appear in a student copy too.
SHORTEST_SECRET = 26

README = """# Attention Lab: student copy

Jupyter assignments on attention and transformers, from scratch in PyTorch.
You need Python 3.11 or newer; a fresh virtual environment is best
(`python -m venv .venv && source .venv/bin/activate`). In this folder:

```bash
python -m pip install -r requirements.txt
jupyter lab notebooks/
```

`requirements.txt` pins every package the install brings, not only those the notebooks name, so
the whole class runs the same versions. Not pinned there: the few packages only macOS or Windows
needs, and the CUDA packages of Linux's default torch build (below), which torch's own metadata
constrains.

**What the install downloads.** Almost all of it is PyTorch (`torch==2.13.0`), and which build pip
picks depends on your system (figures measured on 2026-11-26):

- **macOS (Apple silicon) and Windows:** PyPI's torch wheels are CPU builds: 106 MiB for macOS
  arm64, 116 MiB for Windows x86_64. The command above is all you need. (PyPI has no torch 2.13
  wheel for Intel Macs.)
- **Linux and WSL:** PyPI's torch wheel for Linux is the **CUDA build**: pip resolves
  `torch==2.13.0` to a 502 MiB wheel plus triton and sixteen `nvidia-*`/`cuda-*` packages:
  **2.55 GiB of downloads** on x86_64 (resolved with `pip install torch==2.13.0 --dry-run
  --report`), more once unpacked; on arm64 Linux the wheel asks for CUDA packages too. You do
  not need CUDA for this course: every notebook runs on a laptop CPU.
  Get the CPU-only build (a 183 MiB wheel) from PyTorch's own CPU wheel index first, then the
  rest (pip keeps the installed `2.13.0+cpu`, which satisfies the pin):

  ```bash
  python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
  python -m pip install -r requirements.txt
  ```

  If you have an NVIDIA GPU and want to use it, the plain command above is the one to run.

With the CPU build, the whole virtual environment takes about 1.5 GiB of disk (1.44 GiB measured
on 2026-11-26 on x86_64 Linux with Python 3.11, of it 754 MiB torch).

Open the assignments in order ({names}). Replace every
`raise NotImplementedError()` with your code, then run the check cell below it: its message
tells you what is wrong and what to look at. Passing the public checks is necessary, not
sufficient: hidden tests run the same properties on sizes and seeds you have not seen.
Answer the "explain in your own words" cells in prose; they are graded by hand.
When graded, the notebook's own cells and your answer cells run, in order; cells you add do
not, so put everything an answer needs (a helper, an import) in its answer cell.
Hand in each notebook as your course tells you (the `.ipynb` file, with its name unchanged).
"""


def student_requirements(root: Path = ROOT) -> list[str]:
    """The lock's pins of everything the package's dependencies and its ``student`` extra need."""
    return lock_pins("student", root)


def lock_pins(extra: str, root: Path = ROOT) -> list[str]:
    """The pin lines, markers and all, of every package the package's dependencies and its extra
    ``extra`` pull in, transitive ones included: ``locks/<extra>.txt``, which scripts/lock.sh
    resolves with uv at requirements.txt's versions.  Refused where the two disagree, or where
    it leaves out a package pyproject.toml names: the lock is out of date."""
    regenerate = "regenerate the lock with scripts/lock.sh (docs/development.md, 'The lock')"
    path = root / "locks" / f"{extra}.txt"
    if not path.is_file():
        raise GradingError(f"no {path.relative_to(root)}: {regenerate}")
    pins = _pin_lines(path)  # a package may have a line per range of Pythons
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    named = {
        _name(spec) for spec in [*project["dependencies"], *project["optional-dependencies"][extra]]
    }
    missing = sorted(named - {_name(line) for line in pins})
    if missing:
        raise GradingError(
            f"{path.relative_to(root)} pins none of: {', '.join(missing)}; {regenerate}"
        )
    # The versions must be the lock's; a marker may differ (psutil is needed everywhere by the
    # grader, on some platforms only by a student's ipython).
    locked = {_version(line) for line in _pin_lines(root / "requirements.txt")}
    differ = [line for line in pins if _version(line) not in locked]
    if differ:
        raise GradingError(
            f"{path.relative_to(root)} pins {', '.join(differ)}, which requirements.txt does not; "
            f"{regenerate}"
        )
    return pins


def _pin_lines(path: Path) -> list[str]:
    """The requirement lines of a pip requirements file, without comments or options."""
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def _version(pin: str) -> tuple[str, str]:
    """(name, version) of a pin line ``name==version ; marker``."""
    return _name(pin), pin.split("==", 1)[1].split(";")[0].strip()


def _name(spec: str) -> str:
    """The normalised distribution name of a requirement line (``scikit-learn>=1`` -> ...)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    if match is None:
        raise GradingError(f"cannot read a package name in {spec!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def _package_pyproject(root: Path) -> str:
    """A pyproject.toml that builds attention_lab alone, with the repository's ranges."""
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    dependencies = ",\n".join(f'    "{spec}"' for spec in project["dependencies"])
    return (
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{PACKAGE}"\nversion = "{project["version"]}"\n'
        'description = "The shared package of the Attention Lab notebooks."\n'
        f'requires-python = "{project["requires-python"]}"\n'
        f"dependencies = [\n{dependencies},\n]\n\n"
        f'[tool.setuptools.packages.find]\ninclude = ["{PACKAGE}*"]\n\n'
        f'[tool.setuptools.package-data]\n{PACKAGE} = ["corpora/*.txt"]\n'
    )


def assignments(root: Path = ROOT) -> list[str]:
    """The assignments of ``solutions/``, in order."""
    return sorted(
        p.name for p in (root / "solutions").iterdir() if (p / f"{p.name}.ipynb").exists()
    )


def released_with(assignment: str, root: Path = ROOT) -> list[str]:
    """The assignments a release of ``assignment`` holds: it and the earlier ones, in order."""
    names = assignments(root)
    if assignment not in names:
        raise GradingError(
            f"unknown assignment {assignment!r}; expected one of: {', '.join(names)}"
        )
    return names[: names.index(assignment) + 1]


def generate(root: Path, destination: Path, names: list[str]) -> None:
    """Run nbgrader's generate_assignment on the assignments ``names`` into ``destination``, in a
    scratch course (the instructor's gradebook and notebooks/ are left alone)."""
    config = (root / "nbgrader_config.py").read_bytes()
    for name in names:
        source = root / "solutions" / name
        digest = hashlib.sha256(config)
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
        for relative, data in _generated(root, name, digest.hexdigest()).items():
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            (destination / relative).write_bytes(data)


@functools.lru_cache(maxsize=16)
def _generated(root: Path, name: str, digest: str) -> dict[str, bytes]:
    """The files nbgrader generates for assignment ``name``, by path: made once per process for
    each content of its solutions (``digest``), so releasing N after N - 1 generates only N."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.private_apis import stamp_gradebooks_in_process

    stamp_gradebooks_in_process()  # the scratch course's new gradebook
    with tempfile.TemporaryDirectory(prefix="attention-lab-release-") as scratch:
        course = Path(scratch)
        shutil.copy(root / "nbgrader_config.py", course / "nbgrader_config.py")
        shutil.copytree(root / "solutions" / name, course / "solutions" / name)
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        release = course / "release"
        config.CourseDirectory.release_directory = str(release)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = name
        converter = GenerateAssignment(coursedir=coursedir, config=config)
        converter.force = True
        converter.start()
        return {
            str(p.relative_to(release)): p.read_bytes()
            for p in release.rglob("*")
            if p.is_file() and ".ipynb_checkpoints" not in p.parts
        }


def secret_lines(solution: nbformat.NotebookNode) -> set[str]:
    """Every line (stripped, long enough to be telling) inside a secret region."""
    found = set()
    for cell in solution.cells:
        for region in REGIONS:
            for line, place in region_lines(cell.source, region):
                if place == "inside" and len(line.strip()) >= SHORTEST_SECRET:
                    found.add(line.strip())
    return found


def leaks(bundle: Path, assignment: str, root: Path = ROOT) -> list[str]:
    """``file: line`` for every secret line of ``assignment`` or a later one (or a region marker)
    found in any file under ``bundle``: a student bundle, or the sandbox's staging folder."""
    names = assignments(root)
    secrets = set()
    for name in names[names.index(assignment) :]:
        secrets |= secret_lines(nbformat.read(root / "solutions" / name / f"{name}.ipynb", 4))
    markers = [marker for region in REGIONS for marker in region]
    found = []
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        text = path.read_text(errors="replace")
        if path.suffix == ".ipynb":  # compare cell lines, not JSON-escaped text
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(cell["source"]) for cell in cells)
        lines = {line.strip() for line in text.splitlines()}
        hits = sorted(lines & secrets) + [m for m in markers if m in text]
        found += [f"{path.relative_to(bundle)}: {hit}" for hit in hits]
    return found


def build_bundle(out: Path, assignment: str, root: Path = ROOT) -> list[str]:
    """Write the bundle of ``assignment`` to ``out`` (replacing it); the assignments it holds."""
    names = released_with(assignment, root)
    out = out.resolve()
    if out == root.resolve() or root.resolve().is_relative_to(out):
        raise GradingError(f"{out} holds the repository: choose an empty or new folder")
    if out.exists():
        if not (out / "README.md").is_file() and any(out.iterdir()):
            raise GradingError(f"{out} is not empty and is not a bundle: choose another folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    generate(root, out / "notebooks", names)
    for stray in (out / "notebooks").rglob("*"):  # nbgrader may leave checkpoints behind
        if stray.is_dir() and stray.name == ".ipynb_checkpoints":
            shutil.rmtree(stray)
    copy_package(assignment, out / PACKAGE, root / PACKAGE)
    (out / "pyproject.toml").write_text(_package_pyproject(root))
    pins = student_requirements(root)
    (out / "requirements.txt").write_text(
        "# The course's lock for what the notebooks need, all they pull in included (on Linux;\n"
        "# another OS adds the few packages only it needs, unpinned). The last line installs\n"
        "# attention_lab from this folder.\n" + "\n".join(pins) + "\n.\n"
    )
    (out / "README.md").write_text(README.format(names=", ".join(f"`{n}`" for n in names)))
    found = leaks(out, assignment, root)
    if found:
        shutil.rmtree(out)
        raise GradingError("the bundle would leak, so none was written:\n  " + "\n  ".join(found))
    return names


def stale_notebooks(bundle: Path, root: Path = ROOT) -> list[str]:
    """Assignments whose committed notebooks/ copy differs from the bundle's fresh one."""
    stale = []
    for name in sorted(p.name for p in (bundle / "notebooks").iterdir()):
        committed = root / "notebooks" / name / f"{name}.ipynb"
        fresh = nbformat.read(bundle / "notebooks" / name / f"{name}.ipynb", 4)
        if not committed.exists() or nbformat.read(committed, 4) != fresh:
            stale.append(name)
    return stale


def main(assignment: str | None, out: Path | None) -> int:
    """``python -m autograder release ASSIGNMENT``: build its bundle and zip; the exit status.

    With no assignment it refuses: a release is always made for one assignment, so that no
    student gets a later assignment's reference answers by default.
    """
    if assignment is None:
        print(
            "error: name the assignment to release (the bundle holds it and the earlier ones): "
            f"one of {', '.join(assignments())}",
            file=sys.stderr,
        )
        return 2
    out = out or ROOT / DEFAULT / f"attention-lab-{assignment}"
    try:
        names = build_bundle(out, assignment)
    except GradingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    archive = shutil.make_archive(str(out), "zip", out.parent, out.name)
    held = f"{len(names)} assignment" + ("" if len(names) == 1 else "s")
    print(f"student bundle: {out} ({held}), and as one file {archive}")
    for name in stale_notebooks(out):
        print(
            f"warning: notebooks/{name} differs from what nbgrader generates now (the bundle "
            f"holds the fresh copy): run nbgrader generate_assignment {name} --force, commit it",
            file=sys.stderr,
        )
    return 0
