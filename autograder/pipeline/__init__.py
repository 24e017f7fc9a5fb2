"""The grading command, a room per stage: intake, worker, engines, course, records, feedback.

``python -m autograder grade`` (cli.py) runs a batch (engines/batch.py) over the course's
submissions (course/course.py); each worker (worker/one_submission.py) takes a submission in
(intake/intake.py), runs it sandboxed with the judge, and turns the results into verdicts
(worker/verdicts.py); the main process records them in the gradebook (course/course.py), then
writes the table and CSV (records/report.py) and the feedback (feedback/feedback.py).  gradescope/
grades one submission the same way on Gradescope.
"""
