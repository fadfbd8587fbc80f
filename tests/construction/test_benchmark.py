"""Reading a built benchmark back: the first queries of each task, a task's recorded spec."""

from datetime import date

from stages.construction.benchmark import read_spec, sample_queries
from stages.construction.drawing import Query, queries_frame
from stages.layout import task_dir


def query(query_id: str, task_id: str) -> Query:
    return Query(query_id, task_id, f"h-{task_id}", f"scope {query_id}", "temporal", "", 3,
                 date(2000, 1, 1), date(2001, 12, 31), f"prompt {query_id}")


def test_the_sample_is_the_first_queries_of_every_task_by_id_without_citations(tmp_path):
    built = [query("q-3", "b"), query("q-2", "a"), query("q-1", "b"), query("q-4", "a"), query("q-5", "a")]
    queries_frame(built, {q.query_id: "test" for q in built}).to_parquet(tmp_path / "queries.parquet")
    assert sample_queries(tmp_path, 2) == [query("q-2", "a"), query("q-4", "a"), query("q-1", "b"), query("q-3", "b")]
    assert [q.query_id for q in sample_queries(tmp_path, 1)] == ["q-2", "q-1"]


def test_a_built_spec_is_read_from_the_task_private_folder(tmp_path):
    private = task_dir(tmp_path, "mean-x") / "private"
    private.mkdir(parents=True)
    (private / "task.yaml").write_text(
        "id: mean-x\ndomain: mini\ncategory: statistical_inference\ndifficulty: easy\nmodalities: [text]\n"
        "source: {citation: none}\nprompt: answer\ndata: {repository: mini, tables: {}}\nscopes: []\n"
        "answer:\n  hypothesis: {format: number, description: any number}\n")
    spec = read_spec(tmp_path, "mean-x")
    assert (spec.id, spec.domain, spec.difficulty) == ("mean-x", "mini", "easy")
