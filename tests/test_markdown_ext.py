"""The Markdown extension, over tiny projects built in tmp_path.

Pages are converted with the same extension list as mkdocs.yml, so what these tests see
is what the site shows, minus the theme.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import markdown
import pytest
import yaml

from recorded.snippets import Snippet, load
from recorded.store import Recording, Store

ROOT = Path(__file__).resolve().parents[1]

SNIPPET = '''\
# /// script
# requires-python = ">=3.11"
# dependencies = ["numpy"]
# ///
"""Prints a greeting and an answer."""

print("hello")
print("answer: 42")
print("done")
'''

CUDA_SNIPPET = '''\
# /// script
# [tool.record-runs]
# requires = ["cuda"]
# ///
print("on the gpu")
'''

MACHINE = {
    "cpu": {"model": "Test CPU 9000", "cores": 4, "features": ["avx2"]},
    "gpu": None,
    "python": "3.12.1",
    "torch": "2.13.0+cpu",
    "numpy": "2.4.6",
}


def site_extensions() -> tuple[list[str], dict[str, dict]]:
    """The markdown_extensions of the real mkdocs.yml, as Python-Markdown takes them."""

    class Loader(yaml.SafeLoader):
        pass

    # `!ENV [NAME, default]`: these tests set the extension's options themselves.
    Loader.add_constructor("!ENV", lambda loader, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    names, configs = [], {}
    for item in config["markdown_extensions"]:
        if isinstance(item, str):
            names.append(item)
        else:
            ((name, options),) = item.items()
            names.append(name)
            configs[name] = dict(options or {})
    assert "recorded.markdown_ext" in names
    return names, configs


class Project:
    """A throwaway project: snippets/, recordings/, and a way to render a page over them."""

    def __init__(self, root: Path):
        self.root = root
        self.store = Store(root)
        (root / "snippets").mkdir(exist_ok=True)

    def snippet(self, name: str = "lesson/x.py", source: str = SNIPPET) -> Snippet:
        path = self.store.snippets_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        return load(self.store.snippets_dir, name)

    def record(self, snippet: Snippet, target: str, stdout=(), *, status="ok", exit_code=0,
               stderr=(), stale=False, machine=MACHINE, duration_s=2.5) -> Recording:
        rec = Recording(
            snippet=snippet.name, target=target,
            sha256="0" * 64 if stale else snippet.sha256(),
            status=status, exit_code=exit_code, stdout=list(stdout), stderr=list(stderr),
            duration_s=duration_s, recorded_at="2026-01-02T03:04:05Z", machine=dict(machine),
        )
        self.store.write(rec)
        return rec

    def render(self, page: str, strict: bool = False) -> str:
        names, configs = site_extensions()
        configs["recorded.markdown_ext"] = {"root": str(self.root), "strict": strict}
        return markdown.Markdown(extensions=names, extension_configs=configs).convert(page)


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def warnings(caplog):
    """The warnings logged on the mkdocs logger, which `mkdocs build --strict` fails on."""
    caplog.set_level(logging.WARNING, logger="mkdocs")

    def get() -> list[str]:
        return [r.getMessage() for r in caplog.records
                if r.name.startswith("mkdocs") and r.levelno >= logging.WARNING]

    return get


def page(*blocks: str) -> str:
    """A page whose first block header sits on line 3."""
    return "# Page\n\n" + "\n\nSome prose.\n\n".join(blocks) + "\n"


def block(snippet: str = "lesson/x.py", body: str = "") -> str:
    return f"/// recorded | {snippet}\n{body}///"


def output_tabs(html: str) -> list[dict[str, str]]:
    """Each recorded block's tabs, label -> the HTML inside that tab."""
    sets = html.split('<div class="tabbed-set tabbed-alternate recorded-outputs"')[1:]
    found = []
    for chunk in sets:
        labels = re.findall(r'<label for="[^"]+">([^<]*)</label>', chunk)
        contents = chunk.split('<div class="tabbed-block">')[1:]
        assert len(labels) == len(contents), chunk
        found.append(dict(zip(labels, contents)))
    return found


def highlighted(tab: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", line).strip()
            for line in re.findall(r'<span class="hll">(.*?)</span>', tab, re.S)]


