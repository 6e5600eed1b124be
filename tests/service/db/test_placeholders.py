"""``?`` placeholders become psycopg's ``%s`` outside literals, identifiers and comments, and ``%``
becomes ``%%`` everywhere (psycopg reads it even inside literals); the rewritten SQL runs on PostgreSQL
with the same answer as on DuckDB."""

from __future__ import annotations

from service.db.placeholders import to_format_placeholders
from service.db.store import Store


def test_question_marks_outside_literals_become_format_placeholders() -> None:
    assert to_format_placeholders("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)"
    )


def test_question_marks_in_literals_identifiers_and_comments_stay() -> None:
    sql = "SELECT '?', 'it''s ?', \"col?\" FROM t -- why?\nWHERE x = ? /* and ? */"
    assert to_format_placeholders(sql) == (
        "SELECT '?', 'it''s ?', \"col?\" FROM t -- why?\nWHERE x = %s /* and ? */"
    )


def test_percent_signs_are_doubled_everywhere() -> None:
    assert to_format_placeholders("SELECT 7 % 2, '100%' WHERE s LIKE ?") == (
        "SELECT 7 %% 2, '100%%' WHERE s LIKE %s"
    )


def test_an_unterminated_literal_does_not_swallow_the_rest_silently() -> None:
    assert to_format_placeholders("SELECT ? , 'open ?") == "SELECT %s , 'open ?"


def test_the_same_statement_answers_alike_on_both_backends(db_target: str) -> None:
    sql = "SELECT ?, '?', 'x%y', 7 % 3, ? || '%' -- ? %\n"
    with Store.open(db_target) as store, store.cursor() as cur:
        assert cur.execute(sql, ["a", "b"]).fetchone() == ("a", "?", "x%y", 1, "b%")
        assert cur.execute("SELECT '?%'").fetchone() == ("?%",)  # no parameters: nothing is rewritten
