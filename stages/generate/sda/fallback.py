"""The optional pinned LLM fallback for open-ended answers the strict check rejects, counted apart.

With params.yaml `judge.model` set, `python -m stages.generate.sda.attempts AGENT --llm-fallback`
asks that model, for every OEQ response that parsed but missed (outside the relative tolerance, or
a name that differs), whether it states the same answer as the reference: a naming variant of the
same variable or level, or a number that only differs by rounding the question allows. The judge
is pinned (its model, temperature 0 and seed, as `judge@<agent>` pins it) and sees the question,
the reference answer and the response, never the agent's code or data. Its verdicts never change
the strict accuracy; the report adds `fallback`: how many were asked and accepted, the accuracy
with them, the judge's infrastructure errors and its identity. A reply other than EQUIVALENT or
DIFFERENT counts as different.
"""

from __future__ import annotations

import httpx

from stages.evaluation.agents.llm.upstream import send
from stages.generate.sda.evaluate import judged
from stages.params import JudgeParams
from stages.scoring.query.reasonableness import endpoint

SYSTEM = ("You check answers to data-analysis questions against a reference answer. The response is"
          " equivalent when it names the same variable or level (any spelling or casing) or gives the same"
          " number up to rounding within the stated relative tolerance. Reply with exactly one word:"
          " EQUIVALENT or DIFFERENT.")


def messages(instance: dict, response: object) -> list[dict]:
    """What the judge is shown about one response."""
    tolerance = f" (relative tolerance {instance['tolerance']:g})" if instance["answer_kind"] == "number" else ""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {instance['question']}\nReference answer: {instance['answer']}"
                                        f"{tolerance}\nResponse: {response}"}]


def verdict(client: httpx.Client, settings: JudgeParams, instance: dict, response: object) -> str:
    """`equivalent`, `different`, or `infra` (the endpoint failed: neither)."""
    request = {"model": settings.model, "messages": messages(instance, response), "temperature": 0.0,
               "max_tokens": settings.max_tokens}
    if settings.seed is not None:
        request["seed"] = settings.seed
    reply = send(client, endpoint(settings), request)
    if reply.infra_error is not None or reply.status != 200 or not reply.body:
        return "infra"
    try:
        text = str(reply.body["choices"][0]["message"]["content"] or "")
    except (KeyError, IndexError, TypeError):
        return "different"
    return "equivalent" if text.strip().strip(".").upper() == "EQUIVALENT" else "different"


def fallback(instances: list[dict], responses: dict[tuple[str, str], object], settings: JudgeParams) -> dict:
    """Ask the judge about every parsed OEQ miss; the counts, kept apart from the strict accuracy."""
    by_id = {instance["instance_id"]: instance for instance in instances}
    missed = [(by_id[i], value) for (i, form), value in sorted(responses.items(), key=lambda item: item[0])
              if form == "oeq" and value is not None and not judged(by_id[i], value, "oeq")["correct"]]
    strict = sum(judged(by_id[i], value, "oeq")["correct"] for (i, form), value in responses.items()
                 if form == "oeq")
    with httpx.Client() as client:
        verdicts = [verdict(client, settings, instance, value) for instance, value in missed]
    accepted = verdicts.count("equivalent")
    n = sum(form == "oeq" for _, form in responses)
    return {"model": settings.model, "seed": settings.seed, "asked": len(missed), "accepted": accepted,
            "infra_errors": verdicts.count("infra"),
            "accuracy_strict": round(strict / n, 4) if n else None,
            "accuracy_with_fallback": round((strict + accepted) / n, 4) if n else None}
