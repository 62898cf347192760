"""Lessons: folders under snippets/, recorded and shown undeclared. ``[tool.recorded.lessons.<folder>]``
gives one a title, its pages (under docs/, in reading order), the notebook built from them (an intro
sentence, sections left out by page) and a module of FIGURES drawn under docs/. No engine code names one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import schema, tool_table
from .schema import Key, any_text, list_of, relative, table_of

TABLE = "tool.recorded.lessons"

SCHEMA = {
    "title": Key("a string", schema.text, required=True),
    "pages": Key(
        "a list of pages under docs/ (strings ending in .md)", list_of(relative(".md")), required=True
    ),
    "notebook": Key("a path under docs/ ending in .ipynb", relative(".ipynb")),
    "notebook_note": Key("a string", any_text, default=""),
    "notebook_skip": Key("a table of page = [section headings]", table_of(list_of(any_text)), default={}),
    "figures": Key("a path to a Python file, relative to the project", relative(".py")),
    "figures_dir": Key("a folder under docs/", relative(), default="figures"),
}


class LessonError(schema.ConfigError):
    """A lesson entry that is badly declared; the message names the key and what to write."""


@dataclass(frozen=True)
class Lesson:
    name: str  #: its folder under snippets/
    title: str
    pages: tuple[str, ...] = ()
    notebook: str | None = None
    notebook_note: str = ""
    notebook_skip: dict[str, frozenset[str]] = field(default_factory=dict)
    figures: str | None = None
    figures_dir: str = "figures"

    @property
    def slug(self) -> str:
        """The name as it reads in a URL or a folder name: my_lesson -> my-lesson."""
        return self.name.replace("_", "-").lower()


def lesson_of(snippet_name: str) -> str:
    """The lesson a snippet belongs to: its folder under snippets/ ('' at the top level)."""
    parts = PurePosixPath(snippet_name).parts
    return parts[0] if len(parts) > 1 else ""


def parse(config: dict, where: str = schema.CONFIG_FILE) -> dict[str, Lesson]:
    """The lessons declared in a parsed pyproject.toml, by folder name, in declared order."""
    declared = tool_table(config, where, LessonError).get("lessons", {})
    if not isinstance(declared, dict):
        raise LessonError(f"{where}: [{TABLE}] must hold one table per lesson, such as [{TABLE}.my_lesson].")
    lessons = {}
    for name, entry in declared.items():
        v = schema.validate(SCHEMA, entry, where, f"{TABLE}.{name}", LessonError)
        if strays := sorted(set(v["notebook_skip"]) - set(v["pages"])):
            raise LessonError(f"{where}: [{TABLE}.{name}] notebook_skip names {strays}, not among its pages.")
        v.update(title=v["title"].strip(), pages=tuple(v["pages"]), figures_dir=v["figures_dir"].rstrip("/"))
        v.update(notebook_note=" ".join(v["notebook_note"].split()))
        v.update(notebook_skip={p: frozenset(s) for p, s in v["notebook_skip"].items()})
        lessons[name] = Lesson(name, **v)
    notebooks = [lesson.notebook for lesson in lessons.values() if lesson.notebook]
    if len(set(notebooks)) != len(notebooks):
        raise LessonError(f"{where}: two lessons write the same notebook ({notebooks}); give each its own.")
    return lessons


def load(root: Path) -> dict[str, Lesson]:
    return parse(schema.read_project(root, LessonError) or {})


def title(lessons: dict[str, Lesson], name: str) -> str:
    """A lesson's title, or its folder name when it declares none."""
    return lessons[name].title if name in lessons else name or "(snippets at the top level)"
