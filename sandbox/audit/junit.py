"""A rehearsal as JUnit XML, the report every CI shows: one test case per
audited file, a failure for each the gate fails (--fail-on, broke by
default), skipped for not-exercised (pure).

    junit_xml(report, level) -> the document's text
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from sandbox.audit.findings import fails, findings
from sandbox.audit.runtime.verdict import NOT_EXERCISED


def junit_xml(report: dict[str, object], level: str) -> str:
    found = findings(report)
    suite = ET.Element("testsuite", name="rehearse", tests=str(len(found)), errors="0")
    failures = skipped = 0
    for finding in found:
        case = ET.SubElement(suite, "testcase", classname=finding.input, name=finding.name)
        properties = ET.SubElement(case, "properties")
        for name, value in (("build-id", finding.build_id), ("machine", finding.machine),
                            ("static", finding.static), ("verdict", finding.verdict)):
            ET.SubElement(properties, "property", name=name, value=value)
        if fails(finding, level):
            failures += 1
            ET.SubElement(case, "failure", message=f"{finding.verdict}: {finding.reason}",
                          type=finding.verdict).text = finding.reason
        elif finding.verdict == NOT_EXERCISED:
            skipped += 1
            ET.SubElement(case, "skipped", message=finding.reason)
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
