"""The Markdown extension, over tiny projects built in tmp_path.

Pages are converted with the same extension list as mkdocs.yml, so what these tests see
is what the site shows, minus the theme.
"""

from __future__ import annotations

import re

import markdown
import pytest

from projects import MACHINE, OTHER_MACHINE, SNIPPET, THREE, Project, site_extensions
from recorded.model import lines, machines
from rendering import block, highlighted, output_tabs, page

CUDA_SNIPPET = 'print("on the gpu")\n'  # written with requires=["cuda"]


@pytest.fixture
def project(tmp_path) -> Project:
    made = Project(tmp_path)
    made.page("recordings.md", "# Recordings\n\n/// recordings\n///\n")  # where provenance links
    return made


HIGHLIGHT_BOTH = 'highlight:\n  - "answer: ..."\n  - "done"\n'


# -- a fresh recording ------------------------------------------------------------------


def test_fresh_recording_shows_code_titled_with_its_path_without_the_metadata_header(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 42", "done"])

    html = project.render(page(block()))

    assert '<span class="filename">lesson/x.py</span>' in html
    assert "language-python" in html
    assert "Prints a greeting" in html
    assert "/// script" not in html
    assert "requires-python" not in html
    assert warnings() == []


def test_fresh_recording_has_a_cpu_and_a_cuda_tab_with_the_claimed_lines_highlighted(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 42", "done"])
    project.recording(snippet, "cuda", ["hello", "answer: 43", "done"])

    html = project.render(
        page(block(body='expect:\n  - "answer: ..."\nexpect_on:\n  cuda:\n    - "done"\n' + HIGHLIGHT_BOTH))
    )

    (tabs,) = output_tabs(html)
    assert list(tabs) == ["CPU", "CUDA"]
    assert highlighted(tabs["CPU"]) == ["answer: 42"]
    assert highlighted(tabs["CUDA"]) == ["answer: 43", "done"]
    assert "hello" in tabs["CPU"]  # unclaimed lines are shown too, just not highlighted
    assert warnings() == []


def test_only_the_claims_listed_under_highlight_are_marked_and_every_claim_is_checked(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 42", "done"])

    html = project.render(page(block(body='expect:\n  - "hello"\n  - "done"\nhighlight: ["done"]\n')))
    assert highlighted(output_tabs(html)[0]["CPU"]) == ["done"]
    assert warnings() == []

    unmarked = project.render(page(block(body='expect:\n  - "hello"\n  - "answer: 41"\n')))
    assert highlighted(output_tabs(unmarked)[0]["CPU"]) == []  # no highlight: no marks
    (warning,) = warnings()
    assert "does not print ['answer: 41']" in warning  # but the claim is still checked


def test_recorded_text_is_escaped_never_interpreted(project):
    hostile = [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "**not bold** [not a link](http://example.com) _not em_",
        "&amp; stays &amp;",
    ]
    snippet = project.snippet()
    project.recording(
        snippet,
        "cpu",
        hostile,
        stderr=hostile,
        machine={**MACHINE, "cpu": {"model": "<b>Evil</b> CPU"}, "torch": "<i>3</i>"},
    )
    project.recording(snippet, "cuda", [], status="error", exit_code=1, stderr=hostile)

    html = project.render(page(block(body='expect:\n  - "<script>alert(1)</script>"\n')))

    for tag in ("<script", "<img", "<strong", "<em>", '<a href="http://example.com"', "<b>", "<i>"):
        assert tag not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "**not bold** [not a link](http://example.com) _not em_" in html
    assert "&amp;amp; stays &amp;amp;" in html
    assert "&lt;b&gt;Evil&lt;/b&gt; CPU" in html and "torch &lt;i&gt;3&lt;/i&gt;" in html


# -- tabs without a fresh recording ------------------------------------------------------


def test_missing_cuda_recording_warns_in_strict_mode(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"])

    html = project.render(page(block()), strict=True)

    (warning,) = warnings()
    assert ":3:" in warning
    assert "no CUDA recording" in warning
    assert "python -m recorded --target cuda lesson/x.py" in warning
    assert "This example needs attention" in html  # and the preview shows it on the page


def test_an_earlier_versions_output_stays_labelled_and_warns_for_a_required_target(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["old cpu output 123"], stale=True)
    project.recording(snippet, "cuda", ["old cuda output 456"], ran=SNIPPET.replace("done", "finished"))

    html = project.render(page(block()))

    tabs = output_tabs(html)[0]
    assert "old cpu output 123" in tabs["CPU"] and "old cuda output 456" in tabs["CUDA"]
    assert "recorded with an earlier version of this code (which it does not hold)" in tabs["CPU"]
    # The lines that changed since, one click away: what it ran, then what the page shows.
    assert "<summary>recorded with an earlier version of this code</summary>" in tabs["CUDA"]
    assert '-print("finished")' in tabs["CUDA"] and '+print("done")' in tabs["CUDA"]
    assert "recorded-missing" not in html
    (warning,) = warnings()  # builtin cpu is required; CUDA's only in strict mode
    assert ":3:" in warning and "CPU recording of lesson/x.py is of an earlier version of its code" in warning
    assert "cpu is marked required" in warning


def test_failed_recording_shows_its_status_and_the_end_of_stderr(project, warnings):
    snippet = project.snippet()
    stderr = [f"stderr line {i:02}" for i in range(20)] + ["ZeroDivisionError: division by zero"]
    project.recording(snippet, "cpu", ["hello"], status="error", exit_code=1, stderr=stderr)
    project.recording(snippet, "cuda", ["hello"])

    html = project.render(page(block()))

    cpu = output_tabs(html)[0]["CPU"]
    assert "The last CPU run failed" in cpu
    assert "<code>error</code>" in cpu and "exit code 1" in cpu
    assert "ZeroDivisionError: division by zero" in cpu
    assert "stderr line 19" in cpu and "stderr line 06" in cpu
    assert "stderr line 05" not in cpu  # only the tail
    (warning,) = warnings()
    assert ":3:" in warning and "failed (error)" in warning


# -- what the page claims ------------------------------------------------------------------


def test_claim_a_fresh_recording_does_not_print_warns(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 41"])

    html = project.render(
        page(block(body='expect:\n  - "hello"\n  - "answer: 42"\nhighlight: ["hello", "answer: 42"]\n'))
    )

    assert highlighted(output_tabs(html)[0]["CPU"]) == ["hello"]
    (warning,) = warnings()
    assert ":3:" in warning
    assert "CPU recording of lesson/x.py does not print ['answer: 42']" in warning


# -- blocks that cannot be shown -----------------------------------------------------------


# The same malformed blocks as in checks/test_sybil_parser.py, on purpose: the tests and the site must refuse alike.
@pytest.mark.parametrize(
    "header, body, message",
    [
        ("/// recorded | lesson/nope.py", "", "no such snippet"),
        ("/// recorded | ../x.py", "", "relative path"),
        ("/// recorded | lesson/x.py", "expect: [unclosed\n", "not valid YAML"),
        ("/// recorded | lesson/x.py", 'expects:\n  - "hello"\n', "unknown key(s) ['expects']"),
        ("/// recorded | lesson/x.py", 'expect_on:\n  tpu:\n    - "hello"\n', "unknown target(s) ['tpu']"),
        ("/// recorded | lesson/x.py", 'expect: "hello"\n', "expect must be a list"),
        (
            "/// recorded | lesson/x.py",
            'expect: ["hello"]\nhighlight: ["hi"]\n',
            "['hi'], which is not a claim",
        ),
        ("/// recorded", "", "names no snippet"),
    ],
    ids=[
        "missing-snippet",
        "parent-path",
        "bad-yaml",
        "unknown-key",
        "unknown-target",
        "claims-not-a-list",
        "highlight-not-a-claim",
        "no-path",
    ],
)
def test_malformed_block_warns_with_page_line_and_shows_a_failure(project, warnings, header, body, message):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"])

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
    project.recording(snippet, "cpu", ["hello"])

    # pymdownx.blocks reads indented lines under a header as options and, finding none it
    # knows, drops the whole block without a word.
    project.render(page(block(body='    expect:\n      - "hello"\n')))

    (warning,) = warnings()
    assert ":3:" in warning and "was not read as a block" in warning


def test_two_blocks_on_one_page_get_distinct_tab_ids(project, warnings):
    for name in ("lesson/a.py", "lesson/b.py"):
        snippet = project.snippet(name)
        project.recording(snippet, "cpu", ["hello"])
        project.recording(snippet, "cuda", ["hello on a gpu"])

    html = project.render(page(block("lesson/a.py"), block("lesson/b.py")))

    assert len(output_tabs(html)) == 2
    ids = re.findall(r'<input [^>]*id="([^"]+)"', html)
    assert len(ids) == 4 and len(set(ids)) == 4
    assert sorted(re.findall(r'<label for="([^"]+)"', html)) == sorted(ids)
    names = set(re.findall(r'<input [^>]*name="([^"]+)"', html))
    assert len(names) == 2
    assert warnings() == []


def test_second_block_warnings_name_its_own_line(project, warnings):
    project.recording(project.snippet("lesson/a.py"), "cpu", ["hello"])

    project.render(page(block("lesson/a.py"), block("lesson/nope.py")))

    (warning,) = warnings()
    assert ":8: recorded block:" in warning and "lesson/nope.py" in warning


def test_a_dropped_block_does_not_shift_the_lines_of_later_blocks(project, warnings):
    project.recording(project.snippet(), "cpu", ["hello"])

    project.render(page(block(body='    expect:\n      - "hello"\n'), block("lesson/nope.py")))

    assert sorted(warnings()) == [
        f"(page):10: recorded block: 'lesson/nope.py': no such snippet in {project.store.snippets_dir}.",
        (
            "(page):3: `/// recorded | lesson/x.py` was not read as a block. Write its claims unindented "
            "between the header and the closing `///` line, with nothing after the snippet path on the header."
        ),
    ]


@pytest.mark.parametrize(
    "text",
    [
        '!!! note\n\n    /// recorded | lesson/x.py\n    expect:\n      - "hello"\n    ///\n',
        " /// recorded | lesson/x.py\n ///\n",
    ],
    ids=["in-an-admonition", "indented"],
)
def test_a_block_the_tests_cannot_see_is_reported(project, warnings, text):
    project.recording(project.snippet(), "cpu", ["hello"])

    html = project.render(page(text))

    assert "tabbed-set" in html  # still shown, but its claims would go untested
    (warning,) = warnings()
    assert "lesson/x.py" in warning and "indented or nested inside another block" in warning


def test_blank_lines_at_the_start_of_the_output_are_kept_and_do_not_shift_the_highlight(project):
    project.recording(project.snippet(), "cpu", ["", "", "hello", "", "world", ""])

    html = project.render(
        page(block(body='expect:\n  - "hello"\n  - "world"\nhighlight: ["hello", "world"]\n'))
    )

    cpu = output_tabs(html)[0]["CPU"]
    assert highlighted(cpu) == ["hello", "world"]
    assert "<code>\n\n" in cpu


def test_the_recordings_page_has_a_table_per_lesson_under_its_title(project, warnings):
    project.lesson("zeta", "Lesson 8: Zeta", ["zeta.md"])
    for name in ("alpha/01_a.py", "zeta/01_z.py"):
        project.recording(project.snippet(name), "cpu", ["hello"])

    html = project.render("# Recordings\n\n/// recordings\n///\n")

    headings = re.findall(r'<h2 id="([^"]+)">([^<]+)<', html)  # then the permalink
    assert headings == [
        ("lesson-zeta", "Lesson 8: Zeta"),
        ("lesson-alpha", "alpha"),
        ("machines", "Machines"),
    ]
    tables = re.findall(r"<table>.*?</table>", html, re.DOTALL)
    assert "<code>zeta/<wbr />01_<wbr />z.py</code>" in tables[0]  # a name breaks after / and _ only
    tables = [table.replace("<wbr />", "") for table in tables]
    assert len(tables) == 2 and "zeta/01_z.py" in tables[0] and "alpha/01_a.py" in tables[1]
    assert "2 recordings, target CPU<" in html  # each machine says which tabs it recorded
    assert warnings() == []


# -- outputs alike on every machine, emulated targets, the busy figure --------------------

#: Three kinds of machine: a native one, the same machine limited (emulated), another one.


@pytest.fixture
def three(project, monkeypatch) -> Project:
    project.targets(*THREE)
    # This machine is none of these made-up kinds: only a required one must be fresh here.
    monkeypatch.setattr(machines, "targets_here", lambda targets: [])
    return project


def once(html: str) -> str:
    """The single output shown for a snippet that printed alike everywhere."""
    (found,) = re.findall(r'<div class="recorded-once">(.*?)</div>(?=</div>|$)', html, re.DOTALL)
    return found


def test_output_alike_on_every_machine_is_shown_once_naming_each_machine(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 42", "done"])
    project.recording(
        snippet,
        "cuda",
        ["hello", "answer: 42", "done"],
        machine={**OTHER_MACHINE, "gpu": {"name": "Test GPU", "capability": "9.0", "memory_gib": 80}},
    )

    html = project.render(
        page(block(body='expect:\n  - "answer: ..."\nexpect_on:\n  cuda:\n    - "done"\n' + HIGHLIGHT_BOTH))
    )

    assert output_tabs(html) == [] and "tabbed-set" not in html
    shown = once(html)
    assert shown.count("answer: 42") == 1
    assert highlighted(shown) == ["answer: 42", "done"]  # every target's claims
    (line,) = re.findall(r'<p class="recorded-provenance">(.*?)</p>', shown)
    # Alike everywhere, it says nothing about any one machine: the count, linked to them all.
    assert re.sub(r"<[^>]+>", "", line) == "Printed alike on 2 machines."
    assert line.count('href="../recordings/#machines"') == 1
    assert warnings() == []


def test_a_stale_required_target_still_warns_when_the_others_are_shown_once(three, warnings):
    snippet = three.snippet()
    three.recording(snippet, "big", ["old"], stale=True)
    three.recording(snippet, "big-as-small", ["hello"])
    three.recording(snippet, "other", ["hello"], machine=OTHER_MACHINE)

    html = three.render(page(block()))

    assert "old" in output_tabs(html)[0]["Big CPU"] and "recorded-once" not in html  # not alike: tabs
    (warning,) = warnings()
    assert ":3:" in warning and "Big CPU recording of lesson/x.py is of an earlier version" in warning


@pytest.mark.parametrize(
    "second",
    [
        {"stdout": ["hello", "answer: 41"]},
        {"stdout": ["hello", "answer: 42"], "stderr": ["a warning"]},
        {"stdout": ["hello", "answer: 42"], "status": "error", "exit_code": 1},
    ],
    ids=["other-stdout", "other-stderr", "failed"],
)
def test_outputs_that_differ_or_fail_stay_in_tabs(project, second):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello", "answer: 42"])
    project.recording(snippet, "cuda", **second)

    html = project.render(page(block()))

    assert list(output_tabs(html)[0]) == ["CPU", "CUDA"]
    assert "recorded-once" not in html


def test_an_emulated_recording_from_another_machine_than_its_host_is_reported(three, warnings):
    snippet = three.snippet()
    three.recording(snippet, "big", ["answer: 42"])
    three.recording(snippet, "big-as-small", ["answer: 7"], machine=OTHER_MACHINE)

    html = three.render(page(block()))

    (box,) = re.findall(r'<div class="admonition failure recorded-problems">(.*?)</div>', html)
    assert "was made on another machine" in box and "Other CPU 100" in box
    (warning,) = warnings()
    assert "Big CPU limited recording of lesson/x.py was made on another machine" in warning
    assert "'Test CPU 9000' != 'Other CPU 100'" in warning


def test_no_busy_figure_no_mention(project):
    project.recording(project.snippet(), "cpu", ["hello"])

    assert "other load" not in project.render(page(block()))


# -- the machine table ----------------------------------------------------------------------

TABLE_PAGE = "# What changes\n\n/// machine-table\n///\n"


def table_rows(html: str) -> list[list[str]]:
    """The machine table's body, each row's cells as text (links and tags dropped)."""
    (body,) = re.findall(r"<tbody>(.*?)</tbody>", html, re.DOTALL)
    return [
        [
            " ".join(re.sub(r"<[^>]+>", " ", cell).split())
            for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.DOTALL)
        ]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.DOTALL)
    ]


@pytest.mark.parametrize(
    "line, verdict",
    [
        ("bf16 vs fp32 here: faster", ("bf16 vs fp32 here", "faster")),
        ("A/A, float32 vs float32 here: within noise", ("A/A, float32 vs float32 here", "within noise")),
        ("  float32: 1 + 1e-8 == 1: True", ("float32: 1 + 1e-8 == 1", "True")),
        ("CPU has AMX: False", ("CPU has AMX", "False")),
        ("float32: 12.7 ms", None),
        ("speed: fast", None),
        ("ok: true", None),
        ("True", None),
        (": True", None),
        ("faster", None),
        ("result ... here: True", None),
    ],
)
def test_a_verdict_line_ends_in_a_verdict_word_after_its_last_colon(line, verdict):
    from recorded.model.lines import verdict as read

    assert read(line) == verdict


def test_the_machine_table_sets_each_verdict_line_beside_each_target(three, warnings):
    counts = three.snippet("lesson/01_count.py", SNIPPET.replace('"done"', '"counted: True"'))
    timed = three.snippet("lesson/02_time.py", SNIPPET.replace('"done"', '"fast here: faster"'))
    three.recording(counts, "big", ["counted: True"])
    three.recording(counts, "big-as-small", ["counted: True"])
    three.recording(timed, "big", ["A/A: within noise", "fast here: faster"])
    three.recording(timed, "big-as-small", ["A/A: within noise", "fast here: slower"], stale=True)
    three.recording(timed, "other", ["A/A: within noise", "fast here: slower"], machine=OTHER_MACHINE)
    three.page(
        "lesson.md",
        "# The lesson\n\n## Counting\n\n/// recorded | lesson/01_count.py\n///\n\n"
        "## Timing `it`\n\n/// recorded | lesson/02_time.py\nexpect_on:\n  other:\n"
        '    - "fast here: slower"\n    - "claimed only: True"\n///\n',
    )

    html = three.render(TABLE_PAGE)

    (caption,) = re.findall(r"<caption>(.*?)</caption>", html)
    assert caption.startswith("lesson: each verdict line")
    head = re.findall(r'<th scope="col">([^<]*)</th>', html)
    assert head[1:4] == ["Big CPU", "Big CPU limited", "Other CPU"]
    assert table_rows(html) == [
        ["counted The lesson › Counting", "True", "True", "not recorded yet", "no"],
        [
            "A/A The lesson › Timing it",
            "within noise 1 of 1 run",
            "within noise 1 of 1 run earlier code",
            "within noise 1 of 1 run",
            "no",
        ],
        [
            "fast here The lesson › Timing it",
            "faster 1 of 1 run",
            "slower 1 of 1 run earlier code",
            "slower 1 of 1 run",
            "yes",
        ],
        ["claimed only The lesson › Timing it", "not printed", "not printed", "not printed", "–"],
    ]
    assert (
        '<td class="verdict-value verdict-slower verdict-earlier" data-column="Big CPU limited">slower'
        in html
    )
    # Each cell names its column, which a phone shows beside the value (a row is a list there).
    assert re.findall(r'<td [^>]*data-column="([^"]*)"', html) == head[1:] * 4
    assert re.search(
        r'<th scope="row"><code>fast here</code><br />\s*<a class="verdict-where" '
        r'href="lesson.md#lesson-02-time">The lesson › Timing it</a></th>',
        html,
    )
    assert (
        '<td class="verdict-value verdict-faster" data-column="Big CPU">faster<br />\n'
        '<span class="verdict-runs">1 of 1 run</span></td>' in html
    )
    assert warnings() == []


def test_the_machine_table_pairs_a_repeated_label_by_its_place_as_compare_does(three):
    snippet = three.snippet("lesson/01_twice.py", SNIPPET.replace('"done"', '"fast here: faster"'))
    printed = {
        "big": ["fast here: faster", "fast here: slower"],
        "other": ["fast here: slower", "fast here: slower"],
    }
    three.recording(snippet, "big", printed["big"])
    three.recording(snippet, "other", printed["other"], machine=OTHER_MACHINE)
    three.page("lesson.md", "# L\n\n/// recorded | lesson/01_twice.py\n///\n")

    rows = table_rows(three.render(TABLE_PAGE))

    # --compare pairs lines by (kind, label, how many times the label came before): so does the table.
    pairs = {t: lines.parse(out) for t, out in printed.items()}
    assert (
        list(pairs["big"])
        == list(pairs["other"])
        == [("verdict", "fast here", 0), ("verdict", "fast here", 1)]
    )
    assert [row[0] for row in rows] == ["fast here L", "fast here (2) L"]
    assert [row[1].split()[0] for row in rows] == [line.value for line in pairs["big"].values()]
    assert [row[3].split()[0] for row in rows] == [line.value for line in pairs["other"].values()]
    assert [row[-1] for row in rows] == ["yes", "no"]


def test_the_machine_table_names_each_target_machine_and_its_emulation(three):
    snippet = three.snippet()
    three.recording(snippet, "big", ["x: True"])
    three.page("lesson.md", "# L\n\n/// recorded | lesson/x.py\n///\n")

    html = three.render(TABLE_PAGE)

    (machines,) = re.findall(r'<h2 id="the-machines">.*?<ul>(.*?)</ul>', html, re.DOTALL)
    assert (
        "Big CPU: </strong><span>a big CPU as it is. Recorded on Test CPU 9000 (AVX2), 4 cores, torch 2.13.0+cpu."
        in machines
    )
    assert (
        "the big CPU limited to small instructions. Not recorded yet on this kind of machine. "
        "The same machine as Big CPU, with one thing changed: LIMIT_ISA=SMALL."
    ) in machines


def test_the_machine_table_links_relative_to_the_page_it_is_on(three):
    snippet = three.snippet()
    three.recording(snippet, "big", ["x: True"])
    three.page("part/one.md", "# L\n\n/// recorded | lesson/x.py\n///\n")
    three.page("about/machines.md", TABLE_PAGE)

    names, configs = site_extensions()
    configs["recorded.pages.extension"] = {"root": str(three.root)}
    md = markdown.Markdown(extensions=names, extension_configs=configs)
    # MkDocs hands the page's file to this treeprocessor; the table reads its place from it.
    relpath = markdown.treeprocessors.Treeprocessor(md)
    relpath.run = lambda root: None
    relpath.file = type("File", (), {"src_uri": "about/machines.md"})()
    md.treeprocessors.register(relpath, "relpath", 0)
    html = md.convert(TABLE_PAGE)

    assert 'href="../part/one.md#lesson-x"' in html


def test_provenance_line_names_the_machine_torch_date_and_run_time_and_links_to_the_machine(project):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"], duration_s=2.5)

    html = project.render(page(block()))

    (provenance,) = re.findall(r'<p class="recorded-provenance">(.*?)</p>', html)
    words, link = provenance.split(' · <a href="', 1)
    assert words == "Test CPU 9000 (AVX2), 4 cores · torch 2.13.0 · 2026-01-02 · 2.5 s"
    assert re.fullmatch(r'\.\./recordings/#machine-[0-9a-f]{10}">the machine</a>', link)
    assert len(re.sub(r"<[^>]+>", "", provenance).split()) <= 20


def test_a_kind_that_recorded_nothing_anywhere_gets_no_tab_and_no_mention(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"])

    html = project.render(page(block()))

    assert list(output_tabs(html)[0]) == ["CPU"]  # the one kind that recorded it, named
    assert "CUDA" not in html and "Not recorded yet" not in html
    assert warnings() == []


def test_a_kind_that_recorded_other_examples_is_one_muted_line_without_commands(project, warnings):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"])
    project.recording(project.snippet("lesson/other.py"), "cuda", ["hi"])

    html = project.render(page(block()))

    (line,) = re.findall(r'<p class="recorded-provenance recorded-missing">(.*?)</p>', html)
    assert line == "Not recorded yet on CUDA."
    assert "record_runs.py" not in html and "--target" not in html
    assert warnings() == []


def test_missing_cpu_recording_always_warns_and_the_page_says_so(project, warnings):
    project.snippet()

    html = project.render(page(block()))

    (warning,) = warnings()
    assert ":3:" in warning and "no CPU recording" in warning
    assert "python -m recorded --target cpu lesson/x.py" in warning
    (box,) = re.findall(r'<div class="admonition failure recorded-problems">(.*?)</div>', html)
    assert "This example needs attention" in box and "no CPU recording" in box


def test_a_snippet_needing_cuda_opens_on_its_gpu_and_says_nothing_of_the_cpu(project, warnings):
    snippet = project.snippet("lesson/gpu.py", CUDA_SNIPPET, requires=["cuda"])
    project.recording(snippet, "cuda", ["on the gpu"])
    project.recording(project.snippet("lesson/cpu.py"), "cpu", ["hi"])

    html = project.render(
        page(block("lesson/gpu.py", 'expect:\n  - "on the gpu"\nhighlight: ["on the gpu"]\n')), strict=True
    )

    assert "Not applicable" not in html and "recorded-missing" not in html
    assert re.findall(r'<span class="hll">([^<\n]*)', html) == ["on the gpu"]
    assert warnings() == []


def test_unreadable_recording_warns_names_the_file_and_shows_a_box(project, warnings):
    snippet = project.snippet()
    path = project.store.path(snippet.name, "cpu")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")

    html = project.render(page(block()))

    assert "recorded-problems" in html and "recordings/cpu/lesson/x.json" in html
    (warning,) = warnings()
    assert ":3:" in warning and "recordings/cpu/lesson/x.json" in warning


def test_targets_without_a_fresh_recording_are_one_line_under_outputs_that_differ(three, warnings):
    snippet = three.snippet()
    three.recording(snippet, "big", ["hello"])
    three.recording(snippet, "other", ["hello, other"], machine=OTHER_MACHINE)
    three.recording(three.snippet("lesson/y.py"), "big-as-small", ["hi"])

    html = three.render(page(block()))

    assert list(output_tabs(html)[0]) == ["Big CPU", "Other CPU"]
    assert "Not recorded yet on Big CPU limited." in html
    assert "record_runs.py" not in html
    assert warnings() == []  # not required, so only the release build insists


def test_output_alike_everywhere_says_nothing_of_the_machines_yet_to_record_it(three, warnings):
    snippet = three.snippet()
    three.recording(snippet, "big", ["hello"])
    three.recording(snippet, "other", ["hello"], machine=OTHER_MACHINE)
    three.recording(three.snippet("lesson/y.py"), "big-as-small", ["hi"])

    html = three.render(page(block(body='expect:\n  - "hello"\n')))

    assert re.search(r"Printed alike on 2 <a [^>]+>machines</a>\.", once(html))
    assert "Not recorded yet" not in html
    assert warnings() == []


def test_an_emulated_tab_names_its_target_on_its_provenance_line(three, warnings):
    snippet = three.snippet()
    three.recording(snippet, "big", ["answer: 42"])
    three.recording(snippet, "big-as-small", ["answer: 7"])
    three.recording(snippet, "other", ["answer: 9"], machine=OTHER_MACHINE)

    html = three.render(page(block()))

    tabs = output_tabs(html)[0]
    assert list(tabs) == ["Big CPU", "Big CPU limited", "Other CPU"]
    (line,) = re.findall(r'<p class="recorded-provenance">(.*?) · <a', tabs["Big CPU limited"])
    assert line.startswith("Big CPU limited: Test CPU 9000")
    assert "Big CPU limited" not in tabs["Big CPU"].split("recorded-provenance")[1]
    assert warnings() == []


def test_a_busy_machine_is_named_on_the_provenance_line_and_a_quiet_one_is_not(project):
    snippet = project.snippet()
    project.recording(snippet, "cpu", ["hello"], busy={"before": 0.031, "after": 0.006, "cpus": 2})
    quiet = project.render(page(block()))
    project.recording(snippet, "cpu", ["hello"], busy={"before": 0.4, "after": 0.006, "cpus": 2})
    busy = project.render(page(block()))

    assert "other load" not in quiet
    (provenance,) = re.findall(r'<p class="recorded-provenance">(.*?) · <a', busy)
    assert provenance.endswith("2.5 s · busy machine, other load 40% before, 1% after")


def test_a_yaml_error_names_the_pages_line_and_shows_it(project, warnings):
    project.recording(project.snippet(), "cpu", ["hello"])

    # line 3: header, 4: expect:, 5: "hello", 6: the badly indented claim
    project.render(page(block(body='expect:\n  - "hello"\n - "done"\n')))

    (warning,) = warnings()
    assert warning.startswith('(page):3: recorded block: its body is not valid YAML at line 6: `- "done"`')
    assert "\n" not in warning


def test_the_target_settings_list_is_the_recorders_schema(project):
    from recorded.config import targets
    from recorded.pages.tables import settings_rows

    html = project.render("/// target-settings\n///\n")

    terms = re.findall(r"<dt><code>([^<]+)</code>", html)
    assert terms == [name for name, _ in settings_rows(targets.SCHEMA)]
    assert "<code>requires.absent</code>" in html and "flags the CPU must not have" in html
    assert "<code>cpu</code>" in html  # a `quoted` word in a description is code
