"""A Python-Markdown extension that renders ``/// recorded | snippet`` blocks.

Each block becomes the snippet's code (titled with its path, metadata header hidden)
followed by one tab per target: the recorded output with the claimed lines
highlighted and a provenance line, or a plain statement of why there is none.
It reads recordings and never runs a snippet. Problems are logged as warnings on the
``mkdocs`` logger, which ``mkdocs build --strict`` turns into a failed build, and are
shown in the page as well.

It is a Markdown extension rather than an MkDocs hook so that Zensical, which reads the
same mkdocs.yml but not MkDocs hooks, renders the pages the same way.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as etree
from pathlib import Path

from markdown import Markdown
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from pymdownx.blocks import BlocksExtension
from pymdownx.blocks.block import Block

from ..model import claims, describe, escape
from ..model.snippets import Snippet, SnippetError, load
from ..model.store import State, Store, record_command, this_python
from . import blocks, markup, tables

log = logging.getLogger("mkdocs.extensions.recorded")


class _Visible(logging.Filter):
    """A warning may quote a recording (the nearest printed line): its control characters
    reach the terminal as escapes."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = escape.visible(record.getMessage()), None
        return True


log.addFilter(_Visible())


class _Page:
    """What the extension knows about the page being converted."""

    def __init__(self, md: Markdown):
        self.md = md
        self.blocks: tuple[blocks.Found, ...] = ()  # as blocks.read finds them, nested ones too
        self.read: set[int] = set()
        self.lines: list[str] = []  # the page's Markdown, for the line of a block

    def line_of(self, name: str) -> str:
        """``page:line`` of the first ``/// name`` block (a generated table)."""
        for number, line in enumerate(self.lines, 1):
            if line.strip().startswith(f"/// {name}"):
                return f"{self.name}:{number}"
        return self.name

    @property
    def name(self) -> str:
        # MkDocs registers the page's file on this treeprocessor; other hosts may not.
        try:
            relpath = self.md.treeprocessors["relpath"]
        except KeyError:  # a Markdown Registry has no .get
            relpath = None
        file = getattr(relpath, "file", None)
        return getattr(file, "src_uri", None) or "(page)"

    def claim(self, argument: str) -> int | None:
        """The header of the block being read: the first unread one naming the same snippet.

        Matched by snippet, not by position, because pymdownx.blocks silently drops a block it
        cannot parse, and matching by position would then pin every later block to the wrong line.
        """
        for index, found in enumerate(self.blocks):
            if index not in self.read and found.argument == argument:
                self.read.add(index)
                return index
        return None

    def where(self, index: int | None) -> str:
        line = self.blocks[index].line if index is not None else "?"
        return f"{self.name}:{line}"


class _FindHeaders(Preprocessor):
    def __init__(self, md: Markdown, page: _Page):
        super().__init__(md)
        self.page = page

    def run(self, lines: list[str]) -> list[str]:
        self.page.blocks, self.page.read, self.page.lines = blocks.read(lines).blocks, set(), lines
        return lines


class _CheckAllRead(Treeprocessor):
    """pymdownx.blocks skips a block it cannot parse without a word: say so."""

    def __init__(self, md: Markdown, page: _Page):
        super().__init__(md)
        self.page = page

    def run(self, root: etree.Element) -> None:
        for index, found in enumerate(self.page.blocks):
            if index in self.page.read:
                continue
            if found.problem:  # nested or never closed: say that, the reason every reader shares
                log.warning(
                    f"{self.page.name}:{found.line}: `/// recorded | {found.argument}`: {found.problem}"
                )
                continue
            log.warning(
                f"{self.page.name}:{found.line}: `/// recorded | {found.argument}` was not read as a block. "
                "Write its claims unindented between the header and the closing `///` line, "
                "with nothing after the snippet path on the header."
            )


