"""Files written so that a reader never sees half of one, with the umask's permissions, and
a lock a folder's writers take turns by. Standard library only."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


class WriteFailed(OSError):
    """A file could not be written; the one there before is unchanged. The message says why."""


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and put back at once
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str) -> None:
    """Write text to path through a temporary file in the same folder and a rename, so a reader
    sees the old file or the new one. The file gets 0666 less the umask, as ``open`` gives it."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise WriteFailed(
                f"{path}: could not be written ({exc.strerror or exc}); the file there before, if any, is unchanged."
            ) from None
        raise


@contextlib.contextmanager
def locked(folder: Path, what: str, wait_s: float = 600.0, say=None) -> Iterator[None]:
    """Hold the lock of a recording store while its recordings are checked and written: a second
    recorder or import says it waits, and gives up after ``wait_s`` seconds with WriteFailed. The
    lock is on the folder holding the store, which exists before it: nothing is created to take it."""
    holder = Path(folder).resolve().parent
    while not holder.is_dir():  # --out new/folder: its nearest existing parent
        holder = holder.parent
    fd = os.open(holder, os.O_RDONLY)
    try:
        deadline = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is None:
                    if say:
                        say(f"waiting: another recorder or import is writing in {holder} ({what} goes next)")
                    deadline = time.monotonic() + wait_s
                elif time.monotonic() > deadline:
                    raise WriteFailed(
                        f"{folder}: another recorder or import held it for {wait_s:g} s; "
                        "nothing was written. Run again once it has finished."
                    ) from None
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
