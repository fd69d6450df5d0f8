"""Read the conformance suite's saved results and print one verdict line per leg and revision.

`scripts/conformance` runs the official suite with `-o DIR`, which leaves one `checks.json` per
scenario; this turns them into `conformance <leg> <revision>: P passed, F failed` and the exit
status. A scenario fails when any of its checks is a FAILURE (the suite's own scoring rule), when
none of its checks is a SUCCESS (only SKIPPED, INFO or WARNING checks, or none at all: nothing
was shown to work), or when it left no results at all. Scenarios listed in the expected-failures
file must fail (a pass there means the entry is stale and must be removed); they are counted
apart. That file has a `server:` and a `client:` list for every revision, and may have lists
held to one revision (`client 2026-07-28:`); an entry that names no scored scenario of the leg
at the revision being judged is an error (a typo or a scenario of another revision would
otherwise be dropped without a word), and so is a list of any other name.

Every run judges a list of scenarios known before it ran, never only the ones that left
results: a scenario that crashed without writing any fails in every mode. With the variable
MCPKIT_CONFORMANCE_VERDICTS naming a file, each judged scenario's verdict is appended to it, one
`LABEL<TAB>SCENARIO<TAB>VERDICT` line each (passed, failed, expected failure, stale), so two
runs can be compared scenario for scenario.

Usage:
  summarize.py required LEG REVISION RESULTS_DIR REQUIREMENTS_YAML EXPECTED_FAILURES_YAML
  summarize.py single LABEL RESULTS_DIR SCENARIO...
  summarize.py all LABEL RESULTS_DIR LISTING   (every scenario the suite's `list` printed in the
                                                file LISTING, and any other that left results)

Imports: the standard library only (it runs before anything else is known to work).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_LISTED = re.compile(r"^  - (\S+)(?: \[[^\]]*\])?$")
"""A scenario in the output of the suite's `list` command (`  - name [revisions]`)."""
_SECTION = re.compile(r"(server|client)(?: (\d{4}-\d{2}-\d{2}))?")
"""A list of the expected-failures file: a leg, for every revision or for one."""


def load_results(results_dir: Path, prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Scenario name -> its checks, from `<dir>/<prefix><scenario>-<timestamp>/checks.json`."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(results_dir.rglob("checks.json")):
        rel = path.parent.relative_to(results_dir).as_posix()
        name = _STAMP.sub("", rel)
        if prefix and name.startswith(prefix):
            name = name[len(prefix) :]
        try:
            checks = json.loads(path.read_text())
            if not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks):
                raise ValueError("not a JSON list of check objects")
            found[name] = checks
        except (OSError, ValueError) as exc:
            found[name] = [{"id": "unreadable-results", "status": "FAILURE",
                            "errorMessage": f"{path}: {exc}"}]
    return found


def read_listing(path: Path) -> list[str]:
    """The scenario names the conformance suite's `list --server` (or `--client`) printed."""
    return [m.group(1) for line in path.read_text().splitlines() if (m := _LISTED.match(line))]


def read_requirements(path: Path, leg: str) -> list[str]:
    """The scored scenarios of one leg from a requirements YAML (its simple list layout)."""
    names: list[str] = []
    section = None
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            section = line.rstrip(":").strip()
            continue
        item = line.strip()
        if section == leg and item.startswith("- "):
            names.append(item[2:].strip())
    return names


def read_not_scored(path: Path, leg: str) -> list[tuple[str, str]]:
    """(scenario, reason) of the `not_scored` entries of one leg."""
    out: list[tuple[str, str]] = []
    section = None
    entry: dict[str, str] = {}

    def flush() -> None:
        if entry.get("leg") == leg and "scenario" in entry:
            out.append((entry["scenario"], entry.get("reason", "")))

    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            section = line.rstrip(":").strip()
            continue
        if section != "not_scored":
            continue
        item = line.strip()
        if item.startswith("- "):
            flush()
            entry = {}
            item = item[2:]
        key, sep, value = item.partition(":")
        if sep and key.strip() in ("scenario", "leg", "reason"):
            entry[key.strip()] = value.strip()
    flush()
    return out


def report(label: str, entries: list[tuple[str, str]],
           results: dict[str, list[dict[str, Any]]]) -> None:
    """One line naming how each not-scored scenario of a requirement run went; no verdict."""
    marks = []
    for name, reason in entries:
        checks = results.get(name)
        if checks is None:
            mark = "did not run"
        elif failures(checks):
            mark = "x"
        elif any(c.get("status") == "SUCCESS" for c in checks):
            mark = "ok"
        else:
            mark = "not exercised"
        marks.append(f"{name} {mark}" + (f" ({reason})" if reason else ""))
    print(f"  reported, not scored ({label}): " + ", ".join(marks))


def read_expected_failures(path: Path, leg: str, revision: str = "") -> dict[str, str]:
    """Scenario -> reason, from the `leg:` list and the `leg revision:` list, whose entries may
    end in `# reason` comments (else the last comment line above gives the reason).

    ValueError names the line of a list that is neither: entries under a misspelt name would
    otherwise never be held to failing."""
    out: dict[str, str] = {}
    section = None
    reason = ""
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip():
            continue
        if raw.lstrip().startswith("#"):
            reason = raw.strip().lstrip("#").strip() or reason
            continue
        if not raw.startswith(" "):
            section = raw.split("#", 1)[0].strip().rstrip(":")
            if not _SECTION.fullmatch(section):
                raise ValueError(f"{path}: line {number}: unknown section {section!r} (lists are "
                                 "'server:', 'client:', or one of them with a revision, as "
                                 "'client 2026-07-28:')")
            continue
        item, _, comment = raw.strip().partition("#")
        if section in (leg, f"{leg} {revision}") and item.startswith("- "):
            out[item[2:].strip()] = comment.strip() or reason
    return out