class RecordedBlock(Block):
    NAME = blocks.NAME
    ARGUMENT = None  # checked in on_end, so a missing path gets a message, not silence

    def on_markdown(self) -> str:
        return "raw"

    def on_create(self, parent: etree.Element) -> etree.Element:
        return etree.SubElement(parent, "div", {"class": "recorded"})

    def on_end(self, block: etree.Element) -> None:
        page: _Page = self.config["page"]
        index = page.claim((self.argument or "").strip())
        problem = blocks.NESTED if index is None else page.blocks[index].problem
        if problem:
            # The tests and the notebook read closed blocks at the left margin only (blocks.read):
            # shown here, its claims would go untested, so the build says so.
            log.warning(f"{page.where(index)}: `/// recorded | {self.argument or ''}`: {problem}")
        body, block.text = str(block.text or ""), None
        for child in list(block):
            block.remove(child)
        try:
            store: Store = self.config["store"]
            spec = blocks.parse(self.argument, body, store.targets.names)
            snippet = load(store.snippets_dir, spec.snippet, store.targets)
            block.set("id", blocks.anchor(snippet.name))  # so other pages can link to the evidence
            shown = self.render(spec, snippet, page.where(index))
        except (blocks.BlockError, SnippetError) as exc:
            problem = str(exc)
            if isinstance(exc, SnippetError):
                problem = blocks.snippet_problem(exc, self.config["store"].snippets_dir, self.argument or "")
            message = f"{page.where(index)}: recorded block: {problem}"
            log.warning(message)
            shown = markup.admonition("failure", "This block could not be shown", escape.html(message))
        block.text = self.md.htmlStash.store(shown)

    # -- rendering ---------------------------------------------------------------------

    def render(self, spec: blocks.Block, snippet: Snippet, where: str) -> str:
        store: Store = self.config["store"]
        count = self.tracker.setdefault("count", 0)
        self.tracker["count"] = count + 1
        code = self.highlight(snippet.display_source(), "python", title=snippet.name)
        states = [
            (target, st.state, st.recording, st.reason)
            for target in store.targets
            for st in [store.status(snippet, target.name)]
        ]
        fresh = {t.name: rec for t, state, rec, _ in states if state is State.FRESH}
        broken = any(state in (State.FAILED, State.INVALID) for _, state, _, _ in states)
        # Output that every machine printed alike is shown once; tabs are for differences.
        if len(fresh) >= 2 and not broken and len({_printed(rec) for rec in fresh.values()}) == 1:
            return code + self.once(spec, snippet, states, fresh, where)
        tabs = [
            (target.label, self.tab(spec, snippet, target, state, rec, reason, where, fresh))
            for target, state, rec, reason in states
        ]
        return code + markup.tabbed(f"__recorded_{count}", tabs)

    def notify(self, snippet, target, state, rec, reason, where) -> None:
        """Warn (failing a strict build) about a target whose recording cannot be shown."""
        label = target.label
        must_be_fresh = target.required or self.config["strict"]
        if state is State.MISSING and must_be_fresh:
            log.warning(
                f"{where}: {snippet.name} has no {label} recording; run `{self.fix(snippet, target)}`."
            )
        elif state is State.INVALID:
            log.warning(f"{where}: {reason}")
        elif state is State.STALE and must_be_fresh:
            log.warning(
                f"{where}: the {label} recording of {snippet.name} is stale; "
                f"run `{self.fix(snippet, target)}`."
            )
        elif state is State.FAILED and must_be_fresh:
            log.warning(
                f"{where}: the {label} recording of {snippet.name} failed ({rec.status}); see its stderr."
            )

    def tab(self, spec, snippet, target, state, rec, reason, where, fresh) -> str:
        known = self.config["store"].targets
        cmd = escape.html(record_command(snippet.name, target.name))
        label = target.label
        self.notify(snippet, target, state, rec, reason, where)
        if state is State.NOT_APPLICABLE:
            on = [known.label(t) for t in snippet.targets(known)]
            return markup.admonition(
                "note",
                f"Not applicable on {label}",
                f"This snippet needs {escape.html(', '.join(sorted(snippet.requires)))}, "
                f"so it is recorded on the {escape.html(' and '.join(on))} "
                f"target{'s' * (len(on) != 1)} only.",
            )
        if state is State.MISSING:
            return markup.admonition(
                "info",
                f"Not recorded yet on {label}",
                f"No {escape.html(label)} recording of this snippet exists yet. On a machine that "
                f"matches this target ({escape.html(target.description)}), "
                f"record it with <code>{cmd}</code>.",
            )
        if state is State.INVALID:
            return markup.admonition("failure", f"Unreadable {label} recording", escape.html(reason))
        if state is State.STALE:
            return markup.admonition(
                "warning",
                f"Stale {label} recording",
                f"The snippet changed after it was recorded on {escape.html(describe.machine(rec.machine))}, "
                f"so its old output is not shown. Re-record it with <code>{cmd}</code>.",
            )
        emulated = self.emulated(snippet, target, rec, fresh, where)
        if state is State.FAILED:
            tail = escape.visible("\n".join(rec.stderr[-15:])) or "(no error output)"
            return (
                markup.admonition(
                    "failure",
                    f"The last {label} run failed",
                    f"It ended with status <code>{escape.html(rec.status)}</code> "
                    f"(exit code {escape.html(str(rec.exit_code))}). The end of its error output:",
                )
                + self.highlight(tail, "text")
                + emulated
                + markup.provenance(rec, target)
            )
        shown = self.output(rec, self.claimed(spec, snippet, target, rec, where))
        return shown + emulated + markup.provenance(rec, target)

    def once(self, spec, snippet, states, fresh, where) -> str:
        """One output for the targets that printed it alike, naming each machine, and a
        plain list of the targets that have no fresh recording."""
        lines: set[int] = set()
        machines_, others = [], []
        for target, state, rec, reason in states:
            if state is State.FRESH:
                lines |= set(self.claimed(spec, snippet, target, rec, where))
                emulated = self.emulated(snippet, target, rec, fresh, where, tag="span")
                machines_.append(
                    f"<li><strong>{escape.html(target.label)}</strong>: "
                    f"{escape.html(describe.provenance(rec, target.description))}"
                    f"{' ' + emulated if emulated else ''}</li>"
                )
                continue
            self.notify(snippet, target, state, rec, reason, where)
            cmd = escape.html(record_command(snippet.name, target.name))
            if state is State.NOT_APPLICABLE:
                needs = escape.html(", ".join(sorted(snippet.requires)))
                why = f"not applicable (this snippet needs {needs})"
            elif state is State.MISSING:
                why = (
                    f"not recorded yet on this kind of machine ({escape.html(target.description)}); "
                    f"record it with <code>{cmd}</code>"
                )
            elif state is State.STALE:
                why = f"stale (the snippet changed since); re-record it with <code>{cmd}</code>"
            else:  # failed or unreadable recordings are shown as tabs instead
                why = escape.html(state.value)
            others.append(f"<li><strong>{escape.html(target.label)}</strong>: {why}</li>")
        first = next(iter(fresh.values()))
        text = (
            self.output(first, sorted(lines))
            + f'<p class="recorded-provenance">Printed alike on these {len(fresh)} kinds of machine:</p>'
            f'<ul class="recorded-provenance recorded-machines">{"".join(machines_)}</ul>'
        )
        if others:
            text += (
                f'<p class="recorded-provenance">Not shown here:</p>'
                f'<ul class="recorded-provenance recorded-others">{"".join(others)}</ul>'
            )
        return f'<div class="recorded-once">{text}</div>'

    def claimed(self, spec, snippet, target, rec, where) -> list[int]:
        """The 1-based lines of rec's output that the block claims for target; warns about
        claims it does not print."""
        found, missing = [], []
        for group in spec.claims_for(target.name):
            matched = claims.match(list(group), rec.stdout)
            found += matched
            missing += [c for c, i in zip(group, matched) if i is None]
        if missing:
            near = [f"{n!r} (for {c!r})" for c in missing if (n := claims.nearest(c, rec.stdout)) is not None]
            said = f" Nearest printed line{'s' * (len(near) > 1)}: {', '.join(near)}." if near else ""
            log.warning(
                f"{where}: the {target.label} recording of {snippet.name} does not print {missing!r} "
                f"({claims.RULE}).{said}"
            )
        return sorted({i + 1 for i in found if i is not None})

    def output(self, rec, hl: list[int]) -> str:
        """The recorded output with the lines this page relies on highlighted."""
        out = self.highlight(
            escape.visible("\n".join(rec.stdout)) or "(printed nothing)", "text", hl_lines=hl
        )
        if rec.stderr:
            out += (
                '<details class="recorded-stderr"><summary>It also wrote to stderr</summary>'
                + self.highlight(escape.visible("\n".join(rec.stderr)), "text")
                + "</details>"
            )
        return out

    def emulated(self, snippet, target, rec, fresh, where, tag: str = "p") -> str:
        """For an emulated target: the same machine as its host's tab, with one thing changed.
        Checked against the host's fresh recording of this snippet, when there is one."""
        known = self.config["store"].targets
        change = describe.emulation(target, known)
        if change is None:
            return ""
        host = known.get(target.host)
        text = (
            f"Same machine as the {host.label} tab, with one thing changed: {change}. "
            "That limits the instructions the libraries choose, not the machine's cores, caches or clock."
        )
        theirs = fresh.get(host.name)
        if theirs is not None and not rec.machine.same_as(theirs.machine):
            differ = "; ".join(theirs.machine.differences(rec.machine))
            log.warning(
                f"{where}: the {target.label} recording of {snippet.name} was made on another machine "
                f"than the {host.label} one ({differ}); re-record both targets on one machine."
            )
            text = (
                f"Meant to be the machine of the {host.label} tab with one thing changed ({change}), "
                f"but recorded on another machine: {differ}."
            )
        return f'<{tag} class="recorded-emulated">{escape.html(text)}</{tag}>'

    def fix(self, snippet: Snippet, target) -> str:
        """The command for a contributor's terminal (pages show the plain `python` form)."""
        return record_command(snippet.name, target.name, this_python(self.config["store"].root))

    def highlight(self, src: str, language: str, title: str | None = None, hl_lines=None) -> str:
        count = self.tracker.setdefault("code", 0)
        self.tracker["code"] = count + 1
        highlighter = markup.highlighter(self.md)
        if language == "text":
            # Recorded output is shown as printed. Stripping its leading blank lines would
            # also shift hl_lines onto the wrong lines.
            highlighter.stripnl = False
        return highlighter.highlight(
            src, language, hl_lines=hl_lines or None, title=title, code_block_count=count
        )


