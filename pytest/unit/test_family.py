"""Scenario families (sandbox/scenario/family.py): named values, flavour
groups and variant rows, expanded before a scenario is parsed."""
from __future__ import annotations

import textwrap

import pytest

from sandbox.base.errors import InputError
from sandbox.base.machines import FLAVOURS
from sandbox.scenario.catalogue import parse_catalogue
from sandbox.scenario.parser import parse_scenario, parse_scenarios

FILE = "scenarios/demo/family.toml"
CATALOGUE = parse_catalogue(
    '[probe.clock]\ncalls.time = { seconds = "time" }\ncalls.clock_gettime = { seconds = "time", nsec = "number" }\n',
    "manifest.toml")
MACHINES = {"x86_64": FLAVOURS}
HEAD = 'title = "t"\nrtc = "2038-01-19T03:13:50Z"\n'
STEP = '[[step]]\nphase = "p"\nprobe = "clock"\n'


def parse(text: str):
    return parse_scenarios(textwrap.dedent(text), FILE, CATALOGUE, MACHINES)


def fields(scenario) -> dict[tuple[str, str, str], str]:
    return {(e.flavour, e.call, e.field): e.matcher.describe() for e in scenario.steps[0].expectations}


def test_a_named_value_stands_for_any_toml_value() -> None:
    (scenario,) = parse(HEAD + '[values]\nwindow = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"]\n'
                        'when = "2040-01-01T00:00:00Z"\n'
                        + STEP + '[step.expect.time64]\ntime = { seconds = { between = "$window" } }\n'
                        'clock_gettime = { seconds = "$when" }\n')
    assert fields(scenario) == {
        ("time64", "time", "seconds"): "in [2040-01-01T00:00:00Z, 2040-01-01T00:02:00Z]",
        ("time64", "clock_gettime", "seconds"): "= 2040-01-01T00:00:00Z"}


def test_a_value_may_refer_to_values_and_a_loop_is_refused() -> None:
    (scenario,) = parse(HEAD + '[values]\nwindow = ["2040-01-01T00:00:00Z", "2040-01-01T00:02:00Z"]\n'
                        'reads = { time = { seconds = { between = "$window" } } }\n'
                        'row = { time64 = "$reads" }\n' + STEP + 'expect = "$row"\n')
    assert fields(scenario) == {("time64", "time", "seconds"): "in [2040-01-01T00:00:00Z, 2040-01-01T00:02:00Z]"}
    with pytest.raises(InputError, match="values refer to values more than 8 deep"):
        parse(HEAD + '[values]\na = { b = "$b" }\nb = { a = "$a" }\n' + STEP + 'expect = "$a"\n')


def test_a_flavour_group_applies_to_each_member_and_a_member_table_wins() -> None:
    (scenario,) = parse(HEAD + '[flavour-groups]\nold = ["time32-syscall", "time32-libc"]\n'
                        + STEP + 'flavours = ["old", "time64"]\n'
                        '[step.expect.old]\ntime = { errno = "EOVERFLOW" }\nclock_gettime = { errno = "EOVERFLOW" }\n'
                        '[step.expect.time32-syscall]\ntime = { seconds = 5 }\n')
    assert scenario.steps[0].flavours == ("time32-syscall", "time32-libc", "time64")
    assert fields(scenario) == {
        ("time32-syscall", "time", "errno"): "errno EOVERFLOW",
        ("time32-syscall", "time", "seconds"): "= 5",
        ("time32-syscall", "clock_gettime", "errno"): "errno EOVERFLOW",
        ("time32-libc", "time", "errno"): "errno EOVERFLOW",
        ("time32-libc", "clock_gettime", "errno"): "errno EOVERFLOW"}


def test_each_variant_is_a_scenario_with_its_own_name_and_values() -> None:
    scenarios = parse(HEAD.replace('"t"', '"on ${variant}: ${limit}"') + '[values]\nlimit = "2038"\n'
                      '[[variant]]\nname = "small"\n[[variant]]\nname = "big"\nlimit = "2446"\n' + STEP)
    assert [(s.name, s.variant, s.slug, s.title) for s in scenarios] == [
        ("demo/family[small]", "small", "demo-family-small", "on small: 2038"),
        ("demo/family[big]", "big", "demo-family-big", "on big: 2446")]


def test_a_plain_file_is_one_scenario_and_parse_scenario_refuses_a_family() -> None:
    assert [s.variant for s in parse(HEAD + STEP)] == [""]
    with pytest.raises(InputError, match="variant: 2 variants: this file is a family"):
        parse_scenario(HEAD + '[[variant]]\nname = "a"\n[[variant]]\nname = "b"\n' + STEP, FILE, CATALOGUE, MACHINES)


