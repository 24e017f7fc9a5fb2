"""Feedback that shows hidden checks by name and message only, never their source, and that
reads well offline.

nbgrader's own feedback prints the autograded notebook as is, hidden tests included
(nbgrader issues #917 and #1363). ``RedactHiddenTests`` runs in ``generate_feedback``
(see nbgrader_config.py) and, in every cell that had hidden tests, removes the hidden
region and cuts error tracebacks down to their last line: "CheckFailed: [check] diagnosis".

``OfflineFeedbackExporter`` renders the page: maths as MathML when the feedback is made
(latex2mathml), so no script is loaded from the network and nothing runs in a reader's browser;
markdown sanitised *after* it is rendered (a blockquote stays a blockquote); each graded cell's
score in words ("1.5 of 2 points"), and an answer still waiting for a human grader "pending",
not 0 (``GetGradesOrPending``); a summary that names each graded cell, in the words of the
notebook's "What is graded" table; long lines of output and code wrapped, never scrolled sideways.
"""

from __future__ import annotations

import html
import json
import os
import resource
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import bleach
from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import InvalidNotebook, IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat import NotebookNode
from nbgrader.preprocessors import GetGrades
from traitlets import Bool, default

from autograder.authoring.graded_table import parts_of
from autograder.cells import HIDDEN_TESTS, region_lines
from autograder.pipeline.course.course import NBGRADER, Course, GradingError, tool_env
from autograder.pipeline.intake.intake import ATTACHMENT_REFERENCE, MAX_SOURCE_CHARS
from autograder.pipeline.records.csv_file import locked
from autograder.pipeline.records.grade_record import grade_states, grading_folder

PLACEHOLDER = "# (hidden checks ran here; their names and results are shown below)"


def redact_source(source: str) -> tuple[str, bool]:
    """Replace each hidden region of a cell's source by one placeholder line, indented as its
    opening marker (an unterminated region is hidden to the end)."""
    kept, found = [], False
    for line, place in region_lines(source, HIDDEN_TESTS):
        if place == "begin":
            found = True
            indent = line[: len(line) - len(line.lstrip())]
            kept.append(indent + PLACEHOLDER + ("\n" if line.endswith("\n") else ""))
        elif place == "outside":
            kept.append(line)
    return "".join(kept), found


def redact_cell(cell: NotebookNode) -> NotebookNode:
    """Redact one cell in place and return it."""
    if cell.cell_type != "code":
        return cell
    cell.source, had_hidden = redact_source(cell.source)
    if had_hidden:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [
                    f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
                ]
    return cell


class RedactHiddenTests(Preprocessor):
    """nbconvert preprocessor: hide hidden-test source and tracebacks in feedback."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        return redact_cell(cell), resources


# A figure wider than the page (a row of three plots is ~1600 px) is scaled down to fit it,
# instead of running past the page's right edge.
FIT_FIGURES_CSS = ".output_png img, .output_jpeg img { max-width: 100%; height: auto; }"


class FitFigures(Preprocessor):
    """nbconvert preprocessor: adds FIT_FIGURES_CSS to the page's inlined styles; it must come
    after CSSHTMLHeaderPreprocessor, which sets them."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources):
        resources.setdefault("inlining", {}).setdefault("css", []).append(FIT_FIGURES_CSS)
        return nb, resources


# Each feedback run is bounded: the whole class's run and, when it fails, each student's own.
SECONDS_PER_STUDENT = 120.0
MEMORY_BYTES = 4 * 2**30  # address space of one nbgrader process


# ------------------------------------------------------------------------------------------
# Scores in words, and "pending" for what a human has not graded yet


class GetGradesOrPending(GetGrades):
    """nbgrader's GetGrades, and ``pending`` on each graded cell that has no score yet (a written
    answer before hand grading): the page says "pending" there, not 0, and its total says how many
    points wait for a human (``resources["nbgrader"]["pending_points"]``)."""

    def preprocess(self, nb, resources):
        resources["nbgrader"]["pending_points"] = 0.0
        return super().preprocess(nb, resources)

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"],
            self.notebook_id,
            self.assignment_id,
            self.student_id,
        )
        pending = grade.auto_score is None and grade.manual_score is None
        cell.metadata.nbgrader["pending"] = pending
        if pending:
            resources["nbgrader"]["pending_points"] += grade.max_score or 0.0


def points(value: float | None) -> str:
    """A point count as a reader writes it: 2, 1.5, 0.25 (never 2.0)."""
    return f"{round(float(value or 0.0), 2):g}"


