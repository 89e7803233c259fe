"""Which KUnit cases a patch adds, read from its text (sandbox/kunit/cases.py)."""
from __future__ import annotations

from sandbox.kunit.cases import Case, added_text, cases_in, series_cases

PATCH = """\
--- /dev/null
+++ b/kernel/time/x_test.c
@@ -0,0 +1,20 @@
+static struct kunit_case x_cases[] = {
+	KUNIT_CASE(first),
+	KUNIT_CASE_PARAM(second, second_gen_params),
+	{}
+};
+
+static struct kunit_suite x_suite = {
+	.name = "x",
+	.test_cases = x_cases,
+};
+static struct kunit_case unused_cases[] = {
+	KUNIT_CASE(never_registered),
+	{}
+};
-	KUNIT_CASE(removed),
 	KUNIT_CASE(context_line),
"""


def test_added_text_keeps_only_added_lines() -> None:
    text = added_text(PATCH)
    assert "KUNIT_CASE(first)" in text
    assert "removed" not in text and "context_line" not in text and "+++" not in text


def test_cases_belong_to_the_suite_that_names_their_array() -> None:
    assert cases_in(added_text(PATCH), "0009-x.patch") == [
        Case("x", "first", "0009-x.patch"), Case("x", "second", "0009-x.patch")]


def test_the_series_adds_cases_and_each_has_a_distinct_id() -> None:
    cases = series_cases()
    ids = [c.id for c in cases]
    assert cases, "kernel-series/ adds KUnit cases (patches 0008 and 0009)"
    assert {c.suite for c in cases} >= {"time32_policy", "time32_conversion"}
    assert len(ids) == len(set(ids))
    assert all(c.source.endswith(".patch") for c in cases)
