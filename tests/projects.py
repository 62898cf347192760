"""Throwaway projects for the tests, built in tmp_path: the one builder every test file uses.

    project = Project(tmp_path)
    project.targets(auto("cpu"), CPU, target("npu", "NPU", "a made-up NPU", provides=["cpu", "npu"]))
    project.lesson("counting", "Counting", ["index.md"])
    snippet = project.snippet("counting/01_sum.py", 'print("total: 10")\\n', requires=["cpu"])
    project.page("index.md", "# Counting\\n...")   # under docs/
    project.recording(snippet, "cpu", ["total: 10"])   # a made-up recording, written to the store
    project.record("--target", "cpu")              # the real recorder (fake the machine first)
    html = project.render("/// recorded | counting/01_sum.py\\n///\\n")

A test that records fakes the machine with conftest.py's ``fake_machine`` fixture, so no run
imports torch or probes a GPU. A project without targets of its own gets builtin.toml's.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import markdown
import yaml

from recorded import cli
from recorded.model.machines import Machine
from recorded.model.recording import Ending, Recording
from recorded.model.snippets import Snippet, code_sha256, load
from recorded.model.store import Store

ROOT = Path(__file__).resolve().parents[1]

#: A snippet whose output the Markdown tests claim lines of.
SNIPPET = '''\
# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# ///
"""Prints a greeting and an answer."""

print("hello")
print("answer: 42")
print("done")
'''

#: The machine a made-up recording was made on.
MACHINE = {
    "cpu": {"model": "Test CPU 9000", "cores": 4, "features": ["avx2"]},
    "gpu": None,
    "python": "3.12.1",
    "torch": "2.13.0+cpu",
    "numpy": "2.4.6",
}


#: The environment of a target that hides every GPU.
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def toml_value(value: object) -> str:
    """A TOML value as a person writes one: "text" ('text' where it holds a double quote, so
    Python code reads as written), true, [a, b], { key = value }."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return f"'{value}'" if '"' in value and "'" not in value and "\n" not in value else json.dumps(value)
    if isinstance(value, dict):
        pairs = ", ".join(f"{key} = {toml_value(v)}" for key, v in value.items())
        return f"{{ {pairs} }}" if pairs else "{}"
    assert isinstance(value, Iterable), value
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def target(
    name: str, label: str, description: str, provides: Iterable[str] = ("cpu",), **keys: object
) -> str:
    """One ``[tool.recorded.targets.<name>]`` table for ``Project.targets``; a key's ``_`` is
    written ``-`` (``runs_on=``), and a ``device`` given as a dict is an inline table."""
    lines = [
        f"[tool.recorded.targets.{name}]",
        f"label = {toml_value(label)}",
        f"provides = {toml_value(list(provides))}",
        f"description = {toml_value(description)}",
        *(f"{key.replace('_', '-')} = {toml_value(value)}" for key, value in keys.items()),
    ]
    return "\n".join(lines)


def auto(*names: str) -> str:
    """The ``[tool.recorded]`` table that records these targets, in this order, by default."""
    return f"[tool.recorded]\nauto = {toml_value(list(names))}"


#: This CPU as it is, every GPU hidden, and required: the one kind most test projects need.
CPU = target("cpu", "CPU", "this CPU as it is", env=NO_GPU, required=True)


#: A big CPU as it is, the same machine limited (emulated, its check proving the limit), and
#: another CPU: the kinds the tests of tabs, emulation and an example's findings use.
THREE = (
    target("big", "Big CPU", "a big CPU as it is", env=NO_GPU, required=True),
    target(
        "big-as-small",
        "Big CPU limited",
        "the big CPU limited to small instructions",
        env={**NO_GPU, "LIMIT_ISA": "SMALL"},
        emulated=True,
        host="big",
        check={"code": "print('SMALL')", "prints": "SMALL"},
    ),
    target("other", "Other CPU", "another CPU", env=NO_GPU),
)
#: What the "other" target's machine stores.
OTHER_MACHINE = {**MACHINE, "cpu": {"model": "Other CPU 100", "cores": 8, "features": ["avx2", "avx512f"]}}


def with_metadata(code: str, *toml: str) -> str:
    """The snippet's code under a PEP 723 block holding these TOML lines."""
    return "".join(f"# {line}\n" for line in ("/// script", *toml, "///")) + code


def metadata_lines(
    requires: Iterable[str] = (), timeout: float | None = None, timing: bool | None = None
) -> list[str]:
    """The ``[tool.recorded]`` lines of a snippet's header for these keys (none for none)."""
    keys = (
        ([f"requires = {list(requires)!r}".replace("'", '"')] if requires else [])
        + ([f"timeout = {timeout}"] if timeout is not None else [])
        + ([f"timing = {str(timing).lower()}"] if timing is not None else [])
    )
    return ["[tool.recorded]", *keys] if keys else []


def write(root: Path, name: str, text: str) -> Path:
    """Write a file under root (its folders made), dedented and without a leading newline."""
    path = Path(root) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def add_snippet(root: Path, name: str, code: str = 'print("hello")\n', **keys) -> Path:
    """Write snippets/<name>; keys (requires, timeout, timing) become its metadata header."""
    lines = metadata_lines(**keys)
    code = textwrap.dedent(code).lstrip("\n")
    return write(root, f"snippets/{name}", with_metadata(code, *lines) if lines else code)


