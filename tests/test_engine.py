"""The engine, src/recorded/, stays apart from the lesson and stays tidy.

It knows no lesson (no lesson's folder, page or notebook is named in it), its modules
import each other without cycles, none is over 400 lines, and the recorder's modules
need only the standard library, so they run on a bare GPU image.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

from recorded import lessons

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "src" / "recorded"
MODULES = {p.stem: p for p in sorted(ENGINE.glob("*.py"))}
MAX_LINES = 400
#: What scripts/record_runs.py imports, with everything those import.
RECORDER = (
    "cli",
    "commands",
    "choose",
    "kinds",
    "record",
    "runner",
    "store",
    "snippets",
    "targets",
    "provenance",
    "bundles",
    "compare",
    "listing",
    "lessons",
    "describe",
)
#: Site tooling (serving the built site, driving a browser) belongs in scripts/, not the engine.
SITE_TOOLING = ("http.server", "socketserver", "webbrowser")


def imports(path: Path) -> set[str]:
    """The engine modules a module imports (from . import x, from .x import y)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
    return found & set(MODULES)


def test_no_module_is_over_the_line_limit():
    long = {
        name: n for name, p in MODULES.items() if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"


def test_the_engine_modules_import_each_other_without_a_cycle():
    graph = {name: imports(path) for name, path in MODULES.items()}
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
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); "
        + "; ".join(f"import recorded.{m}" for m in RECORDER)
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
        f"src/recorded/{path.name}:{line} names {name!r} ({names[name]})"
        for path in MODULES.values()
        for line, name in named(path.read_text(encoding="utf-8"), names)
    ]
    assert not found, (
        "the engine must know no lesson, but:\n  " + "\n  ".join(found) + "\nReword those lines so they "
        "name no lesson (use another word, or a made-up example such as my_lesson/01_intro.py), or, where "
        "the engine needs a lesson's name, read it from pyproject.toml through recorded.lessons."
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