# -- a fresh recording ------------------------------------------------------------------


def test_fresh_recording_shows_code_titled_with_its_path_without_the_metadata_header(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello", "answer: 42", "done"])

    html = project.render(page(block()))

    assert '<span class="filename">lesson/x.py</span>' in html
    assert "language-python" in html
    assert "Prints a greeting" in html
    assert "/// script" not in html
    assert "requires-python" not in html
    assert warnings() == []


def test_fresh_recording_has_a_cpu_and_a_cuda_tab_with_the_claimed_lines_highlighted(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello", "answer: 42", "done"])
    project.record(snippet, "cuda", ["hello", "answer: 42", "done"])

    html = project.render(page(block(body='expect:\n  - "answer: ..."\nexpect_on:\n  cuda:\n    - "done"\n')))

    (tabs,) = output_tabs(html)
    assert list(tabs) == ["CPU", "CUDA"]
    assert highlighted(tabs["CPU"]) == ["answer: 42"]
    assert highlighted(tabs["CUDA"]) == ["answer: 42", "done"]
    assert "hello" in tabs["CPU"]  # unclaimed lines are shown too, just not highlighted
    assert warnings() == []


def test_provenance_line_names_the_machine_versions_and_duration(project):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello"], duration_s=2.5)

    html = project.render(page(block()))

    (provenance,) = re.findall(r'<p class="recorded-provenance">(.*?)</p>', html)
    assert provenance.startswith("Recorded 2026-01-02 on Test CPU 9000")
    for part in ("AVX2", "4 cores", "Python 3.12.1", "torch 2.13.0+cpu", "numpy 2.4.6", "2.5 s"):
        assert part in provenance


def test_recorded_text_is_escaped_never_interpreted(project):
    hostile = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
               "**not bold** [not a link](http://example.com) _not em_", "&amp; stays &amp;"]
    snippet = project.snippet()
    project.record(snippet, "cpu", hostile, stderr=hostile,
                   machine={**MACHINE, "cpu": {"model": "<b>Evil</b> CPU"}, "python": "<i>3</i>"})
    project.record(snippet, "cuda", [], status="error", exit_code=1, stderr=hostile)

    html = project.render(page(block(body='expect:\n  - "<script>alert(1)</script>"\n')))

    for tag in ("<script", "<img", "<strong", "<em>", '<a href="http://example.com"', "<b>", "<i>"):
        assert tag not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "**not bold** [not a link](http://example.com) _not em_" in html
    assert "&amp;amp; stays &amp;amp;" in html
    assert "&lt;b&gt;Evil&lt;/b&gt; CPU" in html


# -- tabs without a fresh recording ------------------------------------------------------


def test_missing_cuda_recording_says_how_to_record_it_and_is_no_warning(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello"])

    html = project.render(page(block()))

    cuda = output_tabs(html)[0]["CUDA"]
    assert "Not recorded yet" in cuda
    assert "<code>python scripts/record_runs.py --target cuda lesson/x.py</code>" in cuda
    assert warnings() == []


def test_missing_cuda_recording_warns_in_strict_mode(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello"])

    project.render(page(block()), strict=True)

    (warning,) = warnings()
    assert ":3:" in warning
    assert "no CUDA recording" in warning
    assert "python scripts/record_runs.py --target cuda lesson/x.py" in warning


def test_missing_cpu_recording_always_warns(project, warnings):
    project.snippet()

    html = project.render(page(block()))

    assert "Not recorded yet" in output_tabs(html)[0]["CPU"]
    (warning,) = warnings()
    assert ":3:" in warning and "no CPU recording" in warning
    assert "python scripts/record_runs.py --target cpu lesson/x.py" in warning


def test_stale_recording_hides_its_old_output_and_warns_for_cpu(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["old cpu output 123"], stale=True)
    project.record(snippet, "cuda", ["old cuda output 456"], stale=True)

    html = project.render(page(block()))

    tabs = output_tabs(html)[0]
    assert "Stale CPU recording" in tabs["CPU"] and "Stale CUDA recording" in tabs["CUDA"]
    assert "--target cpu lesson/x.py" in tabs["CPU"]
    assert "old cpu output 123" not in html and "old cuda output 456" not in html
    assert "recorded-provenance" not in html
    (warning,) = warnings()  # the CUDA one only in strict mode
    assert ":3:" in warning and "CPU recording of lesson/x.py is stale" in warning


def test_failed_recording_shows_its_status_and_the_end_of_stderr(project, warnings):
    snippet = project.snippet()
    stderr = [f"stderr line {i:02}" for i in range(20)] + ["ZeroDivisionError: division by zero"]
    project.record(snippet, "cpu", ["hello"], status="error", exit_code=1, stderr=stderr)

    html = project.render(page(block()))

    cpu = output_tabs(html)[0]["CPU"]
    assert "The last CPU run failed" in cpu
    assert "<code>error</code>" in cpu and "exit code 1" in cpu
    assert "ZeroDivisionError: division by zero" in cpu
    assert "stderr line 19" in cpu and "stderr line 06" in cpu
    assert "stderr line 05" not in cpu  # only the tail
    (warning,) = warnings()
    assert ":3:" in warning and "failed (error)" in warning


def test_snippet_needing_cuda_is_not_applicable_on_the_cpu_tab(project, warnings):
    snippet = project.snippet("lesson/gpu.py", CUDA_SNIPPET)
    project.record(snippet, "cuda", ["on the gpu"])

    html = project.render(page(block("lesson/gpu.py", 'expect:\n  - "on the gpu"\n')), strict=True)

    tabs = output_tabs(html)[0]
    assert list(tabs) == ["CPU", "CUDA"]
    assert "Not applicable on CPU" in tabs["CPU"]
    assert highlighted(tabs["CUDA"]) == ["on the gpu"]
    assert warnings() == []


def test_unreadable_recording_warns_and_names_the_file(project, warnings):
    snippet = project.snippet()
    path = project.store.path(snippet.name, "cpu")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")

    html = project.render(page(block()))

    assert "Unreadable CPU recording" in output_tabs(html)[0]["CPU"]
    (warning,) = warnings()
    assert ":3:" in warning and "recordings/cpu/lesson/x.json" in warning


# -- what the page claims ------------------------------------------------------------------


def test_claim_a_fresh_recording_does_not_print_warns(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello", "answer: 41"])

    html = project.render(page(block(body='expect:\n  - "hello"\n  - "answer: 42"\n')))

    assert highlighted(output_tabs(html)[0]["CPU"]) == ["hello"]
    (warning,) = warnings()
    assert ":3:" in warning
    assert "CPU recording of lesson/x.py does not print ['answer: 42']" in warning


# -- blocks that cannot be shown -----------------------------------------------------------


@pytest.mark.parametrize(
    "header, body, message",
    [
        ("/// recorded | lesson/nope.py", "", "no such snippet"),
        ("/// recorded | ../x.py", "", "relative path"),
        ("/// recorded | lesson/x.py", "expect: [unclosed\n", "not valid YAML"),
        ("/// recorded | lesson/x.py", 'expects:\n  - "hello"\n', "unknown key(s) ['expects']"),
        ("/// recorded | lesson/x.py", 'expect_on:\n  tpu:\n    - "hello"\n', "unknown target(s) ['tpu']"),
        ("/// recorded | lesson/x.py", 'expect: "hello"\n', "expect must be a list"),
        ("/// recorded", "", "names no snippet"),
    ],
    ids=["missing-snippet", "parent-path", "bad-yaml", "unknown-key", "unknown-target",
         "claims-not-a-list", "no-path"],
)
def test_malformed_block_warns_with_page_line_and_shows_a_failure(project, warnings, header, body, message):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello"])

    html = project.render(page(f"{header}\n{body}///"))

    (warning,) = warnings()
    assert ":3: recorded block:" in warning
    assert message in warning
    assert '<div class="admonition failure">' in html
    assert "This block could not be shown" in html
    assert "tabbed-set" not in html


def test_header_inside_a_fenced_example_is_left_alone(project, warnings):
    project.snippet()

    html = project.render(page('```text\n/// recorded | lesson/nope.py\nexpect:\n  - "x"\n///\n```'))

    assert "/// recorded | lesson/nope.py" in html
    assert "<code>" in html and "tabbed-set" not in html and "admonition" not in html
    assert warnings() == []


def test_indented_header_options_that_blocks_drops_are_reported(project, warnings):
    snippet = project.snippet()
    project.record(snippet, "cpu", ["hello"])

    # pymdownx.blocks reads indented lines under a header as options and, finding none it
    # knows, drops the whole block without a word.
    project.render(page(block(body='    expect:\n      - "hello"\n')))

    (warning,) = warnings()
    assert ":3:" in warning and "was not read as a block" in warning


def test_two_blocks_on_one_page_get_distinct_tab_ids(project, warnings):
    for name in ("lesson/a.py", "lesson/b.py"):
        project.record(project.snippet(name), "cpu", ["hello"])

    html = project.render(page(block("lesson/a.py"), block("lesson/b.py")))

    assert len(output_tabs(html)) == 2
    ids = re.findall(r'<input [^>]*id="([^"]+)"', html)
    assert len(ids) == 4 and len(set(ids)) == 4
    assert sorted(re.findall(r'<label for="([^"]+)"', html)) == sorted(ids)
    names = set(re.findall(r'<input [^>]*name="([^"]+)"', html))
    assert len(names) == 2
    assert warnings() == []


def test_second_block_warnings_name_its_own_line(project, warnings):
    project.record(project.snippet("lesson/a.py"), "cpu", ["hello"])

    project.render(page(block("lesson/a.py"), block("lesson/nope.py")))

    (warning,) = warnings()
    assert ":8: recorded block:" in warning and "lesson/nope.py" in warning


def test_a_dropped_block_does_not_shift_the_lines_of_later_blocks(project, warnings):
    project.record(project.snippet(), "cpu", ["hello"])

    project.render(page(block(body='    expect:\n      - "hello"\n'), block("lesson/nope.py")))

    assert sorted(warnings()) == [
        "(page):10: recorded block: 'lesson/nope.py': no such snippet in "
        f"{project.store.snippets_dir}.",
        "(page):3: `/// recorded | lesson/x.py` was not read as a block. Write its claims unindented "
        "between the header and the closing `///` line, with nothing after the snippet path on the header.",
    ]


@pytest.mark.parametrize("text", [
    '!!! note\n\n    /// recorded | lesson/x.py\n    expect:\n      - "hello"\n    ///\n',
    ' /// recorded | lesson/x.py\n ///\n',
], ids=["in-an-admonition", "indented"])
def test_a_block_the_tests_cannot_see_is_reported(project, warnings, text):
    project.record(project.snippet(), "cpu", ["hello"])

    html = project.render(page(text))

    assert "tabbed-set" in html  # still shown, but its claims would go untested
    (warning,) = warnings()
    assert "lesson/x.py" in warning and "indented or nested inside another block" in warning


def test_blank_lines_at_the_start_of_the_output_are_kept_and_do_not_shift_the_highlight(project):
    project.record(project.snippet(), "cpu", ["", "", "hello", "", "world", ""])

    html = project.render(page(block(body='expect:\n  - "hello"\n  - "world"\n')))

    cpu = output_tabs(html)[0]["CPU"]
    assert highlighted(cpu) == ["hello", "world"]
    assert "<code>\n\n" in cpu


def test_the_recordings_page_has_a_table_per_lesson_under_its_title(project, warnings):
    (project.root / "pyproject.toml").write_text(
        '[tool.record-runs.lessons.zeta]\ntitle = "Lesson 8: Zeta"\npages = ["zeta.md"]\n', encoding="utf-8")
    for name in ("alpha/01_a.py", "zeta/01_z.py"):
        project.record(project.snippet(name), "cpu", ["hello"])

    html = project.render("# Recordings\n\n/// recordings\n///\n")

    headings = re.findall(r'<h2 id="([^"]+)">([^<]+)<', html)  # then the permalink
    assert headings == [("lesson-zeta", "Lesson 8: Zeta"), ("lesson-alpha", "alpha"), ("machines", "Machines")]
    tables = re.findall(r"<table>.*?</table>", html, re.S)
    assert len(tables) == 2 and "zeta/01_z.py" in tables[0] and "alpha/01_a.py" in tables[1]
    assert warnings() == []
