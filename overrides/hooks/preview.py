"""`make serve`: a saved file starts the rebuild at once.

MkDocs' preview looks for changes by polling the watched folders every half second, then
waits a tenth of a second for quiet: a quarter of a second on average, and up to 0.6 s,
before a rebuild even starts. Here the same watchdog library MkDocs uses listens to the
operating system's file events instead (inotify on Linux, FSEvents on macOS), so a save is
seen as it lands, and a shorter quiet period still folds an editor's several writes into
one rebuild. Nothing changes for `mkdocs build`.
"""

from __future__ import annotations

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