def score_in_words(score: float | None, possible: float | None, pending: bool = False) -> str:
    """ "1.5 of 2 points", or "pending (2 points, graded by hand)" before a human grades it."""
    if pending:
        return f"pending ({points(possible)} {_noun(possible)}, graded by hand)"
    return f"{points(score)} of {points(possible)} {_noun(possible)}"


def _noun(possible: float | None) -> str:
    return "point" if float(possible or 0.0) == 1 else "points"


def graded_parts(notebook: NotebookNode) -> dict[str, str]:
    """grade id -> what the notebook's "What is graded" table calls that cell (markdown), so the
    page's summary names each cell in the author's words; empty when no table can be read."""
    try:
        return parts_of(notebook)
    except ValueError:  # a table the student broke: the summary names cells by grade id alone
        return {}


# ------------------------------------------------------------------------------------------
# Maths without a script, markdown sanitised after rendering

TEMPLATES = Path(__file__).with_name("templates")
MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"


def tex_to_mathml(tex: str, display: str) -> str:
    """TeX as MathML (``display`` "inline" or "block"); TeX latex2mathml cannot read stays TeX,
    shown as code."""
    from latex2mathml.converter import convert

    try:
        mathml = convert(tex, display=display)
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds on TeX it does not know
        return f'<code class="tex">{html.escape(tex)}</code>'
    # HTML needs no namespace on <math>; with one, nbconvert's heading anchors (an ElementTree
    # round trip) rename every tag ns0:..., which the sanitiser then shows as text.
    return mathml.replace(f' xmlns="{MATHML_NAMESPACE}"', "", 1)


# A link or image written as a reference (``[text][ref]``, with ``[ref]: <address>`` once) spells
# its address out again at every use: nine cells using a 60 kB address 5,700 times each took the
# feedback run to its memory limit.  The addresses and titles one page's links and images spell
# out (as written; markdown outputs count too) are bounded by twice the most source a notebook
# may hold, which cells that spell each of them once cannot reach; the cell that passes the
# bound, and any later one with a link, is shown as its text.  Escaping makes a character at
# most a dozen on the page.
MAX_LINK_CHARS = 2 * MAX_SOURCE_CHARS
_LINK_CHARS_LEFT = "autograder_link_chars_left"  # this page's, in its nbconvert resources
LINKS_TOO_LONG = (
    "shown as its text: its links and images repeat their addresses past what one page may "
    f"spell out ({MAX_LINK_CHARS:,} characters of addresses and titles)"
)


class _LinksTooLong(Exception):
    """A cell's links and images spelled out more than the page had left."""


class _MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with maths written as MathML instead of TeX for MathJax,
    that stops (:class:`_LinksTooLong`) once its links and images have spelled out more than
    ``link_chars`` characters of addresses and titles."""

    def __init__(self, *args, link_chars: int, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        self.link_chars = link_chars

    def _spell(self, url: str, title: str | None) -> None:
        self.link_chars -= len(url) + len(title or "")
        if self.link_chars < 0:
            raise _LinksTooLong

    def link(self, text: str, url: str, title: str | None = None) -> str:
        self._spell(url, title)
        return super().link(text, url, title)

    def image(self, text: str, url: str, title: str | None = None) -> str:
        self._spell(url, title)
        return super().image(text, url, title)

    def inline_math(self, body: str) -> str:
        return tex_to_mathml(body, "inline")

    def block_math(self, body: str) -> str:
        return tex_to_mathml(body, "block")

    def latex_environment(self, name: str, body: str) -> str:
        return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")


# What latex2mathml writes; presentation MathML holds no script and no link.
_MATHML_TAGS = """math mrow mi mn mo ms mtext mspace msub msup msubsup mfrac msqrt mroot mover
munder munderover mtable mtr mtd mstyle mpadded mphantom menclose mfenced semantics
annotation""".split()
_MATHML_ATTRIBUTES = """display xmlns mathvariant stretchy fence separator form lspace rspace
largeop movablelimits accent accentunder width height depth displaystyle scriptlevel columnalign
rowspacing columnspacing notation open close linethickness encoding minsize maxsize
symmetric""".split()
# What nbconvert's markdown renderer writes (headings with anchors, tables, code with pygments'
# spans, task lists), and MathML; anything else a student wrote is shown as text.
MARKDOWN_TAGS = sorted(
    {
        *bleach.ALLOWED_TAGS,
        *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "span", "div", "del", "s"),
        *("table", "thead", "tbody", "tr", "th", "td", "img", "sub", "sup", "dl", "dt", "dd"),
        "input",
        *_MATHML_TAGS,
    }
)


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if tag in _MATHML_TAGS:
        return name in _MATHML_ATTRIBUTES
    if tag == "img":
        return name in ("alt", "title") or (
            name == "src" and value.startswith(("data:image/png", "data:image/jpeg", "http"))
        )
    if tag == "a":
        return (
            name == "title"
            or (name == "href" and not value.lower().startswith("data:"))
            or (name == "class" and value == "anchor-link")
        )
    if tag == "input":
        return name in ("type", "checked", "disabled") and (name != "type" or value == "checkbox")
    return (
        (name == "class" and tag in ("span", "div", "pre", "code"))
        or (name == "id" and tag in ("h1", "h2", "h3", "h4", "h5", "h6"))
        or (name == "style" and tag in ("th", "td") and value.startswith("text-align"))
    )


def sanitize_rendered_markdown(rendered: str) -> str:
    """The HTML a markdown cell rendered to, with only :data:`MARKDOWN_TAGS` kept as markup."""
    return bleach.clean(
        rendered,
        tags=MARKDOWN_TAGS,
        attributes=_allowed_attribute,
        protocols=["http", "https", "mailto", "data"],
        strip=False,
        strip_comments=True,
    )


class SanitizeOutputs(SanitizeHTML):
    """nbconvert's SanitizeHTML for outputs and raw cells; markdown cells are left to
    :class:`OfflineFeedbackExporter`, which sanitises the HTML they render to (sanitising the
    markdown source escaped its ``>`` and so turned every blockquote into literal text)."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            return cell, resources
        return super().preprocess_cell(cell, resources, index)


