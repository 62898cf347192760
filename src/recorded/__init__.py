"""Executable lessons whose printed numbers come from recordings made on real machines.

Data flows one way: the recorder (``recorder/``, driven by ``cli/``) runs a snippet and stores
what it printed per target (``model/store.py``); the pages (``pages/``), the notebook
(``notebook/``) and the tests (``checks/``) read those recordings. ``config/`` holds what a project
declares. The recorder's folders use only the standard library, so they run on a bare GPU image.

One name for one thing:

- **target**: a kind of machine a recording speaks for, declared in ``pyproject.toml``
  (``[tool.recorded.targets.<name>]``): its hardware, environment and tab label. An *emulated*
  target is its host's machine with limits set in its environment. Code passes the
  ``config.targets.Target`` once a name is read; a recording and its path store the name.
- **machine**: one computer, as a recording stores its identity (``model.machines.Machine``);
  every recording of a target comes from one machine.
- **tab**: one target's place beside an example on a page.
- **recording**: what one snippet printed on one target (``model.recording.Recording``), with the
  machine, and for a timing snippet every fresh run; one JSON file.
- **standing**: where one snippet stands on one target: fresh, stale (recorded with an earlier
  version of the code, still shown, labelled), missing, failed, invalid or not applicable
  (``model.store.Standing``); which must be renewed here is ``model.renewal``'s one rule.
- **ending** (a recording's or a run's ``status``): ok, error or timeout (``model.recording.Ending``).
- **claim**: a line a page says a snippet prints (``expect``, ``expect_on``).
- **verdict**: a printed answer to a question about the machine, such as
  ``bf16 vs fp32 here: faster`` (``model.lines``).
- **run**: one start of a snippet in a fresh process (``recorder.runner.run_snippet``);
  ``Recording.runs`` holds every fresh run, the shown one first; the ``runs`` setting is how
  many a timing snippet gets.
- **shard**: one CI runner's share of the snippets on a target (``recorder.shard``); a *part* is
  only a piece of a page that becomes notebook cells (``notebook.prose.Part``).
- **check**: a target's check, Python whose last printed line proves a run is on that kind
  (``[tool.recorded.targets.<name>.check]``, ``recorder.runner.check``). The ``--check`` of the
  recorder and of the notebook and figure scripts keeps the command-line sense: write nothing,
  exit 1 when something must be redone.
"""


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI sends a cancelled job), met as Ctrl-C is: the command ends cleanly."""


def terminate(signum: int, frame: object) -> None:
    """The SIGTERM handler of ``python -m recorded`` while it starts and of the command line."""
    raise Terminated
