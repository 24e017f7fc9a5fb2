"""nbgrader configuration: run nbgrader commands from the repository root.

solutions/ is the source (instructor) copy, notebooks/ the released student copy;
everything produced while grading lives under the git-ignored grading/ folder.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor

from autograder.pipeline.course.plain_autograde import autograde_preprocessors
from autograder.pipeline.feedback.feedback import (
    FitFigures,
    GetGradesOrPending,
    OfflineFeedbackExporter,
    RedactHiddenTests,
    SanitizeOutputs,
)

c = get_config()  # noqa: F821  (nbgrader injects get_config)

here = os.path.dirname(os.path.abspath(__file__))

os.makedirs(os.path.join(here, "grading"), exist_ok=True)

c.CourseDirectory.course_id = "attention_lab"
c.CourseDirectory.root = here
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = "grading/submitted"
c.CourseDirectory.autograded_directory = "grading/autograded"
c.CourseDirectory.feedback_directory = "grading/feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(here, "grading", "gradebook.db")
# Only notebooks are released; data comes from the attention_lab package. collect keeps the
# submission's timestamp.txt too (it copies only what this includes), or no lateness is known.
c.CourseDirectory.include = ["*.ipynb", "timestamp.txt"]

c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# Training cells take a few seconds on a laptop; leave generous headroom over the 30 s default.
c.ExecutePreprocessor.timeout = 120

# A graded test cell without its hidden line earns nothing, as under the grading command.
c.Autograde.autograde_preprocessors = autograde_preprocessors()

# Feedback shows hidden checks by name and message, never their source; scores in words, and
# "pending" for answers not graded by hand yet (GetGradesOrPending).
# SanitizeOutputs: a student's HTML outputs are data, never script in a reader's browser
# (scripts, event handlers, SVG dropped; PNG and JPEG figures kept); OfflineFeedbackExporter
# sanitises markdown after rendering it, and writes maths as MathML: the page loads no script.
c.GenerateFeedback.preprocessors = [
    GetGradesOrPending,
    CSSHTMLHeaderPreprocessor,
    FitFigures,
    RedactHiddenTests,
    SanitizeOutputs,
]
c.SanitizeOutputs.enabled = True  # nbconvert's own preprocessors are off unless enabled
c.GenerateFeedback.exporter_class = OfflineFeedbackExporter

# `nbgrader export`: nbgrader's CSV to grading/grades.csv (not the repository root), then each
# grading/<assignment>_grades.csv brought up to date from the gradebook (manual points too).
c.ExportApp.plugin_class = "autograder.pipeline.records.exports.GradeRecordExport"

# A cell that fails only because of a mistake an earlier cell was charged for (it passes with
# that one mistake undone) keeps its points, and its feedback says so; True charges it again
# (autograder/pipeline/course/charges.py, docs/teaching.md).
c.MistakeCharges.charge_again = False
