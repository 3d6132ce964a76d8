"""Lesson records and the README tables rendered from them."""

import json

import pytest

from minibert.course import results

RECORD = {
    "tasks": ["topic", "word order"],
    "models": {
        "BERT": {"accuracy": {"topic": 0.8, "word order": 0.9}, "mean": 0.85, "flops_x_bert": 1.0},
        "scratch": {"accuracy": {"topic": 0.7, "word order": 0.5}, "mean": 0.6,
                    "flops_x_bert": None},
    },
    "students": {"BiLSTM": {"topic": 0.75}},
    "speed": {"BERT": [1.0, 1.0], "BiLSTM": [1.5, 2.25]},
    "parameters": {"BERT": 139586, "BiLSTM": 1000},
    "verdicts": {"BiLSTM": {"claim": "c", "measured": "m", "holds": False}},
}


def test_the_glance_table_has_a_row_per_model_with_what_was_measured():
    lines = results.glance_table(RECORD).splitlines()
    assert len(lines) == 2 + 3
    assert lines[2] == ("| BERT | 139,586 | 1.00 / 1.00 | 1.00x BERT | 0.800 | 0.900 | 0.850 "
                        "|  |")
    assert lines[3].startswith("| scratch |  |  | none | 0.700 | 0.500 | 0.600 |")
    assert lines[4] == ("| BiLSTM | 1,000 | 1.50 / 2.25 | + its teacher | 0.750 |  |  | "
                        "not at this budget |")


def test_a_generated_block_is_rewritten_and_the_rest_kept(tmp_path, monkeypatch):
    results.save_results("13_comparison", RECORD, folder=tmp_path)
    assert json.loads((tmp_path / "13_comparison.json").read_text()) == RECORD
    monkeypatch.setitem(results.TABLES, "glance", lambda: results.glance_table(
        results.load_results("13_comparison", folder=tmp_path)))
    text = "before\n<!-- generated: glance -->\nold table\n<!-- end: glance -->\nafter\n"
    rendered = results.render_readme(text)
    assert rendered.startswith("before\n<!-- generated: glance -->\n| model |")
    assert rendered.endswith("|\n<!-- end: glance -->\nafter\n")
    assert results.render_readme(rendered) == rendered
    with pytest.raises(KeyError, match="known: glance"):
        results.render_readme("<!-- generated: nope -->\nx\n<!-- end: nope -->")


def test_a_missing_or_broken_record_names_the_lesson_to_execute(tmp_path):
    with pytest.raises(FileNotFoundError, match="make lessons LESSONS=lessons/13_comparison"):
        results.load_results("13_comparison", folder=tmp_path)
    (tmp_path / "13_comparison.json").write_text("{not json")
    with pytest.raises(ValueError, match="execute lessons/13_comparison.ipynb again"):
        results.load_results("13_comparison", folder=tmp_path)
    with pytest.raises(ValueError):
        results.save_results("13_comparison", {"x": float("nan")}, folder=tmp_path)


def test_the_results_tables_match_the_committed_records():
    # Fails when a lesson was executed again without `python -m minibert.course.results`
    # (make lessons runs it).
    text = results.RESULTS_MD.read_text(encoding="utf-8")
    assert "<!-- generated: glance -->" in text and "<!-- generated: lessons -->" in text
    assert results.render_readme(text) == text, "run: python -m minibert.course.results"


def test_the_lessons_table_renders_each_record_and_names_the_missing_ones(tmp_path):
    results.save_results("02_tokenization", {
        "claim": "bytes never need [UNK]", "measured": ["WordPiece 47%", "BPE 0%"],
        "asserted": "BPE never UNK"}, folder=tmp_path)
    table = results.lessons_table(tmp_path)
    row = next(line for line in table.splitlines() if line.startswith("| 02_tokenization"))
    assert "bytes never need [UNK] | WordPiece 47%; BPE 0% | BPE never UNK |" in row
    missing = next(line for line in table.splitlines() if line.startswith("| 01_bert"))
    assert "make lessons LESSONS=lessons/01_bert.ipynb" in missing


RECORD_NOT_YET: set[str] = set()   # lessons whose record cell is still to come


def test_every_lesson_saves_its_record():
    import json

    from minibert.course import paths

    for notebook in sorted(paths.LESSONS.glob("[0-9][0-9]_*.ipynb")):
        if notebook.stem in RECORD_NOT_YET:
            continue
        sources = ["".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"]
                   if cell["cell_type"] == "code"]
        assert any(f'save_results("{notebook.stem}"' in s or f"save_results('{notebook.stem}'" in s
                   for s in sources), f"{notebook.name} saves no record for RESULTS.md"