def failures(checks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c.get("status") == "FAILURE"]


def verdict_failures(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What fails a judged scenario: its FAILURE checks, or, when none of its checks succeeded,
    one check saying so (a scenario that only skipped showed nothing to work)."""
    bad = failures(checks)
    if bad or any(c.get("status") == "SUCCESS" for c in checks):
        return bad
    seen = sorted({str(c.get("status")) for c in checks})
    what = f"its {len(checks)} checks are {', '.join(seen)} only" if checks else "it has no checks"
    return [{"id": "nothing-succeeded", "status": "FAILURE",
             "errorMessage": f"no check succeeded: {what}"}]


def warnings(checks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c.get("status") == "WARNING"]


def _describe(check: dict[str, Any]) -> str:
    text = check.get("errorMessage") or check.get("description") or ""
    return f"[{check.get('id')}] {text}"[:400]


def judge(
    label: str,
    scenarios: list[str],
    results: dict[str, list[dict[str, Any]]],
    expected: dict[str, str],
    errors: list[str] | None = None,
) -> bool:
    """Print the failures and the verdict line; True when the run passes. `errors` are
    problems of the expected-failures file, printed and counted: any of them fails the run."""
    errors = errors or []
    passed, failed, expected_failed, stale, warned = [], [], [], [], []
    for name in scenarios:
        checks = results.get(name)
        if checks is None:
            checks = [{"id": "no-results", "status": "FAILURE",
                       "errorMessage": "the scenario left no results (it did not run to the end)"}]
        bad = verdict_failures(checks)
        if warnings(checks):
            warned.append((name, warnings(checks)))
        if name in expected:
            (expected_failed if bad else stale).append(name)
        elif bad:
            failed.append((name, bad))
        else:
            passed.append(name)
    record_verdicts(label, [(n, "passed") for n in passed] + [(n, "failed") for n, _ in failed]
                    + [(n, "expected failure") for n in expected_failed]
                    + [(n, "stale") for n in stale])
    for name, bad in failed:
        print(f"  FAILED {name}")
        for check in bad:
            print(f"      {_describe(check)}")
    for name, warned_checks in warned:
        if name not in expected:
            print(f"  warning {name}: " + "; ".join(_describe(c) for c in warned_checks))
    for name in stale:
        print(f"  STALE expected failure {name} now passes: remove it from the expected-failures file")
    extra = ""
    if expected:
        reasons = sorted({expected[n] for n in expected_failed})
        extra = f", {len(expected_failed)} expected failures ({'; '.join(reasons)})" if expected_failed else ""
    for error in errors:
        print(f"  ERROR {error}")
    if errors:
        extra += f", {len(errors)} error{'s' if len(errors) > 1 else ''} in the expected-failures file"
    print(f"conformance {label}: {len(passed)} passed, {len(failed)} failed{extra}")
    return not failed and not stale and not errors


def record_verdicts(label: str, verdicts: list[tuple[str, str]]) -> None:
    """Append each scenario's verdict to MCPKIT_CONFORMANCE_VERDICTS, if it names a file."""
    target = os.environ.get("MCPKIT_CONFORMANCE_VERDICTS")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as out:
        for name, verdict in sorted(verdicts):
            out.write(f"{label}\t{name}\t{verdict}\n")


def main(argv: list[str]) -> int:
    if len(argv) >= 6 and argv[0] == "required":
        leg, revision, results_dir, req_path, expected_path = argv[1:6]
        scenarios = read_requirements(Path(req_path), leg)
        if not scenarios:
            print(f"summarize: no {leg} scenarios found in {req_path}", file=sys.stderr)
            return 2
        results = load_results(Path(results_dir), "server-" if leg == "server" else "")
        try:
            expected = read_expected_failures(Path(expected_path), leg, revision)
        except (OSError, ValueError) as exc:
            print(f"conformance {leg} {revision}: error: {exc}")
            return 2
        errors = [f"expected failure {name} names no scored {leg} scenario of {revision} "
                  f"(in {req_path}); remove it, or list it under '{leg} <revision>:' for the "
                  "revisions that have it" for name in expected if name not in scenarios]
        expected = {k: v for k, v in expected.items() if k in scenarios}
        unscored = read_not_scored(Path(req_path), leg)
        if unscored:
            report(f"{leg} {revision}", unscored, results)
        return 0 if judge(f"{leg} {revision}", scenarios, results, expected, errors) else 1
    if len(argv) == 4 and argv[0] == "all":
        label, results_dir, listing = argv[1], argv[2], Path(argv[3])
        prefix = "server-" if label.startswith("server") else ""
        try:
            listed = read_listing(listing)
        except OSError as exc:
            print(f"conformance {label}: error: cannot read the scenario list: {exc}")
            return 2
        if not listed:
            print(f"conformance {label}: error: {listing} lists no scenario")
            return 2
        results = load_results(Path(results_dir), prefix)
        return 0 if judge(label, sorted(set(listed) | set(results)), results, {}) else 1
    if len(argv) >= 4 and argv[0] == "single":
        label, results_dir = argv[1], argv[2]
        prefix = "server-" if label.startswith("server") else ""
        results = load_results(Path(results_dir), prefix)
        return 0 if judge(label, argv[3:], results, {}) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
