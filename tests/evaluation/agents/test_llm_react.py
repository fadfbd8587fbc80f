"""Specification of the ReAct loop of `llm` agents, driven by a scripted server through the real sandbox.

Each case scripts the model's replies, runs the tiny mean-of-x query as the harness runs it
(`evaluate_query`: the proxy, the sandbox, the journal record) and checks the exact outcome: what
the model was shown, what the record says and how the hand-in scores.
"""

from __future__ import annotations

import shutil

import pytest
from scibench_testing.llm_tasks import API_KEY, KEY_ENV, MEAN_CODE, MODEL, SUBMIT, llm_options, python, run_llm_query
from scibench_testing.scripted_llm import ScriptedLLM, Turn, usage

from stages.scoring.query.outcomes import Outcome

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, API_KEY)


def test_a_tool_call_its_result_and_submit_hand_in_a_scored_answer(tmp_path):
    with ScriptedLLM([python(MEAN_CODE), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    record = ran.record
    assert (ran.score.outcome, ran.score.pass_rate, record.exit_code, record.answer_text) == (
        Outcome.ANSWERED, 1.0, 0, '{"answer": 2.5}')
    tool_result = server.requests[1].body["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["content"].startswith("exit code 0")
    assert "stdout:\nmean 2.5\n" in tool_result["content"]
    assert [call.role for call in record.usage.calls] == ["agent", "agent"]
    assert (record.tokens, record.usage.total.calls, record.usage.roles["agent"].prompt_tokens) == (240, 2, 200)
    assert (record.agent_limit, record.execution, record.model_reported, record.infra_error) == (
        None, "loop in the harness, persistent kernel per query", MODEL, None)
    assert record.stdout.endswith("scibench-llm stop: submitted\n")


def test_the_models_code_runs_in_one_kernel_whose_state_persists_until_a_cell_hangs(tmp_path):
    script = [python("import time\nvalue = 2.5"), python("print('kept', value)"),
              python("time.sleep(60)"), python("print(value)"), python(MEAN_CODE), SUBMIT]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url) | {"code_timeout_s": 1})
    results = [server.requests[n].body["messages"][-1]["content"] for n in range(2, 5)]
    assert results[0].startswith("exit code 0") and "stdout:\nkept 2.5\n" in results[0]
    assert results[1].startswith("killed after 1 s; the kernel was restarted: variables and imports are gone, "
                                 "files in work/ are kept")
    assert results[2].startswith("exit code 1") and "NameError: name 'value' is not defined" in results[2]
    assert ran.score.outcome == Outcome.ANSWERED and ran.record.answer_text == '{"answer": 2.5}'


def test_a_reply_without_a_tool_call_is_told_to_continue(tmp_path):
    with ScriptedLLM([Turn(content="Let me think."), python(MEAN_CODE), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert ran.score.outcome == Outcome.ANSWERED
    told = server.requests[1].body["messages"][-2:]
    assert told == [{"role": "assistant", "content": "Let me think."},
                    {"role": "user", "content": "No tool was called. Continue with the `python` tool, or call "
                                                "`submit` when you are done."}]


def test_malformed_tool_arguments_are_told_to_the_model_which_goes_on(tmp_path):
    script = [Turn(tool_calls=[("python", '{"code": "print(1)"')]), Turn(tool_calls=[("plot", "{}")]),
              python(MEAN_CODE), SUBMIT]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert ran.score.outcome == Outcome.ANSWERED
    first, second = (server.requests[i].body["messages"][-1]["content"] for i in (1, 2))
    assert first.startswith("error: the arguments of `python` are not a JSON object (")
    assert second == "error: there is no tool `plot`; the tools are `python` and `submit`"


def test_submit_before_an_answer_exists_does_not_count(tmp_path):
    with ScriptedLLM([SUBMIT, python(MEAN_CODE), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert ran.score.outcome == Outcome.ANSWERED and len(server.requests) == 3
    refusal = server.requests[1].body["messages"][-1]["content"]
    assert refusal == "not submitted: work/answer.json cannot be read: No such file or directory"


def test_a_reply_cut_at_max_tokens_stops_the_loop_and_the_state_reached_is_scored(tmp_path):
    script = [python(MEAN_CODE), Turn(content="Now I will", finish_reason="length")]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    record = ran.record
    assert (record.agent_limit, record.infra_error, ran.score.outcome) == ("finish_length", None, Outcome.ANSWERED)
    assert record.usage.calls[-1].finish_reason == "length" and len(server.requests) == 2


def test_missing_usage_is_flagged_and_never_counted_as_zero_cost(tmp_path):
    with ScriptedLLM([Turn(tool_calls=python(MEAN_CODE).tool_calls, usage=None), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, prices={"version": "test", "models": {
            MODEL: {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}}))
    first, second = ran.record.usage.calls
    assert (first.prompt_tokens, first.cost_usd) == (None, None)
    assert first.flags == ["missing_usage", "no_usage_no_cost", "budget_estimated"]
    assert (second.cost_usd, second.flags) == (round((100 * 1.0 + 20 * 2.0) / 1e6, 10), [])
    assert (ran.record.cost_usd, ran.record.tokens) == (None, 120)
    assert ran.record.usage.flags == ["budget_estimated", "missing_usage", "no_usage_no_cost"]
    assert ran.score.outcome == Outcome.ANSWERED


def test_the_api_key_never_enters_the_sandbox(tmp_path):
    probe = f"""
import json, os
key = {API_KEY!r}
seen = [k for k, v in os.environ.items() if key in v]
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for name in ("environ", "cmdline"):
        try:
            if key.encode() in open(f"/proc/{{pid}}/{{name}}", "rb").read():
                seen.append(f"/proc/{{pid}}/{{name}}")
        except OSError:
            pass
for root, dirs, files in os.walk("/llm"):
    seen += [os.path.join(root, f) for f in files if f != "llm.sock"]
json.dump({{"answer": len(seen)}}, open("work/answer.json", "w"))
print(seen, sorted(os.environ))
"""
    with ScriptedLLM([python(probe), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert ran.record.answer_text == '{"answer": 0}'
    assert API_KEY not in server.requests[1].text()
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {API_KEY}"}


def test_the_model_and_generation_settings_are_the_configured_ones_and_the_models_code_reaches_no_model(tmp_path):
    own_call = """
import json, os, socket
reached = []
for path in ("/llm/llm.sock", "/llm"):
    reached.append(os.path.exists(path))
try:
    socket.create_connection(("127.0.0.1", 80), timeout=2)
    reached.append(True)
except OSError:
    reached.append(False)
json.dump({"answer": 2.5}, open("work/answer.json", "w"))
print(reached)
"""
    with ScriptedLLM([python(own_call), Turn(content="hello"), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url))
    assert "stdout:\n[False, False, False]\n" in server.requests[1].body["messages"][-1]["content"]
    forced = server.requests[1].body
    assert {k: forced[k] for k in ("model", "temperature", "max_tokens", "seed")} == {
        "model": MODEL, "temperature": 0, "max_tokens": 512, "seed": 0}
    assert ran.record.usage.total.calls == 3 == len(server.requests)
    assert all(r.body["model"] == MODEL for r in server.requests)


def test_a_call_past_the_token_budget_is_refused_and_the_loop_stops_there(tmp_path):
    script = [Turn(tool_calls=python(MEAN_CODE).tool_calls, usage=usage(prompt=900, completion=200)), SUBMIT]
    with ScriptedLLM(script) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, token_budget=1000))
    record = ran.record
    assert (len(server.requests), record.agent_limit, ran.score.outcome) == (1, "token_budget", Outcome.ANSWERED)
    assert [(c.status, c.refused) for c in record.usage.calls] == [(200, None), (403, "token_budget")]
    assert (record.usage.total.calls, record.tokens) == (1, 1100)


def test_the_turn_bound_stops_the_loop_and_the_state_reached_is_scored(tmp_path):
    with ScriptedLLM([python(MEAN_CODE), python("print(2)"), SUBMIT]) as server:
        ran = run_llm_query(tmp_path, llm_options(server.base_url, max_turns=2))
    assert (len(server.requests), ran.record.agent_limit, ran.score.outcome) == (2, "max_turns", Outcome.ANSWERED)
    assert ran.record.stdout.endswith("scibench-llm stop: max_turns\n")


def test_the_first_model_call_does_not_wait_for_the_kernel_and_a_kernel_that_never_starts_is_an_infra_error(
        tmp_path, monkeypatch):
    import threading

    from stages.sandbox import kernel as kernels
    from stages.sandbox.warm import PoolDied

    asked = threading.Event()
    real = kernels.Kernel

    def slow_start(*args, **kwargs):  # the sandbox starts only once the model has been asked
        assert asked.wait(30), "the first model call waited for the kernel"
        return real(*args, **kwargs)

    def first_turn(request):
        asked.set()
        return python(MEAN_CODE) if len(request.body["messages"]) <= 2 else SUBMIT

    monkeypatch.setattr(kernels, "Kernel", slow_start)
    with ScriptedLLM(first_turn) as server:
        ran = run_llm_query(tmp_path / "slow", llm_options(server.base_url))
    assert (ran.score.outcome, ran.record.answer_text, ran.record.infra_error) == (
        Outcome.ANSWERED, '{"answer": 2.5}', None)

    def broken(*args, **kwargs):
        raise PoolDied("the zygote did not start")

    monkeypatch.setattr(kernels, "Kernel", broken)
    with ScriptedLLM([python(MEAN_CODE), SUBMIT]) as server:
        ran = run_llm_query(tmp_path / "broken", llm_options(server.base_url))
    assert ran.record.infra_error == "the kernel did not start: the zygote did not start"
    assert ran.score.outcome == Outcome.INFRA_ERROR and ran.record.answer_text is None
