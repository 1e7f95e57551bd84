"""All rules over a corpus of realistic TF 1.x scripts, as real repositories wrote them.

``corpus/<project>/`` holds the scripts of one repository (BERT, DCGAN, NMT, CIFAR-10 with
MonitoredTrainingSession and towers, Supervisor, Horovod, Keras on TF, compat.v1, GPT-2, tabs +
CRLF + Chinese comments, Python 2 leftovers) and ``expected/``: each file after one run plus
``findings.tsv``, every diff read against the spec before it was frozen. ``non_tf`` files
(PyTorch, ONNX Runtime, tensorflow_datasets/hub only, a replay memory) must not be touched.

After a deliberate rule change: ``python tests/test_corpus.py`` rewrites ``expected/``; read
every resulting ``git diff`` hunk against the spec before committing it.
"""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from support.goldens import CORPUS, migrate, project_names, regenerate, sources

NAMES = project_names(CORPUS)
#: Files that import no TensorFlow (some mention it in comments or strings): no rule may fire.
NOT_TF = {("non_tf", name) for name in ("torch_train.py", "onnx_infer.py", "replay_memory.py")} | {
    ("dcgan", "utils.py")}


def statuses(findings: list[str]) -> Counter:
    """(path, rule, status) counts: a second run reports the same sites (lines may shift)."""
    rows = (row.split("\t") for row in findings)
    return Counter((path, rule, status) for path, _, _, rule, status in rows)


@pytest.mark.parametrize("name", NAMES)
def test_corpus_project_migrates_to_expected(name: str) -> None:
    project = CORPUS / name
    original = sources(project)
    migrated, findings = migrate(original)
    expected = sources(project / "expected")
    assert sorted(migrated) == sorted(expected)
    for path, data in migrated.items():
        assert data == expected[path], f"{name}/{path}"
    assert findings == (project / "expected" / "findings.tsv").read_text().splitlines()
    assert not [row for row in findings if row.endswith("\terror")]
    for path in (path for project_name, path in NOT_TF if project_name == name):
        assert migrated[path] == original[path]
        assert not [row for row in findings if row.startswith(path + "\t")]


@pytest.mark.parametrize("name", NAMES)
def test_corpus_output_compiles_and_a_second_run_changes_nothing(name: str) -> None:
    project = CORPUS / name
    expected = sources(project / "expected")
    for path, data in expected.items():
        compile(data, path, "exec", dont_inherit=True)
    again, findings = migrate(expected)
    assert again == expected
    assert not [row for row in findings if row.endswith("\terror")]
    first = (project / "expected" / "findings.tsv").read_text().splitlines()
    assert statuses(findings) == statuses(first)


if __name__ == "__main__":
    sys.exit(regenerate(CORPUS))
