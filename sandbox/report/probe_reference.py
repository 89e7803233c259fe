"""The probe reference of docs/scenario-authoring.md, from rootfs/manifest.toml.

Pure: the catalogue in (sandbox/scenario/catalogue.py: each probe's usage,
about, flavours and calls with their fields' kinds), markdown out. The page
holds it between BEGIN and END; sandbox/app/reference_docs.py writes it, and
pytest/unit/test_authoring_guide.py checks the page against this output.
"""
from __future__ import annotations

from sandbox.scenario.catalogue import Catalogue, CallInfo, ProbeInfo

BEGIN = "<!-- probe-reference: begin (python3 -m sandbox.app.reference_docs) -->"
END = "<!-- probe-reference: end -->"

INTRO = """\
Generated from `rootfs/manifest.toml` (each probe's `usage`, `about` and
`calls`); do not edit by hand. A probe step runs `/probes/<flavour>/<probe>`
with the step's `args`, and every call prints one JSON line:

```
{"probe":"<probe>","flavour":"<flavour>","call":"<call>",<field>:<value>,...}
```

with the fields below, in that order, where the call has them, and
`"errno":"<name>"` when the call failed (`EOVERFLOW`, `ENOSYS`...). A call
the ABI or the C library does not have prints `"errno":"ENOSYS"` and
`absent` (why). Field kinds: `time` (seconds since the epoch, shown as a
date), `number`, `text`, `errno` (an errno name). `<probe> --list` in the
guest prints the calls of its flavour.

The waiting probes (`timers`, `mqueue`, `futex`, `timeouts`) take one
`target`: when their waits are due, as epoch seconds, as
`YYYY-MM-DDTHH:MM:SSZ`, as `+N` (N seconds from now; the default is `+2`)
or as `libc+N` (N seconds from now as the flavour's C library reads it, as
under libfaketime). Every call runs at once in a process of its own and
prints `elapsed` (seconds on CLOCK_MONOTONIC), `woke` (the wall time it
woke, read through the 64-bit syscall), `tv_sec` (what an absolute call
passed, as the flavour's `time_t` holds it) or `delay` (a relative call's
seconds), and `outcome` when it could not be set up or never woke.
"""


def _fields(call: CallInfo) -> str:
    return ", ".join(f"`{name}` ({kind})" for name, kind in call.fields.items()) or "none but `errno`"


def _printed_by(probe: ProbeInfo, call: CallInfo) -> str:
    return "every flavour" if call.flavours == probe.flavours else ", ".join(call.flavours)


def probe_section(probe: ProbeInfo) -> str:
    synopsis = f"{probe.name} {probe.usage}".rstrip()
    lines = [f"### {probe.name}", "", f"`{synopsis}`; flavours: {', '.join(probe.flavours)}.", "", probe.about, "",
             "| call | printed by | fields |", "|---|---|---|"]
    lines += [f"| `{call.name}` | {_printed_by(probe, call)} | {_fields(call)} |" for call in probe.call_info.values()]
    return "\n".join(lines) + "\n"


def markdown(catalogue: Catalogue) -> str:
    """The whole reference: the intro, then one section per probe, in manifest order."""
    return "\n".join([INTRO, *(probe_section(probe) for probe in catalogue.probes)])


def replace_between(doc: str, begin: str, end: str, text: str) -> str:
    """The doc with the text between its begin and end markers replaced."""
    if begin not in doc or end not in doc:
        raise ValueError(f"no {begin} ... {end} markers")
    head, rest = doc.split(begin, 1)
    return f"{head}{begin}\n{text}{end}{rest.split(end, 1)[1]}"


def section_in(doc: str) -> str:
    """What the doc holds between BEGIN and END (without the newline after BEGIN)."""
    if BEGIN not in doc or END not in doc:
        raise ValueError(f"no {BEGIN} ... {END} markers")
    return doc.split(BEGIN, 1)[1].split(END, 1)[0].removeprefix("\n")
