"""`--adopt` and `--upgrade`: move recordings between targets, and bring a store up to this
version's schema; nothing runs. Standard library only.
"""

from __future__ import annotations

from ..model.files import write_atomically
from ..model.recording import SCHEMA_VERSION, RecordingError
from ..model.store import Store
from ..recorder import admit
from .options import Options


def do_adopt(opts: Options, store: Store) -> int:
    assert opts.adopt is not None
    print("\n".join(admit.adopt(store, *opts.adopt, list(opts.snippets))))
    return 0


def do_upgrade(store: Store) -> int:
    """Bring every recording of the store up to this version's schema (recording.migrate), as
    ``asv update`` does its results; nothing runs. A recording that cannot be read is left
    as it is and said."""
    upgraded = current = 0
    for path in store.recording_files():
        try:
            before = path.read_bytes()
            rec = store.load(path)
        except (OSError, RecordingError) as exc:
            print(f"left as it is: {exc}")
            continue
        if rec.to_json().encode("utf-8") == before:
            current += 1
            continue
        write_atomically(path, rec.to_json())
        upgraded += 1
        print(
            f"upgraded   {store.shown(path)}"
            + (
                ""
                if rec.code_sha256
                else " (recorded with an earlier version of the code, which it does not hold)"
            )
        )
    print(f"{upgraded} upgraded to schema {SCHEMA_VERSION}, {current} already current")
    return 0
