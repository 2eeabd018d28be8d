"""Reading `sdpa-lab check`'s wrapped table back into its rows, for the tests of what it lists."""

from __future__ import annotations

from sdpa_lab.claims.verdicts import CHECK_INDENT, CLAIM_WIDTH, COUNT_WIDTH, K_WIDTH, MARGIN_HEADER

# Where a claim's row's columns end: its id, its count of checks, its k (then its verdict, then its margin's words).
COUNT_END = CLAIM_WIDTH + 1 + COUNT_WIDTH
K_END = COUNT_END + 1 + K_WIDTH


def table_rows(text: str) -> list[tuple[str, str, str, str]]:
    """(claim, checks, verdict, text) per row of the table (the lines before its first blank line), each wrapped
    row's lines joined again: a claim's row (its columns placed by the header line), and beneath it a check in
    full ("  verdict: line", as ("", "", verdict, line)) or why it is not decided (("", "", "why", text))."""
    lines = text.split("\n\n")[0].splitlines()
    v0, t0 = K_END + 1, lines[0].index(MARGIN_HEADER)
    rows: list[list[str]] = []
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if indent == 0:  # a claim's row (or the header) starts
            rows.append([line[:CLAIM_WIDTH].strip(), line[CLAIM_WIDTH + 1:COUNT_END].strip(), line[v0:t0].strip(),
                         line[t0:].strip()])
        elif indent == len(CHECK_INDENT):  # a check, or why, beneath its claim
            label, _, rest = line.strip().partition(": ")
            rows.append(["", "", label, rest])
        elif indent == 2 * len(CHECK_INDENT):  # a check's line, continued
            rows[-1][3] = f"{rows[-1][3]} {line.strip()}"
        else:  # a claim's row, continued: its verdict inside its column, its margin's words after
            rows[-1][2] = f"{rows[-1][2]} {line[v0:t0].strip()}".strip()
            rows[-1][3] = f"{rows[-1][3]} {line[t0:].strip()}".strip()
    return [tuple(r) for r in rows]


def claim_ks(text: str) -> dict[str, str]:
    """Each claim's k as its row shows it (empty for a claim without statistical checks of its own)."""
    lines = text.split("\n\n")[0].splitlines()[1:]
    return {line[:CLAIM_WIDTH].strip(): line[COUNT_END + 1:K_END].strip() for line in lines
            if line[:1].strip()}