def test_a_dollar_sign_is_literal_unless_it_names_a_value() -> None:
    (scenario,) = parse(HEAD.replace('"t"', '"costs $$5, ends with $, $HOME"') + STEP)
    assert scenario.title == "costs $5, ends with $, $HOME"


@pytest.mark.parametrize("text, key, message", [
    (HEAD + STEP + '[step.expect.time64]\ntime = { seconds = "$nowhere" }\n',
     "step[0].expect.time64.time.seconds", "unknown value 'nowhere' (known: none)"),
    (HEAD.replace('"t"', '"t ${w}"') + '[values]\nw = [1]\n' + STEP, "title", "only a string or a number"),
    (HEAD + '[flavour-groups]\ntime64 = ["time64"]\n' + STEP, "flavour-groups.time64", "is a flavour"),
    (HEAD + '[flavour-groups]\nold = ["time33"]\n' + STEP, "flavour-groups.old[0]", "unknown flavour 'time33'"),
    (HEAD + '[[variant]]\nlimit = 1\n' + STEP, "variant[0].name", "missing (required)"),
    (HEAD + '[[variant]]\nname = "a"\n[[variant]]\nname = "a"\n' + STEP, "variant[1].name", "listed twice"),
    (HEAD + '[[variant]]\nname = "A b"\n' + STEP, "variant[0].name", "is not a variant name"),
    (HEAD + '[[variant]]\nname = "a"\nvariant = "b"\n' + STEP, "variant[0].variant", "the row's name"),
    (HEAD + 'variant = []\n' + STEP, "variant", "expected one or more [[variant]] tables"),
])
def test_bad_families_name_the_key(text: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert str(caught.value).startswith(f"{FILE}: {key}: ")
    assert message in str(caught.value)


# Families over machines and userlands: "${name}" in table keys, steps of
# some rows only, a row's own expectations.

ROWS = '[[variant]]\nname = "old"\nwho = "time32-libc"\n[[variant]]\nname = "new"\nwho = "time64"\n'


def test_a_key_may_hold_a_value_as_text() -> None:
    old, new = parse(HEAD + ROWS + STEP + '[step.expect."${who}"]\ntime = { seconds = 1 }\n')
    assert fields(old) == {("time32-libc", "time", "seconds"): "= 1"}
    assert fields(new) == {("time64", "time", "seconds"): "= 1"}


def test_two_keys_that_become_one_are_refused() -> None:
    with pytest.raises(InputError, match=r"step\[0\]\.expect\.\$\{who\}: key 'time64' twice once the values are in"):
        parse(HEAD + '[values]\nwho = "time64"\n' + STEP
              + '[step.expect.time64]\ntime = { seconds = 1 }\n[step.expect."${who}"]\ntime = { seconds = 2 }\n')


def test_substituted_text_past_the_cap_is_refused_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from sandbox.scenario import family
    text = HEAD.replace('"t"', '"${big}${big}"') + '[values]\nbig = "' + "x" * 600 + '"\n' + STEP
    assert parse(text)[0].title == "x" * 1200
    monkeypatch.setattr(family, "MAX_TEXT", 1000)
    with pytest.raises(InputError) as caught:
        parse(text)
    assert str(caught.value) == (f"{FILE}: title: the substitution writes more than 1000 characters of text: "
                                 "refer to fewer or shorter values")


def test_the_text_cap_is_four_mib_and_counts_what_references_bring_in() -> None:
    from sandbox.scenario.family import MAX_TEXT
    assert MAX_TEXT == 4 * 1024 * 1024
    # 4 references of 2 MiB each: 8 MiB written from a file of 2 MiB of values
    values = '[values]\nbig = "' + "x" * (2 * 1024 * 1024) + '"\nfour = ["$big", "$big", "$big", "$big"]\n'
    with pytest.raises(InputError, match="more than 4194304 characters of text"):
        parse(HEAD + values + STEP + 'args = "$four"\n')


def test_a_step_may_be_in_some_rows_only() -> None:
    old, new = parse(HEAD + ROWS + STEP + '[[step]]\nphase = "q"\nprobe = "clock"\nvariants = ["new"]\n')
    assert [s.phase for s in old.steps] == ["p"]
    assert [s.phase for s in new.steps] == ["p", "q"]


def test_a_rows_table_replaces_the_shared_one_call_by_call() -> None:
    old, new = parse(HEAD + ROWS + STEP + '[step.expect.time64]\ntime = { seconds = 1 }\n'
                     'clock_gettime = { seconds = 2, nsec = 3 }\n'
                     '[step.expect-variant.new.time64]\nclock_gettime = { seconds = 4 }\n'
                     '[step.expect-variant.new.time32-libc]\ntime = { errno = "EOVERFLOW" }\n')
    assert fields(old) == {("time64", "time", "seconds"): "= 1", ("time64", "clock_gettime", "seconds"): "= 2",
                           ("time64", "clock_gettime", "nsec"): "= 3"}
    assert fields(new) == {("time64", "time", "seconds"): "= 1", ("time64", "clock_gettime", "seconds"): "= 4",
                           ("time32-libc", "time", "errno"): "errno EOVERFLOW"}


def test_a_rows_table_may_name_a_flavour_group() -> None:
    old, new = parse(HEAD + '[flavour-groups]\nboth = ["time32-libc", "time64"]\n' + ROWS + STEP
                     + '[step.expect.time64]\ntime = { seconds = 1 }\n'
                     '[step.expect-variant.new.both]\ntime = { seconds = 2 }\n')
    assert fields(old) == {("time64", "time", "seconds"): "= 1"}
    assert fields(new) == {("time32-libc", "time", "seconds"): "= 2", ("time64", "time", "seconds"): "= 2"}


def test_a_run_steps_row_table_replaces_the_userlands_whole_table() -> None:
    from sandbox.scenario.family import expand
    from sandbox.base.fields import Where
    document = {"variant": [{"name": "a", "new": "debian13-i386"}, {"name": "b", "new": "debian12-amd64"}],
                "step": [{"run": ["date"], "phase": "p", "expect": {"${new}": {"status": "ok", "time": 1}},
                          "expect-variant": {"b": {"${new}": {"status": "exit 1"}}}}]}
    a, b = expand(document, Where(FILE))
    assert a.document["step"] == [{"run": ["date"], "phase": "p", "expect": {"debian13-i386": {"status": "ok", "time": 1}}}]
    assert b.document["step"] == [{"run": ["date"], "phase": "p", "expect": {"debian12-amd64": {"status": "exit 1"}}}]


@pytest.mark.parametrize("text, key, message", [
    (HEAD + STEP + 'variants = ["a"]\n', "step[0].variants", "this file has no [[variant]]"),
    (HEAD + ROWS + STEP + 'variants = ["newer"]\n', "step[0].variants[0]", "unknown variant 'newer' (known: old, new)"),
    (HEAD + ROWS + STEP + 'variants = "new"\n', "step[0].variants", "expected a list of [[variant]] names"),
    (HEAD + ROWS + STEP + '[step.expect-variant.newer.time64]\ntime = { seconds = 1 }\n',
     "step[0].expect-variant.newer", "unknown variant 'newer'"),
    (HEAD + STEP + '[step.expect-variant.a.time64]\ntime = { seconds = 1 }\n',
     "step[0].expect-variant", "this file has no [[variant]]"),
    (HEAD + ROWS + STEP + '[step.expect."${nobody}"]\ntime = { seconds = 1 }\n',
     "step[0].expect.${nobody}", "unknown value 'nobody'"),
    (HEAD + '[values]\nwho = ["time64"]\n' + STEP + '[step.expect."$who"]\ntime = { seconds = 1 }\n',
     "step[0].expect.$who", "a key must be text"),
])
def test_bad_rows_name_the_key(text: str, key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert str(caught.value).startswith(f"{FILE}: {key}: ")
    assert message in str(caught.value)


def test_the_guides_family_example_is_a_row_per_machine_with_its_own_expectations() -> None:
    import re
    from sandbox.base.paths import REPO
    from sandbox.scenario import suite
    from sandbox.scenario.userlands import load_userlands
    guide = (REPO / "docs" / "scenario-authoring.md").read_text()
    (example,) = re.findall(r"```toml\n(# Old and new programs.*?)```", guide, re.S)
    armhf, i386 = parse_scenarios(example, "scenarios/guide/old-new.toml", suite.catalogue(),
                                  suite.machine_flavours(), load_userlands())
    assert (armhf.title, list(armhf.machines), i386.title) == (
        "armhf: Debian 12 next to Debian 13", ["armhf"], "i386: Debian 12 next to Debian 13")
    perl = {s.variant: s.steps[2] for s in (armhf, i386)}
    assert [(e.flavour, e.matcher.describe()) for e in perl["armhf"].expectations] == [
        ("debian13-armhf", "in [2038-01-19T03:14:30Z, 2038-01-19T03:24:30Z]")]
    assert [(e.flavour, e.matcher.describe()) for e in perl["i386"].expectations] == [
        ("debian13-i386", "a number outside [2038-01-19T03:14:30Z, 2038-01-19T03:24:30Z]")]


def test_an_error_in_a_step_after_one_the_row_leaves_out_names_the_files_step() -> None:
    with pytest.raises(InputError) as caught:
        parse(HEAD + ROWS + STEP + 'variants = ["new"]\n' + STEP.replace('"p"', '"q"') + 'flavours = ["time65"]\n')
    assert str(caught.value).startswith(f"{FILE}: step[1].flavours[0]: unknown flavour 'time65'")
