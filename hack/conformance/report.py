#!/usr/bin/env python3
"""Turns the JUnit reports of hack/conformance.sh into tables.

    hack/conformance/report.py RESULTS_DIR

For each node that ran (RESULTS_DIR/kubelet, RESULTS_DIR/nodeagent), it
writes RESULTS_DIR/<node>/results.tsv: one line per test of the focus, with
its result (passed, failed, skipped: the test skipped itself, excluded: a
pattern of the skip list matched) and the first line of the failure or skip
message. With both nodes present it writes RESULTS_DIR/report.md: the table
side by side, a test the kubelet also fails here marked as such and not
counted against nodeagent, and the summary line. It prints the summary.
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = ("kubelet", "nodeagent")
BUILTIN_SKIPS = [
    (r"\[Serial\]", "needs the whole cluster to itself"),
    (r"\[Disruptive\]", "disrupts the node or cluster"),
    (r"\[Flaky\]", "flaky upstream"),
    (r"\[Feature:", "an optional feature, not in the conformance profile"),
]
if os.environ.get("CONFORMANCE_SLOW") != "1":
    BUILTIN_SKIPS.append((r"\[Slow\]", "slow: minutes each (CONFORMANCE_SLOW=1 runs them)"))


def skip_list():
    """The skip patterns with their reasons: the built-in ones, then skips.txt."""
    skips = [(re.compile(p), why) for p, why in BUILTIN_SKIPS]
    with open(os.path.join(HERE, "skips.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            pattern, _, why = line.partition("\t")
            skips.append((re.compile(pattern), why.strip() or "no reason given"))
    return skips


def first_line(text):
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return ""


def results(node_dir, focus, skips):
    """name -> (result, first line) for the tests of the focus in node_dir."""
    out = {}
    path = os.path.join(node_dir, "junit_01.xml")
    if not os.path.exists(path):
        return None
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        if not focus.search(name):
            continue
        # Ginkgo names the suite's own set-up and tear-down nodes too.
        if name.startswith("[SynchronizedBeforeSuite]") or name.startswith("[SynchronizedAfterSuite]") or name.startswith("[ReportAfterSuite]"):
            continue
        excluded = next((why for pattern, why in skips if pattern.search(name)), None)
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if excluded is not None:
            out[name] = ("excluded", excluded)
        elif failure is not None:
            out[name] = ("failed", first_line(failure.get("message")) or first_line(failure.text))
        elif skipped is not None:
            msg = (skipped.get("message") or "").strip()
            if msg == "skipped":
                # Filtered out before it ran (a run of the CI subset).
                continue
            out[name] = ("skipped", first_line(msg.removeprefix("skipped - ")))
        else:
            out[name] = ("passed", "")
    return out


def write_tsv(node_dir, res):
    with open(os.path.join(node_dir, "results.tsv"), "w", encoding="utf-8") as f:
        f.write("test\tresult\tfirst line\n")
        for name in sorted(res):
            result, line = res[name]
            f.write(f"{name}\t{result}\t{line}\n")


def counts(res):
    c = {"passed": 0, "failed": 0, "skipped": 0, "excluded": 0}
    for result, _ in res.values():
        c[result] += 1
    return c


def md_cell(text):
    return text.replace("|", "\\|")


def write_report(root, by_node):
    kube, agent = by_node["kubelet"], by_node["nodeagent"]
    names = sorted(set(kube) | set(agent))
    against = both_fail = 0
    rows = []
    for name in names:
        k = kube.get(name, ("not run", ""))
        a = agent.get(name, ("not run", ""))
        note = ""
        if a[0] == "failed" and k[0] == "failed":
            note = "the kubelet fails it here too"
            both_fail += 1
        elif a[0] == "failed":
            against += 1
        rows.append((name, k, a, note))
    ca = counts(agent)
    summary = (f"nodeagent: {ca['passed']} passed, {ca['failed']} failed, "
               f"{ca['skipped'] + ca['excluded']} skipped; "
               f"{against} failed that the kubelet passes, {both_fail} that it fails here too")
    ck = counts(kube)
    with open(os.path.join(root, "report.md"), "w", encoding="utf-8") as f:
        f.write(f"{summary}\n\n")
        f.write(f"kubelet: {ck['passed']} passed, {ck['failed']} failed, {ck['skipped'] + ck['excluded']} skipped\n\n")
        f.write("| test | kubelet | nodeagent | nodeagent's first failure line |\n|---|---|---|---|\n")
        for name, k, a, note in rows:
            why = a[1] if a[0] in ("failed", "skipped", "excluded") else ""
            if note:
                why = f"({note}) {why}"
            f.write(f"| {md_cell(name)} | {k[0]} | {a[0]} | {md_cell(why)} |\n")
    return summary


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    root = sys.argv[1]
    focus = re.compile(os.environ.get("CONFORMANCE_FOCUS", r"\[NodeConformance\]"))
    skips = skip_list()
    by_node = {}
    for node in NODES:
        res = results(os.path.join(root, node), focus, skips)
        if res is None:
            continue
        write_tsv(os.path.join(root, node), res)
        c = counts(res)
        by_node[node] = res
        print(f"{node}: {c['passed']} passed, {c['failed']} failed, {c['skipped'] + c['excluded']} skipped")
    if len(by_node) == 2:
        print(write_report(root, by_node))
        print(f"table: {os.path.join(root, 'report.md')}")


if __name__ == "__main__":
    main()
