"""Which TensorFlow major version a repository runs: its *runtime* (``spec/rules-tf2.md``).

First rule that decides:

1. configuration: ``[tool.npu-codemod] tensorflow = "1" | "2"`` or ``--tensorflow`` (the run's),
   else the same key in the repository's own ``pyproject.toml``;
2. pins: every requirement on a TensorFlow distribution (:data:`TF_DISTRIBUTIONS`) in the
   repository's manifests (:func:`is_manifest`), its PEP 440 specifier evaluated with
   ``packaging``: all admitted versions >= 2.0 -> 2, all < 2.0 -> 1, unpinned or spanning ->
   no decision; pins that decide differently -> no decision, and a finding naming them;
3. code: a TF 2.x-only API anywhere and no TF 1.x-only one -> 2, the other way round -> 1;
4. else undetermined (a finding when some file's kind depends on it).

The result reaches the rules as the repository fact ``tf-runtime:<1|2|undetermined>``.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Iterable, Mapping, Optional

from .tf_versions import (
    CODE_COMPAT,
    CODE_E_ONLY,
    CODE_T1,
    CODE_T2,
    RUNTIME_FACT,
    RUNTIME_TF1,
    RUNTIME_TF2,
    RUNTIME_UNKNOWN,
)

if TYPE_CHECKING:  # packaging is imported where a manifest is read: not at every start-up
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9/3.10
    import tomli as tomllib

TF_DISTRIBUTIONS = frozenset({
    "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel", "intel-tensorflow",
    "tensorflow-macos", "tensorflow-aarch64", "tensorflow-rocm", "tensorflow-directml",
    "tf-nightly", "tf-nightly-gpu", "tf-nightly-cpu",
})
#: Versions a specifier is tried on (with the versions it names itself): every TF release
#: line, so "all admitted versions" is decided on what TensorFlow publishes.
_PROBES = tuple(
    [f"0.{minor}.0" for minor in range(13)]
    + [f"1.{minor}.{patch}" for minor in range(16) for patch in range(6)]
    + [f"2.{minor}.{patch}" for minor in range(21) for patch in range(6)]
    + ["3.0.0"])
UNDETERMINED = ("TensorFlow major version undetermined: pin tensorflow in requirements or set "
                "[tool.npu-codemod] tensorflow = \"2\"; files with only TF 2.x idioms "
                "(tf.function, GradientTape, Keras fit) are treated as TF 2.x code, tf.compat.v1 "
                "code as TF 1.x code (TF Adapter 1.x, npu_bridge)")
DISAGREE = "TensorFlow pins disagree ({pins}): the major version is decided from the code"
UNREADABLE_PIN = ("TensorFlow requirement not valid PEP 508 ({pin}): it decides nothing; fix it "
                  "or set [tool.npu-codemod] tensorflow = \"1\" | \"2\"")
BAD_SETTING = ("[tool.npu-codemod] tensorflow must be \"1\" or \"2\", got {value!r}: ignored, the "
               "major version is decided from the pins and the code")
#: Why the runtime is what it is (:attr:`Runtime.why`), completing "in a repository ...".
CONFIGURED = "set to TF {version}.x ([tool.npu-codemod] tensorflow or --tensorflow)"
PINNED = "pinned to TF {version}.x ({pins})"
FROM_CODE = "whose code is TF {version}.x (TF {version}.x-only APIs, no TF {other}.x-only one; no pin)"
_NAMED_PINS = 3
#: The distribution name a requirement line starts with (to tell a broken TensorFlow pin).
_LEADING_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Pin:
    """One requirement on TensorFlow: where, as written, and what it decides (None: nothing)."""

    path: str
    text: str
    runtime: Optional[str]
    readable: bool = True  # a valid requirement (else it names TensorFlow but does not parse)

    def __str__(self) -> str:
        return f"{self.path}: {self.text}"


@dataclass(frozen=True)
class Runtime:
    """The decision, and repository-level messages (``(path, message)``) to report."""

    value: str
    messages: tuple[tuple[str, str], ...] = ()
    #: What decided it, completing "in a repository ..." (``pinned to TF 2.x (requirements.txt:
    #: tensorflow==2.6.5)``): a finding that the runtime makes names it; "" when undetermined.
    why: str = ""

    @property
    def fact(self) -> str:
        return RUNTIME_FACT + self.value

    @property
    def pinned(self) -> bool:
        """Decided by a pin or the configuration: the folder's own code, not its other files'
        (decided from the code, or undetermined, a module others import takes their runtime:
        ``tf_shared_modules``)."""
        return bool(self.why) and not self.why.startswith(FROM_CODE.partition("{")[0])


def is_manifest(path: str) -> bool:
    """A file that may pin TensorFlow: ``requirements*.txt``, ``constraints*.txt``,
    ``setup.py``, ``setup.cfg``, ``pyproject.toml``, ``Pipfile``, ``environment.y(a)ml``."""
    name = PurePosixPath(path).name
    return (name.endswith(".txt") and name.startswith(("requirements", "constraints"))) or \
        name in ("setup.py", "setup.cfg", "pyproject.toml", "Pipfile", "environment.yml",
                 "environment.yaml")


def decide(configured: Optional[str], manifests: Mapping[str, str], facts: Iterable[str],
           includes: Optional[Mapping[str, str]] = None) -> Runtime:
    """The runtime from the configuration, the manifests' texts by path, and the code facts
    (``includes``: the manifests ``-r`` lines may name, when more than ``manifests``)."""
    facts = frozenset(facts)
    configured = configured or own_setting(manifests.get("pyproject.toml", ""))
    if configured in (RUNTIME_TF1, RUNTIME_TF2):
        return Runtime(configured, why=CONFIGURED.format(version=configured))
    every = manifests if includes is None else includes
    pins = [pin for path, text in sorted(manifests.items()) for pin in pins_of(path, text, every)]
    deciding = [pin for pin in pins if pin.runtime is not None]
    values = {pin.runtime for pin in deciding}
    messages = _input_problems(manifests, pins)
    if len(values) == 1:
        value = values.pop() or RUNTIME_UNKNOWN
        return Runtime(value, messages, PINNED.format(version=value, pins=_named(deciding)))
    if len(values) > 1:
        named = "; ".join(str(pin) for pin in deciding)
        messages += ((deciding[0].path, DISAGREE.format(pins=named)),)
    if CODE_T2 in facts and CODE_T1 not in facts:
        return Runtime(RUNTIME_TF2, messages, FROM_CODE.format(version=RUNTIME_TF2, other=RUNTIME_TF1))
    if CODE_T1 in facts and CODE_T2 not in facts:
        return Runtime(RUNTIME_TF1, messages, FROM_CODE.format(version=RUNTIME_TF1, other=RUNTIME_TF2))
    if CODE_E_ONLY in facts or CODE_COMPAT in facts:  # some file's kind depends on it
        messages += (("", UNDETERMINED),)
    return Runtime(RUNTIME_UNKNOWN, messages)


def _named(pins: list[Pin]) -> str:
    """The pins that decided, as a finding names them: the first few, then how many more."""
    named = "; ".join(str(pin) for pin in pins[:_NAMED_PINS])
    return named + (f"; {len(pins) - _NAMED_PINS} more" if len(pins) > _NAMED_PINS else "")


def _input_problems(manifests: Mapping[str, str], pins: list[Pin]) -> tuple[tuple[str, str], ...]:
    """What of the repository's own settings and pins could not be read: one message each."""
    problems = tuple((pin.path, UNREADABLE_PIN.format(pin=pin.text)) for pin in pins if not pin.readable)
    value = _raw_setting(manifests.get("pyproject.toml", ""))
    if value is not None and value not in (RUNTIME_TF1, RUNTIME_TF2):
        problems += (("pyproject.toml", BAD_SETTING.format(value=value)),)
    return problems


