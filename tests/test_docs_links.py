"""README.md and docs/*.md: every relative link reaches a file of the repository, every
``#anchor`` a heading of the page it names, and the README keeps the test command ``.ci/run``
runs, after the sentence that the tests need Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
TEST_COMMAND = ('python3 -m pip install -e ".[test,verify]" && python3 -m compileall -q src codemods plugins orchestrator reports '
                '&& python3 -m pytest -n auto -q')


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [link for link in LINK.findall(text) if not re.match(r"[a-z]+:", link)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for link in relative_links(page):
        path, _, fragment = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(link)
        elif fragment and target.suffix == ".md" and fragment not in anchors(target):
            broken.append(link)
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_its_file_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_the_readme_links_every_reference_page() -> None:
    readme_links = set(relative_links(ROOT / "README.md"))
    pages = {f"docs/{page.name}" for page in PAGES[1:]}
    assert pages - readme_links == set()


def test_the_readme_says_chromium_is_needed_before_the_test_command_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in ci
    assert readme.index("chromium chromium-driver") < readme.index(TEST_COMMAND)


def test_the_readme_gets_a_user_going_in_a_few_screens() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 150