def _printed(rec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(rec.stdout), tuple(rec.stderr)


class RecordedExtension(BlocksExtension):
    def __init__(self, **kwargs):
        self.config = {
            "root": [".", "Project folder holding snippets/ and recordings/ (default: the current one)"],
            "strict": [
                False,
                (
                    "Also warn about recordings of targets that pyproject.toml does not "
                    "mark required that are missing, stale or failed (the release rule)"
                ),
            ],
        }
        super().__init__(**kwargs)

    def extendMarkdownBlocks(self, md: Markdown, block_mgr) -> None:
        root = Path(self.getConfig("root")).resolve()
        if not (root / "snippets").is_dir():
            raise ValueError(
                f"recorded: no snippets/ folder in {root}; run from the project root "
                "or set the extension's root option."
            )
        page = _Page(md)
        md.preprocessors.register(_FindHeaders(md, page), "recorded_headers", 40)
        md.treeprocessors.register(_CheckAllRead(md, page), "recorded_check", 1)
        strict = self.getConfig("strict")
        if isinstance(strict, str):  # from an environment variable via !ENV
            strict = strict.strip().lower() in ("1", "true", "yes", "on")
        store = Store(root)
        block_mgr.register(RecordedBlock, {"store": store, "strict": bool(strict), "page": page})
        block_mgr.register(tables.RecordingsBlock, {"store": store, "page": page})
        block_mgr.register(tables.MachineTableBlock, {"store": store, "page": page})


def makeExtension(**kwargs):
    return RecordedExtension(**kwargs)