def own_setting(text: str) -> Optional[str]:
    """``[tool.npu-codemod] tensorflow`` of the repository's own ``pyproject.toml`` (the run's
    configuration and ``--tensorflow`` come first), or None."""
    value = _raw_setting(text)
    return value if value in (RUNTIME_TF1, RUNTIME_TF2) else None


def _raw_setting(text: str) -> Optional[object]:
    """``[tool.npu-codemod] tensorflow`` as written, or None (no such key, or no valid TOML)."""
    if "npu-codemod" not in text:
        return None
    try:
        value: object = tomllib.loads(text).get("tool", {}).get("npu-codemod", {}).get("tensorflow")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
        return None
    return value


def pins_of(path: str, text: str, manifests: Mapping[str, str] = {}) -> list[Pin]:
    """The TensorFlow requirements of one manifest (``-r`` includes followed in ``manifests``)."""
    name = PurePosixPath(path).name
    if name.endswith(".txt"):
        lines = list(_requirement_lines(path, text, manifests, set()))
    elif name == "setup.py":
        lines = _setup_py(text)
    elif name == "setup.cfg":
        lines = _setup_cfg(text)
    elif name in ("pyproject.toml", "Pipfile"):
        lines = _toml(text)
    else:
        lines = _conda(text)
    return [pin for pin in (_pin(path, line) for line in lines) if pin is not None]


def _pin(path: str, line: str) -> Optional[Pin]:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(line.strip())
    except InvalidRequirement:
        name = _LEADING_NAME.match(line)
        if name and name.group(1).lower().replace("_", "-") in TF_DISTRIBUTIONS:
            return Pin(path, line.strip(), None, readable=False)
        return None
    if requirement.name.lower().replace("_", "-") not in TF_DISTRIBUTIONS:
        return None
    return Pin(path, line.strip(), admitted(requirement.specifier))


