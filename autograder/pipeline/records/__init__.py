"""What grading leaves for the instructor: the grade record, table and CSV, exports, similarity."""
