"""The report's tables of the generated benchmark: SDA-Synth and SDA-Real instances, the floors' gate, the loop.

From what the `generate` and `generated_validity` stages wrote (`inputs.load_generated`); a benchmark
not built is left out.
"""

from __future__ import annotations

from stages.report.formatting import MISSING, fmt_count, fmt_number
from stages.report.tables import Table

NAMES = {"sda": "SDA-Synth", "sda_real": "SDA-Real"}


def _floors(gate: dict, benchmark: str, form: str) -> str:
    figures = gate.get("floors", {}).get(benchmark, {})
    if not figures:
        return MISSING
    best = max(figures.values(), key=lambda by_form: by_form[form]["accuracy"])[form]
    return " / ".join(fmt_number(best[key], 3) for key in ("accuracy", "chance", "bound"))


def instances_table(generated: dict) -> Table:
    """Per generated benchmark: instances, splits, rejections, and the best data-free floor per format."""
    gate = generated.get("floors", {})
    rows = []
    for key in ("sda", "sda_real"):
        summary = generated.get(key)
        if summary is None:
            continue
        rejected = {reason: count for reason, count in summary["rejected"].items() if reason != "over_quota"}
        top = ", ".join(f"{reason} {count}" for reason, count in
                        sorted(rejected.items(), key=lambda item: (-item[1], item[0]))[:3])
        splits = summary.get("splits", {})
        rows.append((NAMES[key], fmt_count(summary["instances"]), fmt_count(summary["datasets"]),
                     fmt_count(splits.get("train")), fmt_count(splits.get("test")),
                     fmt_count(sum(rejected.values())), top, fmt_count(summary["rejected"].get("over_quota", 0)),
                     _floors(gate, key, "mcq"), _floors(gate, key, "oeq")))
    failures = len(gate.get("failures", []))
    verdict = "" if not gate else (" No floor beats chance." if not failures else f" {failures} floor gate(s) FAILED.")
    return Table("generated", "Generated instances",
                 "SDA-style instances (OEQ and MCQ versions of each) on the synthetic scenarios and on the "
                 "repositories; candidates the verifier rejected, by reason, and verified ones beyond the quota "
                 "per (domain, task type); the best of the data-free floors on the test split as accuracy / "
                 f"chance / the gate's bound.{verdict}",
                 ("benchmark", "instances", "datasets", "train", "test", "rejected", "most rejected", "over quota",
                  "best floor, MCQ", "best floor, OEQ"), tuple(rows))


def loop_table(report: dict) -> Table:
    """The AutoSciBench loop with and without experience cards: kept tasks and solver success by round."""
    rows = []
    for key, label in (("with_cards", "with cards"), ("without_cards", "without cards")):
        run = report[key]
        kept, success = run["kept"], run["solver_success_by_round"]
        rounds = ", ".join(f"{r}: {fmt_number(v, 2)}" for r, v in success.items())
        rows.append((label, fmt_count(run["concepts"]), *(fmt_count(kept[level]) for level in
                                                          ("easy", "moderate", "hard", "none")),
                     fmt_count(sum(run.get("refused_by_floors", {}).values())), rounds))
    return Table("autoscibench", "AutoSciBench loop",
                 f"Generator {report.get('generator', {}).get('name', MISSING)}; one task kept per concept, the "
                 "hardest verifiable one; tasks a data-free floor passed are refused; solver success is the share "
                 "of trials solved, by round.",
                 ("run", "concepts", "easy", "moderate", "hard", "none kept", "refused by floors",
                  "solver success by round"), tuple(rows))


def generated_tables(generated: dict) -> list[Table]:
    """The generated benchmark's tables, in page order (none when nothing was generated)."""
    tables = [instances_table(generated)] if "sda" in generated or "sda_real" in generated else []
    return tables + ([loop_table(generated["auto"])] if "auto" in generated else [])
