#!/usr/bin/env python3
"""Checks that the README's table of findings matches the codes the sources emit.

Every finding code in the sources must have a row, every row must name a code the sources emit,
and a severity written next to a code in the sources (Severity::Warning) must appear in that
row's severity column. Exit status 1 with one line per mismatch.
usage: scripts/check-findings-table.py [SOURCE_DIR]
"""
import pathlib
import re
import sys

SOURCE_DIRS = ("analyzer", "cli", "loader", "matrix", "report")
CODE = r'"([a-z][a-z0-9]*(?:-[a-z0-9]+)+)"'
# A code literal followed, in the same statement, by the severity it is given.
WITH_SEVERITY = re.compile(CODE + r'([^;"]{0,120}?Severity::\w+(?:[^;"]{0,40}?Severity::\w+)?)')
# A code that opens a Finding's braces, or is assigned to one, or is passed to a helper that
# builds one of a fixed severity.
BRACED = re.compile(r'\bFinding\s*\w*\s*\{\s*' + CODE)
ASSIGNED = re.compile(r'\bcode\s*=\s*' + CODE)
HELPERS = {"info": "info", "error": "error", "fail": "error", "input_error": "error",
           "image_finding": None, "finding": None}
HELPER_CALL = re.compile(r'\b(' + "|".join(HELPERS) + r')\(\s*' + CODE)
ROW = re.compile(r'^\| ((?:`[a-z0-9-]+`(?:, )?)+) \| ([^|]*) \|', re.M)


def emitted_codes(root):
    codes = {}
    for directory in SOURCE_DIRS:
        for path in sorted((root / directory).rglob("*.cpp")):
            text = path.read_text(encoding="utf-8")
            for m in WITH_SEVERITY.finditer(text):
                severities = {s.lower() for s in re.findall(r'Severity::(\w+)', m.group(2))}
                codes.setdefault(m.group(1), set()).update(severities)
            for pattern in (BRACED, ASSIGNED):
                for m in pattern.finditer(text):
                    codes.setdefault(m.group(1), set())
            for m in HELPER_CALL.finditer(text):
                severity = HELPERS[m.group(1)]
                codes.setdefault(m.group(2), set()).update({severity} if severity else set())
    return codes


def documented_codes(readme):
    section = readme.split("\n## Findings\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for m in ROW.finditer(section):
        for code in re.findall(r'`([a-z0-9-]+)`', m.group(1)):
            rows[code] = set(re.findall(r'\b(error|warning|info)\b', re.sub(r'`[^`]*`', '', m.group(2).lower())))
    return rows


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    codes = emitted_codes(root)
    rows = documented_codes((root / "README.md").read_text(encoding="utf-8"))
    problems = []
    for code in sorted(codes):
        if code not in rows:
            problems.append(f"README.md: finding '{code}' is emitted by the sources but has no row in the Findings table")
            continue
        for severity in sorted(codes[code]):
            if severity not in rows[code]:
                problems.append(f"README.md: finding '{code}' is given severity {severity} in the sources, "
                                f"but its row's severity column names only {', '.join(sorted(rows[code])) or 'none'}")
    for code in sorted(set(rows) - set(codes)):
        problems.append(f"README.md: the Findings table has a row for '{code}', which no source emits")
    for line in problems:
        print(line)
    print(f"{len(codes)} finding codes in the sources, {len(rows)} in the README table, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
