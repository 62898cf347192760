"""The engine, src/recorded/, stays apart from the lesson and keeps its shape.

Its folders are its architecture, and imports point one way: the project's configuration
(config/), the recording model (model/), the recorder (recorder/), its command line
(cli/), the pages (pages/), the notebook (notebook/) and the tests' reader of pages
(checks/). Each folder may import only the folders before it in ``MAY_IMPORT``, its own
modules import each other without a cycle, and everything the recorder runs on (config,
model, recorder, cli) needs only the standard library, so it runs on a bare GPU image.
It knows no lesson (no lesson's folder, page or notebook is named in it).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from recorded.config import lessons

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "src" / "recorded"
#: Every engine module by its dotted name under recorded ("model.store").
MODULES = {
    ".".join(p.relative_to(ENGINE).with_suffix("").parts): p
    for p in sorted(ENGINE.rglob("*.py"))
    if "__pycache__" not in p.parts
}
#: What each folder may import from the engine, besides its own modules. The top-level
#: modules (__init__, __main__) are the package's entry points and may import any folder.
MAY_IMPORT = {
    "config": set(),
    "model": {"config"},
    "recorder": {"config", "model"},
    "cli": {"config", "model", "recorder"},
    "pages": {"config", "model"},
    "notebook": {"config", "model", "pages"},
    "checks": {"config", "model", "recorder", "pages", "notebook"},
}
#: The folders the recorder's command line runs on: the standard library only.
RECORDER = ("config", "model", "recorder", "cli")
#: Site tooling (serving the built site, driving a browser) belongs in scripts/, not the engine.
SITE_TOOLING = ("http.server", "socketserver", "webbrowser")


def folder(module: str) -> str:
    return module.split(".")[0] if "." in module else ""


def imports(module: str) -> set[str]:
    """The engine modules a module imports, by dotted name (its relative imports resolved)."""
    package = module.split(".")[:-1]  # "cli.__init__" and "cli.report" both sit in cli/
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        base = package[: len(package) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
        found |= {target} & MODULES.keys()
        # from . import name: a module of that package
        found |= {".".join(filter(None, [target, alias.name])) for alias in node.names} & MODULES.keys()
    return found


def test_every_module_lives_in_a_known_folder():
    strays = [m for m in MODULES if folder(m) and folder(m) not in MAY_IMPORT]
    loose = [m for m in MODULES if not folder(m) and m not in ("__init__", "__main__")]
    assert not strays and not loose, (
        f"modules outside the engine's folders: {strays + loose}; put each in the folder of its job "
        f"({', '.join(MAY_IMPORT)}), or add a folder to MAY_IMPORT with what it may import"
    )


@pytest.mark.parametrize("name", sorted(MAY_IMPORT))
def test_a_folder_imports_only_the_folders_before_it(name):
    wrong = sorted(
        f"{module} imports {other}"
        for module in MODULES
        if folder(module) == name
        for other in imports(module)
        if folder(other) not in MAY_IMPORT[name] | {name}
    )
    assert not wrong, f"{name}/ may import only {sorted(MAY_IMPORT[name]) or 'itself'}: {wrong}"


def test_the_engine_modules_import_each_other_without_a_cycle():
    graph = {name: imports(name) for name in MODULES}
    done: set[str] = set()

    def visit(name: str, trail: tuple[str, ...]) -> None:
        assert name not in trail, f"import cycle: {' -> '.join(trail + (name,))}"
        if name not in done:
            for other in sorted(graph[name]):
                visit(other, trail + (name,))
            done.add(name)

    for name in graph:
        visit(name, ())


def test_the_recorder_needs_only_the_standard_library():
    # -S: no site-packages, so a third-party import anywhere in the recorder fails here.
    modules = ["__main__", *(m for m in MODULES if folder(m) in RECORDER)]
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); "
        + "; ".join(f"import recorded.{m.removesuffix('.__init__')}" for m in modules)
        + "; print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['recorded']", done.stdout


def lesson_names(declared: dict[str, lessons.Lesson], snippets: Path) -> dict[str, str]:
    """Each name a lesson owns (folder, title, pages, notebook, figures module, snippet
    stems), with what it is, for the message."""
    names = {}
    for lesson in declared.values():
        names[lesson.name] = f"lesson {lesson.name}'s folder under snippets/"
        names[lesson.title] = f"lesson {lesson.name}'s title"
        names |= {p: f"a page of lesson {lesson.name}" for p in lesson.pages if p != "index.md"}
        names |= {
            PurePosixPath(x).name: f"a file of lesson {lesson.name}"
            for x in (lesson.notebook, lesson.figures)
            if x
        }
    names |= {s.stem: f"snippets/{s.relative_to(snippets).as_posix()}" for s in snippets.rglob("*.py")}
    return names


def named(source: str, names: dict[str, str]) -> list[tuple[int, str]]:
    """(line, name) where the module's source names one of names.

    A name with a digit, `_`, `-`, `.` or a space (``making_it_fast``, ``02_limits``,
    ``Lesson 8: Counting``) is looked for everywhere, comments included. A plain word
    (``counting``) is ordinary English in a comment or a message, so it counts only as a
    string in code that is that name or a path through it (``"counting"``, ``"counting/01.py"``).
    """
    found = []
    lines = source.splitlines()
    plain = {n for n in names if re.fullmatch(r"[A-Za-z]+", n)}
    for name in set(names) - plain:
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        found += [(i, name) for i, line in enumerate(lines, 1) if pattern.search(line)]
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [
                (node.lineno, name)
                for name in plain
                if re.search(rf"(?:^|/){re.escape(name)}(?:/|$)", node.value)
            ]
    return sorted(set(found))


def test_the_engine_names_no_lesson():
    declared = lessons.load(ROOT)
    assert declared, "pyproject.toml declares no lesson"
    names = lesson_names(declared, ROOT / "snippets")
    found = [
        f"src/recorded/{path.relative_to(ENGINE).as_posix()}:{line} names {name!r} ({names[name]})"
        for path in MODULES.values()
        for line, name in named(path.read_text(encoding="utf-8"), names)
    ]
    assert not found, (
        "the engine must know no lesson, but:\n  " + "\n  ".join(found) + "\nReword those lines so they "
        "name no lesson (use another word, or a made-up example such as my_lesson/01_intro.py), or, where "
        "the engine needs a lesson's name, read it from pyproject.toml through recorded.config.lessons."
    )


def test_the_lesson_name_check_finds_paths_and_distinct_names_but_not_english_words():
    names = {"counting": "a folder", "making_it_fast": "a folder", "Lesson 8: Counting": "a title"}
    source = (
        '"""Counting is fine here, and so is counting."""\n'
        "# counting the lines, then making_it_fast\n"
        'WORDS = "counting lines"\n'
        'PATH = "counting/01_sum.py"\n'
        'FOLDER = "counting"\n'
        'TITLE = "Lesson 8: Counting"\n'
    )

    assert named(source, names) == [
        (2, "making_it_fast"),
        (4, "counting"),
        (5, "counting"),
        (6, "Lesson 8: Counting"),
    ]


def test_site_tooling_lives_outside_the_engine():
    found = {
        f"{module}: {node.names[0].name if isinstance(node, ast.Import) else node.module}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        and not getattr(node, "level", 0)
        and any(
            (a.name if isinstance(node, ast.Import) else node.module or "").startswith(SITE_TOOLING)
            for a in node.names
        )
    }
    assert not found, (
        f"site tooling imported by the engine (move it to scripts/, as bench.py): {sorted(found)}"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "--lighthouse-runs" in done.stdout, done.stderr