class OfflineFeedbackExporter(HTMLExporter):
    """nbgrader's feedback page (its ``feedback`` template) with scores in words, markdown
    sanitised after rendering and maths as MathML: no script from the network, none at all."""

    @default("template_file")
    def _default_template_file(self) -> str:
        return "offline_feedback.html.j2"

    @default("template_paths")
    def _template_paths(self, prune: bool = True, root_dirs=None) -> list[str]:  # noqa: ANN001
        # first, so that its mathjax.html.j2 (no script) stands in for nbconvert's
        return [str(TEMPLATES), *super()._template_paths(prune, root_dirs)]

    def default_filters(self):
        yield from super().default_filters()
        yield ("score_in_words", score_in_words)
        yield ("points", points)
        yield ("graded_parts", graded_parts)

    @pass_context
    def markdown2html(self, context, source: str) -> str:  # noqa: ANN001
        cell = context.get("cell", {})
        path = context.get("resources", {}).get("metadata", {}).get("path", "")
        attachments = cell.get("attachments") or {}
        # nbconvert refuses a page whose markdown names a missing attachment (one the intake left
        # out past its budget, or one never attached): such a reference is shown as a broken
        # image, and a cell nbconvert still refuses as its text, so the student gets her page.
        source = ATTACHMENT_REFERENCE.sub(
            lambda found: found[0] if found[1] in attachments else f"missing-{found[0]}", source
        )
        resources = context.get("resources", {})
        left = resources.get(_LINK_CHARS_LEFT, MAX_LINK_CHARS)
        renderer = _MathMLRenderer(
            link_chars=left,
            escape=False,
            attachments=attachments,
            embed_images=self.embed_images,
            path=path,
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        try:
            rendered = sanitize_rendered_markdown(
                MarkdownWithMath(renderer=renderer).render(source)
            )
        except InvalidNotebook as error:
            rendered = _as_text(source, str(error))
        except _LinksTooLong:
            renderer.link_chars = 0  # what this cell spelled out before it stopped
            rendered = _as_text(source, LINKS_TOO_LONG)
        resources[_LINK_CHARS_LEFT] = renderer.link_chars
        # The template's next filter (nbconvert's strip_files_prefix) scans from every "[" to
        # the end of its line: a line of 20,000 took it 3 s, one of 50,000 about 20.  "&#91;"
        # reads as "[" in text and attributes alike.
        return rendered.replace("[", "&#91;")


def _as_text(source: str, why: str) -> str:
    """A markdown cell shown as its text, after a line saying why."""
    return f"<p>({html.escape(why)})</p><pre>{html.escape(source)}</pre>"


def generate_feedback(course: Course, assignment: str, students: Sequence[str] = ()) -> None:
    """nbgrader generate_feedback for every student, or only ``students``; hidden checks redacted
    by the course's config (RedactHiddenTests above).

    The class runs in one process, bounded in time and memory; if it fails, each student runs
    alone, bounded the same way, so one submission's feedback cannot cost the others theirs.
    :class:`GradingError` names the students whose feedback could not be made.
    """
    command = [
        *NBGRADER,
        "generate_feedback",
        assignment,
        "--force",
        f"--CourseDirectory.db_url={course.coursedir.db_url}",  # --db may differ from the config
    ]
    graded = course.path(course.coursedir.autograded_directory, ".", ".")
    wanted = list(students) or sorted(p.parent.name for p in graded.glob(f"*/{assignment}"))
    started = time.time() - 1  # a page older than this was not made by this run
    states = grade_states(course.coursedir.db_url, course.coursedir.course_id, assignment, wanted)
    seen: dict[str, str] = {}
    try:
        if not students:
            why = _failure(course, command, [], SECONDS_PER_STUDENT * max(len(wanted), 1))
            if why is None and all(_made(course, assignment, s, started) for s in wanted):
                return
        _each_alone(course, assignment, command, wanted, bool(students), started, seen)
    finally:  # the pages written now show the gradebook as it was read above
        made = [s for s in wanted if s in states and _made(course, assignment, s, started)]
        _remember(course, assignment, {s: states[s] for s in made})
    if seen:
        raise GradingError(
            "; ".join(
                f"nbgrader generate_feedback {assignment} --student {s} {why}"
                for s, why in seen.items()
            )
            + "; the grades are recorded (and the others' feedback written), rerun it to get "
            "the feedback"
        )


def _each_alone(
    course: Course,
    assignment: str,
    command: list[str],
    wanted: Sequence[str],
    all_of_them: bool,
    started: float,
    seen: dict[str, str],
) -> None:
    """Run the feedback of each student in ``wanted`` alone (of each whose page the class's run
    did not write, unless ``all_of_them``); ``seen`` gets why one failed."""
    for student in wanted:
        if all_of_them or not _made(course, assignment, student, started):
            why = _failure(course, command, ["--student", student], SECONDS_PER_STUDENT)
            if why is None and not _made(course, assignment, student, started):
                why = "wrote no feedback page"
            if why is not None:
                seen[student] = why


def _state_file(course: Course, assignment: str) -> Path:
    """Where each page's grade state is kept: beside the CSVs, never in the feedback folder,
    which students are sent."""
    return grading_folder(course.coursedir) / f"{assignment}_feedback_state.json"


def _remember(course: Course, assignment: str, made: dict[str, str]) -> None:
    """Keep the grade state each page in ``made`` was written from (other graders' too)."""
    if not made:
        return
    path = _state_file(course, assignment)
    with locked(path):
        kept = _remembered(path)
        kept.update(made)
        written = path.with_name(f".{path.name}.new")
        written.write_text(json.dumps(kept, indent=1, sort_keys=True))
        os.replace(written, path)


def _remembered(path: Path) -> dict[str, str]:
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in kept.items()} if isinstance(kept, dict) else {}


