"""The lock is pyproject.toml's, resolved: every package pyproject.toml names is pinned within its
range, and the audience locks (locks/student.txt, locks/grader.txt) pin requirements.txt's
versions.  The installed environment is requirements.txt's: every package it pins for this Python
is installed at its pinned version, and nothing it does not pin is installed (the project itself
and pip aside).  A lock that pins only the top-level packages fails here: what they pull in is
installed but not pinned.  The pins that the student bundle and the Gradescope zip take are
checked against what their extras pull in (:func:`audience_differences`, used by
tests/test_release.py and tests/test_gradescope_zip.py)."""

from __future__ import annotations

import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
NOT_LOCKED = {"attention-lab", "pip"}  # the project itself; the installer, which venv brings
REGENERATE = "regenerate it with scripts/lock.sh (docs/development.md, 'The lock')"


def lock_differences(lock: str, installed: dict[str, str]) -> list[str]:
    """How ``installed`` (name -> version) differs from the pins of ``lock`` for this Python."""
    pins: dict[str, Requirement] = {}
    for line in lock.splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            pins[canonicalize_name(requirement.name)] = requirement
    problems = []
    for name, requirement in sorted(pins.items()):
        version = installed.get(name)
        if version is None:
            problems.append(f"{requirement}: not installed")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement}: {version} is installed")
    problems += [
        f"{name} {installed[name]} is installed but not in the lock"
        for name in sorted(installed.keys() - pins.keys() - NOT_LOCKED)
    ]
    return problems


def installed_distributions() -> dict[str, str]:
    """Each distribution installed in this environment's site-packages, and its version.

    Not all of sys.path: setuptools puts the packages it vendors there once it is imported."""
    folders = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    installed: dict[str, str] = {}
    for distribution in metadata.distributions(path=folders):
        installed.setdefault(canonicalize_name(distribution.metadata["Name"]), distribution.version)
    return installed


def pulled_in(extra: str) -> dict[str, str]:
    """Each distribution installed here that the project's dependencies and its extra ``extra``
    need on this Python, directly or through others, and its version.

    Walked from pyproject.toml and the installed metadata, apart from uv's resolution
    (scripts/lock.sh), whose audience locks this checks."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [
        Requirement(s) for s in [*project["dependencies"], *project["optional-dependencies"][extra]]
    ]
    folders = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    installed = {
        canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=folders)
    }
    found: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        for wanted in ["", *requirement.extras]:  # the package itself, then each extra it asks for
            if (name, wanted) in seen:
                continue
            seen.add((name, wanted))
            found[name] = installed[name].version
            for line in installed[name].requires or ():
                child = Requirement(line)
                if child.marker is None or child.marker.evaluate({"extra": wanted}):
                    todo.append(child)
    return found


def audience_differences(pins: list[str], extra: str) -> list[str]:
    """How the pin lines ``pins`` differ, for this Python, from what ``extra`` pulls in here:
    a package pulled in but not pinned, or pinned at another version, or pinned but not needed."""
    pinned: dict[str, Requirement] = {}
    for line in pins:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            pinned[canonicalize_name(requirement.name)] = requirement
    needed = pulled_in(extra)
    problems = [
        f"{name} {needed[name]}: the {extra} extra pulls it in, but it is not pinned"
        for name in sorted(needed.keys() - pinned.keys() - NOT_LOCKED)
    ]
    problems += [
        f"{pinned[name]}: {needed[name]} is installed"
        for name in sorted(needed.keys() & pinned.keys())
        if not pinned[name].specifier.contains(needed[name], prereleases=True)
    ]
    problems += [
        f"{pinned[name]}: the {extra} extra does not need it"
        for name in sorted(pinned.keys() - needed.keys())
    ]
    return problems


def range_differences(project: dict, lock: str) -> list[str]:
    """Each requirement of pyproject.toml's ``project`` table (dependencies and every extra) that
    ``lock`` pins outside its range, or does not pin."""
    pins: dict[str, list[Requirement]] = {}
    for line in lock.splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            requirement = Requirement(line)
            pins.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    wanted = [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]
    problems = []
    for spec in map(Requirement, wanted):
        name = canonicalize_name(spec.name)
        if name in NOT_LOCKED:
            continue
        for pin in pins.get(name) or [None]:
            if pin is None:
                problems.append(f"{spec}: not in the lock")
                continue
            (version,) = (s.version for s in pin.specifier)
            if not spec.specifier.contains(version, prereleases=True):
                problems.append(f"{spec}: the lock pins {pin}")
    return problems


def test_the_lock_pins_every_package_pyproject_names_within_its_range():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = (ROOT / "requirements.txt").read_text()
    problems = range_differences(project, lock)
    assert not problems, f"pyproject.toml and requirements.txt disagree; {REGENERATE}: {problems}"
    project["optional-dependencies"]["dev"].append("numpy>=99")  # a range moved on, not resolved
    assert range_differences(project, lock) == [
        "numpy>=99: the lock pins numpy==" + _pinned(lock, "numpy")
    ]


def _pinned(lock: str, name: str) -> str:
    return next(
        line.split("==")[1].split()[0] for line in lock.splitlines() if line.startswith(f"{name}==")
    )


def _version(line: str) -> tuple[str, str]:
    """(name, version) of a pin line; its marker may differ between locks (psutil: everywhere for
    the grader, on some platforms only for a student's ipython)."""
    return line.split("==")[0].strip(), line.split("==")[1].split(";")[0].strip()


def test_the_locks_are_uvs_and_the_audience_locks_pin_the_locks_versions():
    lock = (ROOT / "requirements.txt").read_text()
    locked = {_version(line) for line in lock.splitlines() if "==" in line and line[0] != "#"}
    for path in [ROOT / "requirements.txt", *sorted((ROOT / "locks").glob("*.txt"))]:
        text = path.read_text()
        assert text.startswith(
            "# This file was autogenerated by uv via the following command:\n#    scripts/lock.sh\n"
        ), f"{path.name} is not scripts/lock.sh's output; {REGENERATE}"
        pins = {_version(line) for line in text.splitlines() if "==" in line and line[0] != "#"}
        assert pins <= locked, (
            f"{path.name} pins versions requirements.txt does not: {pins - locked}"
        )


def test_the_environment_is_the_lock():
    problems = lock_differences((ROOT / "requirements.txt").read_text(), installed_distributions())
    assert not problems, (
        "this environment is not requirements.txt's: install it in a fresh venv "
        f"(pip install -r requirements.txt), or if the lock is out of date {REGENERATE}:\n  "
        + "\n  ".join(problems)
    )


def test_a_package_pulled_in_but_not_pinned_is_named():
    lock = 'scipy==1.17.1\nzipp==4.1.2 ; python_version < "3"\n# comment\n-e .[dev]\n'
    installed = {"scipy": "1.18.1", "networkx": "3.7", "pip": "25.3", "attention-lab": "0.1.0"}
    assert lock_differences(lock, installed) == [
        "scipy==1.17.1: 1.18.1 is installed",
        "networkx 3.7 is installed but not in the lock",
    ]
    assert lock_differences("torch==2.13.0", {"torch": "2.13.0+cpu"}) == []
    assert lock_differences("torch==2.13.0", {}) == ["torch==2.13.0: not installed"]