def admitted(specifier: SpecifierSet) -> Optional[str]:
    """``2`` when every version ``specifier`` admits is >= 2.0, ``1`` when every one is below,
    None when it admits both (or none: no decision)."""
    from packaging.version import Version

    probes = set(_probe_versions())
    for spec in specifier:
        try:
            probes.add(Version(spec.version.rstrip(".*")))
        except ValueError:
            continue
    found = [version for version in probes if specifier.contains(version, prereleases=True)]
    if not found:
        return None
    if all(version.major >= 2 for version in found):  # 2.0.0b1 is TensorFlow 2, though < 2.0
        return RUNTIME_TF2
    if all(version.major < 2 for version in found):
        return RUNTIME_TF1
    return None


@lru_cache(maxsize=1)
def _probe_versions() -> tuple[Version, ...]:
    from packaging.version import Version

    return tuple(map(Version, _PROBES))


def _requirement_lines(path: str, text: str, manifests: Mapping[str, str],
                       seen: set[str]) -> Iterable[str]:
    seen.add(path)
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line.startswith(("-r ", "--requirement ", "-c ", "--constraint ")):
            included = str(PurePosixPath(path).parent / line.split(None, 1)[1].strip())
            included = included[2:] if included.startswith("./") else included
            if included in manifests and included not in seen:
                yield from _requirement_lines(included, manifests[included], manifests, seen)
        elif line and not line.startswith(("#", "-")):
            yield line


def _setup_py(text: str) -> list[str]:
    """The literal strings of ``install_requires``/``extras_require`` keywords. A requirement
    built when setup.py runs (``"tensorflow>={},<{}".format(MIN, MAX)``, an f-string, ``%`` or
    ``+``) is not what its template spells: it is no pin (neither a broken one to fix nor one
    that decides: tensorflow/addons' three extras)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            other = _not_requirements(node.value)
            found += [sub.value for sub in ast.walk(node.value)
                      if isinstance(sub, ast.Constant) and isinstance(sub.value, str)
                      and id(sub) not in other]
    return found


def _not_requirements(value: ast.expr) -> set[int]:
    """The ``id`` of each string of ``value`` that is no requirement: an extra's name (a key
    of ``extras_require``), or only part of a string built at run time: a template formatted
    (``"...{}".format(x)``, ``"...%s" % x``), concatenated (``"a" + x``) or an f-string's
    literal parts."""
    built: set[int] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Dict):
            built.update(id(key) for key in node.keys if key is not None)
        if isinstance(node, ast.JoinedStr):
            built.update(id(sub) for sub in ast.walk(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "format":
            built.add(id(node.func.value))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            built.update((id(node.left), id(node.right)))
    return built


def _setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found: list[str] = []
    if parser.has_option("options", "install_requires"):
        found += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            found += value.splitlines()
    return found


def _toml(text: str) -> list[str]:
    """PEP 621 dependencies, Poetry's and Pipfile's tables (``name = "^2.4"``)."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    project = data.get("project", {})
    found = [line for line in project.get("dependencies", []) if isinstance(line, str)]
    for extra in project.get("optional-dependencies", {}).values():
        found += [line for line in extra if isinstance(line, str)]
    poetry = data.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dependencies", {}), data.get("packages", {}), data.get("dev-packages", {})]
    tables += [group.get("dependencies", {}) for group in poetry.get("group", {}).values()]
    for table in tables:
        for name, value in table.items():
            version = value.get("version", "*") if isinstance(value, dict) else value
            if isinstance(version, str):
                found.append(name + _poetry_specifier(version))
    return found


def _poetry_specifier(version: str) -> str:
    """A Poetry/Pipfile version (``^2.4``, ``~2.4``, ``2.4.*``, ``*``) as PEP 440."""
    version = version.strip()
    if version in ("", "*"):
        return ""
    match = re.fullmatch(r"([\^~])\s*(\d+)(?:\.(\d+))?(?:\.\d+)*", version)
    if match:
        caret, major, minor = match.group(1) == "^", int(match.group(2)), match.group(3)
        upper = f"{major + 1}" if caret or minor is None else f"{major}.{int(minor) + 1}"
        return f">={version.lstrip('^~ ')},<{upper}"
    return version if version[0] in "<>=!~" else f"=={version}"


def _conda(text: str) -> list[str]:
    """``- tensorflow=2.6`` (conda: ``=`` is a prefix match) and pip lines of an environment
    file, read line by line (no YAML parser needed for a list of strings)."""
    found = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line.startswith("- "):
            continue
        match = re.match(r"([A-Za-z0-9_.\-]+)\s*(.*)", line[2:].strip().strip("'\""))
        if match is None:
            continue
        name, version = match.groups()
        if re.fullmatch(r"=[^=<>!].*", version):
            version = "==" + version[1:].rstrip("*").rstrip(".") + ".*"
        elif re.fullmatch(r"\d.*", version):
            version = "==" + version
        found.append(name + version.replace(" ", ""))
    return found


def with_runtime(facts: Iterable[str], runtime: Runtime) -> frozenset[str]:
    """``facts`` with the runtime's fact."""
    return frozenset(fact for fact in facts if not fact.startswith(RUNTIME_FACT)) | {runtime.fact}
