"""Transcript pages (stages/report/transcript_pages.py): a react run's queries and events as static HTML.

The index page has a row per query linked to its page; a query's page shows its grading, prompt and
every event in order; whatever the agent wrote is escaped text, never an element; a query without
a transcript says why; the same runs give the same bytes. In Chromium the same run reads the same
through `inspect view` and through the pages opened from the agent's index.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, SUBMIT, python
from scibench_testing.scripted_llm import Turn
from scibench_testing.transcripts import QUERY, chromium, inspect_view, react_runs

from stages.evaluation.transcript import CodeRun, ProgramRun, Stop, Transcript
from stages.report.inspect_logs import eval_log, write_log
from stages.report.transcript_pages import UnsafeNameError, write_pages
from stages.scoring.aggregate.suite import COLUMNS

pytestmark = [pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed"),
              pytest.mark.usefixtures("llm_key")]
BLOCKS = {"h1", "h2", "h3", "p", "pre", "td", "caption"}
REPLY = '<script>alert("reply")</script>'
PRINTED = "<img src=x onerror=alert(1)>"
HOSTILE_CODE = f"print({PRINTED!r})  # <script>document.title = 'args'</script>"


class Page(HTMLParser):
    """A page's start tags, links and the text of each block element (h1-h3, p, pre, td, caption) in order."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.links: list[str] = []
        self.blocks: list[tuple[str, str]] = []
        self._open: list[list[str]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs)["href"])
        if tag in BLOCKS:
            self._open.append([tag, ""])

    def handle_data(self, data):
        for block in self._open:
            block[1] += data

    def handle_endtag(self, tag):
        if self._open and self._open[-1][0] == tag:
            self.blocks.append(tuple(self._open.pop()))


def events(page: str) -> list[list[tuple[str, str]]]:
    """Each event's blocks, in the page's order."""
    return [Page(chunk).blocks for chunk in re.findall(r'<li id="event-\d+">(.*?)</li>', page, re.S)]


