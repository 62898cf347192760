"""`make serve`: a saved page shows in a fraction of a second, and never stale.

Two things make MkDocs' preview slow, and this hook answers both; `mkdocs build` is not
touched.

- **Noticing the save.** MkDocs polls the watched folders every half second, then waits a
  tenth of a second for quiet: a quarter of a second on average, up to 0.6 s, before a
  rebuild starts. Here the same watchdog library listens to the operating system's file
  events (inotify on Linux, FSEvents on macOS), so a save is seen as it lands, and a
  shorter quiet period still folds an editor's several writes into one rebuild.
- **Rebuilding only what changed.** `make serve` runs `mkdocs serve --dirty`: a rebuild
  renders only the pages saved since the last one (Material's search keeps the others'
  entries). That alone would be wrong here, since a page also shows the snippets, the
  recordings and the configuration, and the tables show every page's blocks: when any of
  those changed, or a page was added or removed, the hook clears the built pages first,
  so that everything is rendered again.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from watchdog.events import (
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)
from watchdog.observers import Observer

#: Quiet time, in seconds, after the last change before the rebuild starts.
QUIET = 0.03
#: What a save looks like (written in place, or written aside and renamed) and what a
#: deletion does. Not a file opened or closed unwritten: every build reads the pages, and
#: each read would start the next build.
CHANGES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileMovedEvent,
    FileDeletedEvent,
]


class _Changes(Observer):  # type: ignore[valid-type,misc]  # a platform's observer class, chosen at import
    """The platform's observer, hearing only the events in CHANGES."""

    def schedule(self, event_handler, path, *, recursive=False, event_filter=None):
        return super().schedule(
            event_handler, path, recursive=recursive, event_filter=event_filter or CHANGES
        )


def on_serve(server, config, builder):
    # MkDocs has scheduled the pages and the configuration on its polling observer, which is
    # not started yet; the folders of `-w` are added after this hook, on the new observer.
    watched = [path for path in (config.docs_dir, config.config_file_path) if path]
    for path in watched:
        server.unwatch(path)
    server.observer = _Changes()
    for path in watched:
        server.watch(path)
    server.build_delay = QUIET
    return server


#: Set while `mkdocs serve --dirty` runs: MkDocs loads this file again for every rebuild, and
#: only on_startup is told the command.
DIRTY = "RECORDED_DIRTY_PREVIEW"
#: Where the inputs of the last rebuild are noted, in the preview's own temporary site folder.
NOTED = ".recorded-inputs"


def on_startup(command, dirty):
    if command == "serve" and dirty:
        os.environ[DIRTY] = "1"


def inputs(config) -> str:
    """A digest of everything a page shows besides its own prose: the configuration, the
    snippets, the recordings, which pages there are, and every page's blocks."""
    from recorded.pages import blocks  # the engine; imported only while previewing

    root = Path(config.config_file_path).resolve().parent
    digest = hashlib.sha256()
    for name in ("mkdocs.yml", "pyproject.toml"):
        path = root / name
        digest.update(path.read_bytes() if path.is_file() else b"")
    for folder in ("snippets", "recordings"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                info = path.stat()
                digest.update(f"{path}\0{info.st_mtime_ns}\0{info.st_size}\n".encode())
    docs = Path(config.docs_dir)
    for page in sorted(docs.rglob("*")):
        digest.update(f"{page.relative_to(docs)}\n".encode())
        if page.suffix == ".md":
            lines = page.read_text(encoding="utf-8").splitlines()
            for found in blocks.read(lines).blocks:
                digest.update(repr((found.argument, found.body)).encode())
    return digest.hexdigest()


def on_pre_build(config):
    if not os.environ.get(DIRTY):
        return
    site, now = Path(config.site_dir), inputs(config)
    noted = site / NOTED
    if noted.is_file() and noted.read_text() != now:
        for page in site.rglob("*.html"):  # each page is rendered again: it is not "unmodified"
            page.unlink()
    site.mkdir(parents=True, exist_ok=True)
    noted.write_text(now)
