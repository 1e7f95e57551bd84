"""A real run over repos with migrated, unmigrated and failing content, and reading its page.

``make_run(root)`` builds the repos, runs ``npu-codemod run`` through the CLI in a subprocess
and returns the report dir. The hostile file name and the markup in code and comments prove
that nothing from a repository becomes markup in the page.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from support.cli import cli
from support.git import make_repo

HOSTILE_NAME = "<img src=x onerror=alert(1)>.py"
HOSTILE_COMMENT = "# </pre><script>window.pwned = 1</script>"

MIGRATES = (
    "import tensorflow as tf\n"
    "\n"
    "ds = tf.data.TextLineDataset('train.txt').batch(32)\n"
    "x = tf.placeholder(tf.float32)\n"
    "y = tf.nn.dropout(x, 0.5)\n"
)
UNMIGRATED = (
    "import tensorflow as tf\n"
    "\n"
    f"{HOSTILE_COMMENT}\n"
    "batch = memory.batch(32)\n"
    "y = tf.nn.dropout(batch, 0.5, noise_shape=[1, 4])\n"
)
UNPARSABLE = (
    "import tensorflow as tf\n"
    "match tf:\n"
    "    case _:\n"
    "        pass\n"
)


def make_run(root: Path, command: str = "run") -> Path:
    """Build the repos under ``root``, run the CLI, return the report dir."""
    make_repo(root / "migrates", {"train.py": MIGRATES})
    make_repo(root / "needs-people", {HOSTILE_NAME: UNMIGRATED, "model.py": UNPARSABLE})
    (root / "not-a-repo").mkdir()
    (root / "repos.txt").write_text("migrates\nneeds-people\nnot-a-repo\n", encoding="utf-8")
    report_dir = root / "report"
    cli(command, "--repos", "repos.txt", "--report-dir", "report", "--workspace", "ws",
        "--no-progress", "--jobs", "1", cwd=root, expect=1)  # 1: one repo failed
    return report_dir


class Page(HTMLParser):
    """What a browser would build from the page: elements (tag, attrs) and text by id."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text_by_id: dict[str, str] = {}
        self.texts: list[str] = []
        self._open: list[tuple[str, str]] = []  # (tag, id) of the elements with an id
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = {name: value or "" for name, value in attrs}
        self.elements.append((tag, attributes))
        if "id" in attributes:
            self._open.append((tag, attributes["id"]))
            self.text_by_id[attributes["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append(data)
        for _, element_id in self._open:
            self.text_by_id[element_id] += data

    def tags(self, name: str) -> list[dict[str, str]]:
        return [attrs for tag, attrs in self.elements if tag == name]
