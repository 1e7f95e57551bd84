"""The repository's own requirements (its ``requirements.txt``, else the ``install_requires``
of its ``setup.py``), installed into a cached environment (``--verify-requirements``).

The environment is a virtualenv that sees this interpreter's packages after its own (a
``.pth`` file naming this interpreter's site folders: TensorFlow, the launcher's needs) and
adds the repository's requirements, less TensorFlow and Keras themselves (a TF 1.x pin cannot install here; the launcher answers TF 1.x names). It is
built once per set of requirements, under the user's cache folder, and reused: installing
needs the network, so it happens here, before the runs, never inside one.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Optional

#: Requirement lines left out: what the verify extra provides (TensorFlow, Keras, estimator).
_PROVIDED = re.compile(r"^\s*(tensorflow(-gpu|-cpu|_gpu|_cpu)?|tf-nightly|tf_nightly|tf-keras|tf_keras|keras|"
                       r"tensorflow-estimator|tensorflow_estimator|tf-slim|tf_slim)\s*([<>=!~;\[@]|$)",
                       re.IGNORECASE)
OPTION = "--verify-requirements"
INSTALL_TIMEOUT = 1800.0


class RequirementsError(Exception):
    """The requirements cannot be installed: one line that says why."""


def requirements_python(checkout: Path) -> Optional[str]:
    """The interpreter of the cached environment holding ``checkout``'s requirements (built
    if needed), or None when the repository lists none. RequirementsError when pip fails."""
    listed = listed_requirements(checkout)
    if listed is None:
        return None
    wanted = [line for line in listed if not _PROVIDED.match(line)]
    home = _cache() / _key(wanted)
    if not (home / "installed").exists():
        _build(home, wanted, checkout)
    return str(home / "bin" / "python")


def listed_requirements(checkout: Path) -> Optional[list[str]]:
    """The requirement lines of ``requirements.txt``, else the ``install_requires`` written
    out as a list in ``setup.py``'s ``setup(...)``; None when there are neither."""
    listed = checkout / "requirements.txt"
    if listed.is_file():
        lines = listed.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return _install_requires(checkout / "setup.py")


def _install_requires(setup: Path) -> Optional[list[str]]:
    try:
        tree = ast.parse(setup.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return [str(item) for item in value] if isinstance(value, (list, tuple)) else None
    return None


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base, "npu-codemod", "verify-envs")


def _key(wanted: list[str]) -> str:
    text = "\n".join([sys.executable, *wanted])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _build(home: Path, wanted: list[str], checkout: Path) -> None:
    _pip([sys.executable, "-m", "venv", "--without-pip", str(home)], checkout)
    own = Path(sysconfig.get_path("purelib", vars={"base": str(home), "platbase": str(home)}))
    own.mkdir(parents=True, exist_ok=True)
    (own / "_npu_codemod_verify_parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    if wanted:
        listed = home / "requirements.txt"
        listed.write_text("\n".join(wanted) + "\n", encoding="utf-8")
        _pip([str(home / "bin" / "python"), "-m", "pip", "install", "--prefix", str(home), "--quiet", "--disable-pip-version-check",
              "--no-build-isolation", "-r", str(listed)], checkout)
    (home / "installed").write_text("\n".join(wanted) + "\n", encoding="utf-8")


def _pip(argv: list[str], checkout: Path) -> None:
    """Run ``argv`` in ``checkout`` (relative paths of requirements are the repository's)."""
    try:
        done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RequirementsError(f"cannot install the repository's requirements.txt: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise RequirementsError("cannot install the repository's requirements.txt: "
                                + (lines[-1].strip() if lines else f"exit code {done.returncode}"))


def missing_module(error_line: str) -> Optional[str]:
    """The package a ``ModuleNotFoundError`` line names (its top level), or None: also for a
    module of TensorFlow itself (``tensorflow.contrib.quantize``: not a requirement)."""
    found = re.search(r"ModuleNotFoundError: No module named '([^']+)'", error_line)
    package = found.group(1).split(".")[0] if found else None
    return None if package is None or _PROVIDED.match(package) else package
