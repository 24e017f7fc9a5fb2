"""What a check writer uses: the registry (:mod:`.registry`) and one module per concept beside it
(requiring, diagnosis, closeness, hidden draws, reference bans, kernel objects).

A hidden check is a function ``def my_check(ns) -> None`` registered with ``@check(assignment,
grade_id)``; it fails with ``fail("one sentence a student can act on")`` or ``diagnose(...)``.
"""