def refresh_feedback(course: Course, assignment: str) -> tuple[list[str], list[str]]:
    """Write again the feedback page of every student whose grades changed since their page was
    written (hand grades, comments, extensions, late penalties), and only those; (rewritten,
    unchanged).  A page missing, or with no state on record, counts as changed."""
    folder = course.path(course.coursedir.autograded_directory, ".", ".")
    graded = sorted(p.parent.name for p in folder.glob(f"*/{assignment}"))
    states = grade_states(course.coursedir.db_url, course.coursedir.course_id, assignment, graded)
    kept = _remembered(_state_file(course, assignment))
    changed = [
        s
        for s in graded
        if s in states and (kept.get(s) != states[s] or not _made(course, assignment, s, 0))
    ]
    if changed:
        generate_feedback(course, assignment, changed)
    return changed, [s for s in graded if s not in changed]


def _made(course: Course, assignment: str, student: str, since: float) -> bool:
    """Whether ``student``'s feedback page was written at ``since`` or later."""
    folder = course.path(course.coursedir.feedback_directory, student, assignment)
    try:
        return (folder / f"{assignment}.html").stat().st_mtime >= since
    except OSError:
        return False


def _failure(course: Course, command: list[str], extra: list[str], seconds: float) -> str | None:
    """Run one bounded feedback command; None when it worked, else what was seen."""
    try:
        done = subprocess.run(
            [*command, *extra, "--log-level", "ERROR"],
            cwd=course.root,
            env=tool_env(),
            check=False,
            stdout=subprocess.DEVNULL,
            timeout=seconds,
            preexec_fn=_bounded_memory,
        )
    except subprocess.TimeoutExpired:
        return f"failed (stopped after {seconds:g} s)"
    return None if done.returncode == 0 else f"failed (exit {done.returncode})"


def _bounded_memory() -> None:
    """In the feedback process, before nbgrader starts: at most MEMORY_BYTES of address space
    (``resource`` is imported by the parent: the forked child takes no import lock)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
