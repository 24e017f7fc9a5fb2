"""The feedback page as a student sees it, in headless Chromium 1,000 px wide: long output lines
wrap (no scrolling sideways, of the page or of a block), and the summary at the top names each
graded cell (issue 41: nine lines of "Graded cell: 0 of 2 points", and a traceback line that ran
off the page).  The page is rendered with the course's configuration (test_feedback_page.render).

Needs Debian's ``chromium`` and ``chromium-driver`` (CI's ``.ci/run`` installs them) and
``selenium``; without them the test fails and says so, it never skips.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tests.test_feedback_page import _graded, render

pytestmark = pytest.mark.slow

WIDTH = 1000
UNBROKEN = "unbroken" + "x" * 3_000  # one "word": it wraps only where the CSS allows any break
SPACED = "a line with spaces " * 200


def _notebook():
    """Graded cells with outputs a student's code prints: a long unbroken line, a long line with
    spaces, a long traceback line, and a long line of code."""
    printed = _graded(new_code_cell("print(answer())", execution_count=3), "test_print", 2.0, 0.0)
    printed.outputs = [
        new_output("stream", name="stdout", text=f"{UNBROKEN}\n{SPACED}\n"),
        new_output(
            "error",
            ename="CheckFailed",
            evalue=f"[shape] expected {UNBROKEN[:500]}",
            traceback=[f"CheckFailed: [shape] expected {UNBROKEN[:500]}"],
        ),
    ]
    long_code = _graded(
        new_code_cell(f"x = '{UNBROKEN[:400]}'", execution_count=4), "test_code", 1.0, 1.0
    )
    long_code.outputs = [new_output("execute_result", data={"text/plain": f"'{UNBROKEN}'"})]
    written = _graded(new_markdown_cell("Because."), "why_scale", 2.0, None, pending=True)
    table = (
        "**What is graded** (5 points in all):\n\n| Part | grade id | Points | How |\n"
        "|---|---|---|---|\n| Printing the answer | `test_print` | 2 | auto |\n"
        "| Code on one line | `test_code` | 1 | auto |\n"
        "| Why divide by $\\sqrt{d_k}$? | `why_scale` | 2 | manual |\n"
    )
    return new_notebook(
        cells=[new_markdown_cell(table), printed, long_code, written],
        metadata={"language_info": {"name": "python"}},
    )


def _chromium():
    """A headless Chromium WIDTH px wide, from the system's chromium and chromedriver."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (browser and driver):
        pytest.fail(
            "this test needs Chromium and its driver on PATH (found chromium: "
            f"{browser}, chromedriver: {driver}): apt-get install chromium chromium-driver"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("this test needs selenium: python -m pip install -r requirements.txt")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={WIDTH},1400",
    ):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(driver))


def test_long_lines_wrap_and_the_summary_names_each_cell(tmp_path: Path):
    page = tmp_path / "feedback.html"
    page.write_text(render(_notebook()))
    browser = _chromium()
    try:
        browser.get(page.as_uri())
        seen = browser.execute_script(
            """
            const width = window.innerWidth;
            const blocks = [...document.querySelectorAll('pre')].map(pre => ({
                right: pre.getBoundingClientRect().right,
                scrolls: pre.scrollWidth > pre.clientWidth,
                text: pre.textContent.slice(0, 40),
            }));
            const unbroken = [...document.querySelectorAll('pre')].filter(
                pre => pre.textContent.includes('unbrokenxxxx'));
            return {
                width: width,
                page: document.documentElement.scrollWidth,
                blocks: blocks,
                unbroken: unbroken.map(pre => {
                    const box = pre.getBoundingClientRect();
                    return {right: box.right, height: box.height};
                }),
                summary: [...document.querySelectorAll('#toc li')].map(li => li.innerText),
                breaks: [...document.querySelectorAll('pre')].map(
                    pre => getComputedStyle(pre).wordBreak),
            };
            """
        )
        browser.save_screenshot(str(tmp_path / "feedback.png"))
    finally:
        browser.quit()
    assert seen["width"] == WIDTH, seen["width"]
    assert seen["page"] <= seen["width"], f"the page scrolls sideways: {seen['page']} px wide"
    sideways = [b for b in seen["blocks"] if b["scrolls"] or b["right"] > seen["width"]]
    assert sideways == [], sideways
    # the unbroken line of the output, of the result and of the error: each wrapped, inside
    assert len(seen["unbroken"]) >= 3, seen["unbroken"]
    assert all(b["right"] <= WIDTH and b["height"] > 60 for b in seen["unbroken"]), seen
    # a line with spaces breaks at them, not inside words (bootstrap's pre breaks every word)
    assert set(seen["breaks"]) == {"normal"}, seen["breaks"]
    # each line of the summary names its cell: the table's words and the grade id
    summary = [line for line in seen["summary"] if "point" in line]
    assert len(summary) == 3 and len(set(summary)) == 3, summary
    assert summary[0].startswith("Printing the answer (graded cell test_print): 0 of 2"), summary
    assert summary[1].startswith("Code on one line (graded cell test_code): 1 of 1 point"), summary
    assert summary[2].startswith("Why divide by"), summary
    assert "(written answer why_scale): pending (2 points" in summary[2], summary
