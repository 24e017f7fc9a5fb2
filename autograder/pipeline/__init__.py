"""The grading command, stage by stage: intake, worker, verdicts, batch, course, report, feedback.

``python -m autograder grade`` (cli.py) runs a batch (batch.py) over the course's submissions
(course.py); each worker (one_submission.py) takes a submission in (intake.py), runs it sandboxed
with the judge, and turns the results into verdicts (verdicts.py); the main process records them in
the gradebook (course.py), then writes the table and CSV (report.py) and the feedback (feedback.py).
"""