def site_extensions() -> tuple[list[str], dict[str, dict]]:
    """The markdown_extensions of the real mkdocs.yml, as Python-Markdown takes them."""

    class Loader(yaml.SafeLoader):
        pass

    # `!ENV [NAME, default]`: the tests set the extension's options themselves.
    Loader.add_constructor("!ENV", lambda loader, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    names, configs = [], {}
    for item in config["markdown_extensions"]:
        if isinstance(item, str):
            names.append(item)
        else:
            ((name, options),) = item.items()
            names.append(name)
            configs[name] = dict(options or {})
    assert "recorded.pages.extension" in names
    return names, configs


class Project:
    """A throwaway project under root: pyproject.toml, snippets/, docs/, recordings/."""

    def __init__(self, root: Path):
        self.root = Path(root)
        (self.root / "snippets").mkdir(parents=True, exist_ok=True)
        self._config: list[str] = []

    @property
    def store(self) -> Store:
        """The project's recordings, read with its configuration as it is now."""
        return Store(self.root)

    # -- files ---------------------------------------------------------------------------

    def file(self, name: str, text: str) -> Path:
        """Any file of the project (mkdocs.yml, conftest.py, ...), by its path under root."""
        return write(self.root, name, text)

    def files(self, files: dict[str, str]) -> Project:
        for name, text in files.items():
            self.file(name, text)
        return self

    def config(self, toml: str) -> Path:
        """pyproject.toml, replaced whole; ``targets`` and ``lesson`` add to it."""
        self._config = [textwrap.dedent(toml).strip("\n")]
        return self.file("pyproject.toml", self._config[0] + "\n")

    def targets(self, *tables: str) -> Path:
        """Add TOML tables (``target(...)``, ``CPU``, ``auto(...)``, or written out) to pyproject.toml."""
        self._config.extend(textwrap.dedent(table).strip("\n") for table in tables)
        return self.file("pyproject.toml", "\n\n".join(self._config) + "\n")

    def lesson(self, name: str, title: str, pages: Iterable[str] = (), notebook: str | None = None) -> Path:
        """Declare a lesson (its folder under snippets/) in pyproject.toml."""
        table = [
            f"[tool.recorded.lessons.{name}]",
            f"title = {title!r}".replace("'", '"'),
            f"pages = {list(pages)!r}".replace("'", '"'),
        ]
        if notebook:
            table.append(f'notebook = "{notebook}"')
        return self.targets("\n".join(table))

    def snippet(self, name: str = "lesson/x.py", code: str = SNIPPET, **keys) -> Snippet:
        """Write snippets/<name> (keys: requires, timeout, timing) and load it as the engine does."""
        add_snippet(self.root, name, code, **keys)
        return load(self.root / "snippets", name)

    def page(self, name: str, text: str) -> Path:
        """A page under docs/."""
        return self.file(f"docs/{name}", text)

    # -- recordings ----------------------------------------------------------------------

    def recording(
        self,
        snippet: Snippet,
        target: str,
        stdout: Iterable[str] = (),
        *,
        status: str = "ok",
        exit_code: int | None = 0,
        stderr: Iterable[str] = (),
        stale: bool = False,
        machine: dict = MACHINE,
        duration_s: float = 2.5,
        busy: dict | None = None,
        ran: str | None = None,
    ) -> Recording:
        """A made-up recording of the snippet as it is now, stored; ``ran``: of that earlier
        code instead; ``stale``: of unknown other code."""
        source = ran.encode() if ran is not None else snippet.path.read_bytes()
        rec = Recording(
            snippet=snippet.name,
            target=target,
            sha256="0" * 64 if stale else hashlib.sha256(source).hexdigest(),
            code_sha256="" if stale else code_sha256(source),
            code="" if stale else source.decode(),
            status=Ending(status),
            exit_code=exit_code,
            stdout=list(stdout),
            stderr=list(stderr),
            duration_s=duration_s,
            recorded_at="2026-01-02T03:04:05Z",
            machine=Machine(machine),
            busy=busy,
        )
        self.store.write(rec)
        return rec

    def record(self, *argv: str) -> int:
        """The real recorder's command line (``python -m recorded ARGV``) over this project."""
        return cli.main([str(a) for a in argv], root=self.root)

    # -- what readers see ----------------------------------------------------------------

    def render(self, page: str, strict: bool = False) -> str:
        """A page converted with the site's own extension list, over this project."""
        names, configs = site_extensions()
        configs["recorded.pages.extension"] = {"root": str(self.root), "strict": strict}
        return markdown.Markdown(extensions=names, extension_configs=configs).convert(page)


MKDOCS = Path(sys.executable).parent / "mkdocs"


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """The strict build of the site at ``root`` into ``site``, as a contributor runs it."""
    # The environment passes through as it is: with RECORDINGS_STRICT=1 (the release rule)
    # a missing CUDA recording fails this build, as it should.
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "-d", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
