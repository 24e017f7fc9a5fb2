"""The secret every hidden input derives from: inputs recorded one term are useless the next.

A check draws its hidden inputs from ``hidden_generator(label)`` (:mod:`.hidden_draws`), seeded by
an HMAC of the label under the secret in use.  The grading command reads the course's secret
(autograder/pipeline/course/course_secret.py) and installs it with :func:`use_secret` in each
grading worker before the worker builds its reference data; the judge, forked from that worker,
inherits it, and the sandbox never sees it.  In-process grading (this project's tests, the pytest
suite over a notebook, plain ``nbgrader autograde``, whose hidden checks run in the student's own
kernel, where nothing is secret) uses the public :data:`DEVELOPMENT_SECRET` unless told otherwise.

No grade may depend on which secret is in use: the checks compare with oracles computed on the
same inputs, never with stored outputs (tests/test_hidden_seeds.py and tests/test_mutants.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
from collections.abc import Iterator

# Public: in the repository for tests and trials, never for grading a real class.
DEVELOPMENT_SECRET = b"attention-lab development secret: public, never for a real class"
MIN_SECRET_BYTES = 16

_in_use: bytes = DEVELOPMENT_SECRET


def use_secret(secret: bytes) -> None:
    """Draw every hidden input from ``secret`` from now on, here and in processes forked later."""
    global _in_use
    if not isinstance(secret, bytes) or len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            f"expected a course secret of at least {MIN_SECRET_BYTES} bytes, got "
            f"{len(secret) if isinstance(secret, bytes) else type(secret).__name__}"
        )
    _in_use = secret


@contextlib.contextmanager
def secret_in_use(secret: bytes) -> Iterator[None]:
    """Draw hidden inputs from ``secret`` inside the block, and from the previous one after it."""
    previous = _in_use
    use_secret(secret)
    try:
        yield
    finally:
        use_secret(previous)


def secret_fingerprint(secret: bytes | None = None) -> str:
    """A short public name of ``secret``, by default the one in use (a hash of it): for caches
    and the grading command's log."""
    found = _in_use if secret is None else secret
    return hashlib.sha256(b"attention-lab fingerprint:" + found).hexdigest()[:12]


def hidden_seed(label: str) -> int:
    """A 64-bit seed for ``label`` that only a holder of the secret in use can compute."""
    digest = hmac.new(_in_use, label.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "little")
