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
RECORDER = ("cli", "commands", "choose", "kinds", "record", "runner", "store", "snippets", "targets",
            "provenance", "bundles", "compare", "listing", "lessons", "describe")
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
    long = {name: n for name, p in MODULES.items() if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES}
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
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); "
            + "; ".join(f"import recorded.{m}" for m in RECORDER)
            + "; print(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))")
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['recorded']", done.stdout


def test_the_engine_names_no_lesson():
    declared = lessons.load(ROOT)
    assert declared, "pyproject.toml declares no lesson"
    names = set()
    for lesson in declared.values():
        names |= {lesson.name, lesson.title, *(p for p in lesson.pages if p != "index.md")}
        names |= {PurePosixPath(x).name for x in (lesson.notebook, lesson.figures) if x}
    for snippet in (ROOT / "snippets").rglob("*.py"):
        names.add(snippet.stem)
    found = {f"{name}: {module}" for module, path in MODULES.items() for name in names
             if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", path.read_text(encoding="utf-8"))}
    assert not found, f"the engine names the lesson's own files or folders: {sorted(found)}"


def test_site_tooling_lives_outside_the_engine():
    found = {f"{module}: {node.names[0].name if isinstance(node, ast.Import) else node.module}"
             for module, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text("utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom)) and not getattr(node, "level", 0)
             and any((a.name if isinstance(node, ast.Import) else node.module or "").startswith(SITE_TOOLING)
                     for a in node.names)}
    assert not found, f"site tooling imported by the engine (move it to scripts/, as bench.py): {sorted(found)}"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--lighthouse-runs" in done.stdout, done.stderr
