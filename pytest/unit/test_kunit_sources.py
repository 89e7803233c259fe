"""Which KUnit cases a patch adds, read from its text (sandbox/kunit/cases.py)."""
from __future__ import annotations

from pathlib import Path

from sandbox.build.kernel_source import Series
from sandbox.kunit.cases import Case, added_text, apply_diff, cases_in, series_cases

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
    assert cases, "kernel-series/ adds KUnit cases (patches 0016 and 0017)"
    assert {c.suite for c in cases} >= {"time32_policy", "time32_conversion"}
    assert len(ids) == len(set(ids))
    assert all(c.source.endswith(".patch") for c in cases)


CREATE = """\
diff --git a/kernel/time/y_test.c b/kernel/time/y_test.c
new file mode 100644
--- /dev/null
+++ b/kernel/time/y_test.c
@@ -0,0 +1,9 @@
+static struct kunit_case y_cases[] = {
+	KUNIT_CASE(first),
+	KUNIT_CASE(last),
+	{}
+};
+static struct kunit_suite y_suite = {
+	.name = "y",
+	.test_cases = y_cases,
+};
-- 
2.39.5
"""

# A later patch adds a case inside the array: only its + line is new, the
# array and the suite are context. "-- " after the hunk is the signature.
ADD_CASE = """\
diff --git a/kernel/time/y_test.c b/kernel/time/y_test.c
index 1111111..2222222 100644
--- a/kernel/time/y_test.c
+++ b/kernel/time/y_test.c
@@ -1,4 +1,5 @@
 static struct kunit_case y_cases[] = {
 	KUNIT_CASE(first),
+	KUNIT_CASE(middle),
 	KUNIT_CASE(last),
 	{}
-- 
2.39.5
"""


def test_a_case_added_to_an_earlier_patch_s_suite_is_found(tmp_path: Path) -> None:
    (tmp_path / "0001-create.patch").write_text(CREATE)
    (tmp_path / "0002-add.patch").write_text(ADD_CASE)
    series = Series((tmp_path / "0001-create.patch", tmp_path / "0002-add.patch"))
    assert series_cases(series) == [Case("y", "first", "0001-create.patch"),
                                    Case("y", "middle", "0002-add.patch"),
                                    Case("y", "last", "0001-create.patch")]


def test_apply_diff_keeps_the_lines_after_the_last_hunk() -> None:
    old = ["a", "b", "c", "d", "e", "f"]
    diff = "@@ -2,2 +2,2 @@\n b\n-c\n+C\n-- \n2.39.5\n"
    assert apply_diff(old, diff) == ["a", "b", "C", "d", "e", "f"]