@pytest.fixture(scope="module")
def mean_run(tmp_path_factory):
    """The react run that computes the mean with one code run and submits."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, API_KEY)
        return react_runs(tmp_path_factory.mktemp("mean"), [python(MEAN_CODE), SUBMIT])


def test_the_index_page_has_a_row_per_query_linked_to_its_page(mean_run, tmp_path):
    index = write_pages(mean_run, tmp_path)
    page = Page(index.read_text())
    row = mean_run.scores.iloc[0]
    assert index == tmp_path / "react.html" and sorted(p.name for p in (tmp_path / "react").iterdir()) == ["q000.html"]
    assert [text for tag, text in page.blocks if tag == "td"] == [
        "q000", "mean-x", "answered", "1.000", "1.000", "240", f"{row.wall_seconds:.2f}", "—"]
    assert page.links == ["../index.html", "react/q000.html"]


def test_the_index_sorts_runs_by_task_query_id_then_epoch(mean_run, tmp_path):
    rows = [{"task_id": task, "query_id": query, "outcome": "answered", "q": 0.5, "reward": 0.25, "tokens": 10,
             "wall_seconds": 1.0, "agent_limit": limit, "epoch": epoch}
            for task, query, limit, epoch in [("t2", "a1", None, 0), ("t1", "b2", "max_turns", 0),
                                              ("t1", "b1", None, 1), ("t1", "b1", None, 0)]]
    runs = dataclasses.replace(mean_run, prompts={row["query_id"]: "p" for row in rows}, records={}, transcripts={},
                               scores=pd.DataFrame(rows, columns=[*COLUMNS, "epoch"]))
    page = Page(write_pages(runs, tmp_path).read_text())
    cells = [text for tag, text in page.blocks if tag == "td"]
    assert [cells[i:i + 8] for i in range(0, len(cells), 8)] == [
        ["b1", "t1", "answered", "0.250", "0.500", "10", "1.00", "—"],
        ["b1, epoch 1", "t1", "answered", "0.250", "0.500", "10", "1.00", "—"],
        ["b2", "t1", "answered", "0.250", "0.500", "10", "1.00", "max_turns"],
        ["a1", "t2", "answered", "0.250", "0.500", "10", "1.00", "—"]]
    assert page.links == ["../index.html", "react/b1.html", "react/b1-e1.html", "react/b2.html", "react/a1.html"]
    assert sorted(path.name for path in (tmp_path / "react").iterdir()) == ["a1.html", "b1-e1.html", "b1.html",
                                                                            "b2.html"]


def test_the_query_page_shows_grading_prompt_every_event_in_order_and_the_hand_in(mean_run, tmp_path):
    write_pages(mean_run, tmp_path)
    html = (tmp_path / "react" / "q000.html").read_text()
    page, transcript, record = Page(html), mean_run.transcripts[QUERY], mean_run.records[QUERY]
    first, code, second, stop = transcript.events
    cells = [text for tag, text in page.blocks if tag == "td"]
    row = mean_run.scores.iloc[0]
    assert cells == ["answered", "1.000", "1.000", "—", "240", "—", f"{row.wall_seconds:.2f}",  # the grading
                     "2", "200", "40", "0", "0", "—", f"{record.usage.total.seconds:.3f}",  # the usage totals
                     "answer.json", transcript.handed_in["answer.json"]]
    assert [text for tag, text in page.blocks if tag == "h2"] == ["Grading", "Prompt", "Transcript", "Handed in"]
    assert ("pre", mean_run.prompts[QUERY]) in page.blocks
    system, task = first.sent
    assert system["content"].startswith("You are a careful scientist")
    assert events(html) == [
        [("h3", "Model call (agent)"), ("p", "sent: system"), ("pre", system["content"]), ("p", "sent: user"),
         ("pre", task["content"]), ("p", "reply: empty"), ("p", "reply's tool call python (call_1_0): code"),
         ("pre", MEAN_CODE), ("p", "finish reason tool_calls")],
        [("h3", "Code run"), ("p", f"exit 0; {code.seconds:g} s; limits hit: none; kernel not restarted"),
         ("p", "code"), ("pre", MEAN_CODE), ("p", "stdout"), ("pre", "mean 2.5\n"), ("p", "stderr: empty")],
        [("h3", "Model call (agent)"), ("p", "sent: assistant: empty"),
         ("p", "sent: assistant's tool call python (call_1_0): code"), ("pre", MEAN_CODE),
         ("p", "sent: tool, the result of call_1_0"), ("pre", second.sent[1]["content"]), ("p", "reply: empty"),
         ("p", "reply's tool call submit (call_2_0): arguments"), ("pre", "{}"), ("p", "finish reason tool_calls")],
        [("h3", "Stop: submitted")]]
    assert "mean 2.5" in second.sent[1]["content"] and stop.reason == "submitted"
    assert page.links == ["../react.html", "../../index.html"]


def test_agent_output_is_escaped_text_and_creates_no_element(tmp_path):
    runs = react_runs(tmp_path, [Turn(content=REPLY, tool_calls=[("python", json.dumps({"code": HOSTILE_CODE}))]),
                                 SUBMIT])
    write_pages(runs, tmp_path / "pages")
    html = (tmp_path / "pages" / "react" / "q000.html").read_text()
    page = Page(html)
    assert "&lt;script&gt;alert(&quot;reply&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert {"script", "img"}.isdisjoint(page.tags) and "<script" not in html and "<img" not in html
    assert ("pre", REPLY) in page.blocks  # the reply
    assert ("pre", HOSTILE_CODE) in page.blocks  # the tool call's arguments (and the code run's code)
    assert ("pre", PRINTED + "\n") in page.blocks  # what the code printed


def test_a_program_run_shows_its_exit_and_output_tails(mean_run, tmp_path):
    transcript = Transcript(query_id=QUERY, agent="react", handed_in={"answer.json": None}, events=[
        ProgramRun(exit_code=None, seconds=2.5, stdout="<b>out</b>", stderr="", limits_hit=["wall"]),
        CodeRun(code="1", stdout="", stderr="boom", exit_code=1, seconds=0.25, restarted=True, limits_hit=["memory"]),
        Stop(reason="error", detail="<i>why</i>")])
    write_pages(dataclasses.replace(mean_run, transcripts={QUERY: transcript}), tmp_path)
    html = (tmp_path / "react" / "q000.html").read_text()
    assert events(html) == [
        [("h3", "Program run"), ("p", "exit —; 2.5 s; limits hit: wall"), ("p", "stdout (tail)"), ("pre", "<b>out</b>"),
         ("p", "stderr (tail): empty")],
        [("h3", "Code run"), ("p", "exit 1; 0.25 s; limits hit: memory; kernel restarted"), ("p", "code"),
         ("pre", "1"), ("p", "stdout: empty"), ("p", "stderr"), ("pre", "boom")],
        [("h3", "Stop: error"), ("p", "detail"), ("pre", "<i>why</i>")]]
    assert [text for tag, text in Page(html).blocks if tag == "td"][-2:] == ["answer.json", "not taken"]


@pytest.mark.parametrize(("change", "reason"), [
    ({"transcript_sha256": None}, "its record names none: the agent keeps no transcript (it sees private files, "
                                  "as the oracle does), or the record predates transcripts."),
    ({"transcript_sha256": None, "reused_from": "verify run"},
     "its hand-in was reused from verify run: nothing ran, so nothing was recorded."),
    (None, "the journal holds no record of this query under the agent's current configuration."),
])
def test_a_query_without_a_transcript_says_so_and_why(mean_run, tmp_path, change, reason):
    record = mean_run.records[QUERY]
    records = {} if change is None else {QUERY: record.model_copy(update=change)}
    write_pages(dataclasses.replace(mean_run, records=records, transcripts={}), tmp_path)
    page = Page((tmp_path / "react" / "q000.html").read_text())
    assert ("p", f"No transcript: {reason}") in page.blocks
    assert [text for tag, text in page.blocks if tag == "h2"] == ["Grading", "Prompt", "Transcript"]
    assert "li" not in page.tags


def test_the_same_runs_give_the_same_bytes_and_old_pages_go(mean_run, tmp_path):
    write_pages(mean_run, tmp_path / "one")
    (tmp_path / "two" / "react").mkdir(parents=True)
    (tmp_path / "two" / "react" / "q999.html").write_text("an old page")
    write_pages(mean_run, tmp_path / "two")
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file())
    assert files == [Path("react/q000.html"), Path("react.html")]
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file())
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name


def test_the_gold_is_not_in_the_pages_of_an_agent_that_missed_it(tmp_path):
    wrong = "open('work/answer.json', 'w').write('{\"answer\": 7}')"
    runs = react_runs(tmp_path, [python(wrong), SUBMIT])
    write_pages(runs, tmp_path / "pages")
    assert runs.scores.iloc[0].reward == 0.0
    assert not [p for p in (tmp_path / "pages").rglob("*.html") if "2.5" in p.read_text()]


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "../x", "a/b", "a b", "", "q<1>"])
def test_a_name_that_cannot_name_a_file_is_refused_before_anything_is_written(mean_run, tmp_path, name):
    with pytest.raises(UnsafeNameError, match="agent .* cannot name a file"):
        write_pages(dataclasses.replace(mean_run, agent=name), tmp_path / "agent")
    scores = mean_run.scores.assign(query_id=name)
    with pytest.raises(UnsafeNameError, match="query id .* cannot name a file"):
        write_pages(dataclasses.replace(mean_run, scores=scores, prompts={name: "p"}), tmp_path / "query")
    assert not (tmp_path / "agent").exists() and not (tmp_path / "query").exists()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed: the pages were not opened")
def test_inspect_view_and_the_pages_show_the_same_react_run(mean_run, tmp_path):
    from playwright.sync_api import sync_playwright

    log = write_log(eval_log(mean_run, "test"), tmp_path / "inspect", "react")
    index = write_pages(mean_run, tmp_path / "transcripts")
    with inspect_view(log.parent) as (url, _), sync_playwright() as playwright, chromium(playwright) as browser:
        viewer = browser.new_page(viewport={"width": 1400, "height": 900})
        viewer.goto(f"{url}/#/logs/{log.name}", wait_until="networkidle")
        viewer.get_by_text(QUERY, exact=True).first.click()
        viewer.get_by_text("mean 2.5").first.wait_for(timeout=30_000)
        in_inspect = viewer.inner_text("body")
        pages = browser.new_page(viewport={"width": 1400, "height": 900})
        pages.goto(index.as_uri(), wait_until="load")
        pages.get_by_role("link", name=QUERY, exact=True).click()
        pages.wait_for_url("**/react/q000.html")
        on_page, address = pages.inner_text("body"), pages.url
    assert address == (tmp_path / "transcripts" / "react" / "q000.html").as_uri()
    for shown in (in_inspect, on_page):
        assert "mean 2.5" in shown and "submit" in shown
