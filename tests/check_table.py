"""Reading `sdpa-lab check`'s wrapped table back into its rows, for the tests of what it lists."""

from __future__ import annotations

from sdpa_lab.claims.verdicts import CLAIM_WIDTH, COUNT_WIDTH, TEXT_START, VERDICT_WIDTH


def table_rows(text: str) -> list[tuple[str, str, str, str]]:
    """(claim, checks, verdict, text) per row of the table (the lines before its first blank line), each
    column's wrapped lines joined again; a row starts where its text column's line is not indented."""
    rows: list[list[str]] = []
    v0 = CLAIM_WIDTH + 1 + COUNT_WIDTH + 2
    for line in text.split("\n\n")[0].splitlines():
        cells = [line[:CLAIM_WIDTH], line[CLAIM_WIDTH + 1:CLAIM_WIDTH + 1 + COUNT_WIDTH],
                 line[v0:v0 + VERDICT_WIDTH], line[TEXT_START:]]
        if cells[3] and not cells[3].startswith("  "):
            rows.append([c.strip() for c in cells])
        else:
            for i, c in enumerate(cells):
                if c.strip():
                    rows[-1][i] = f"{rows[-1][i]} {c.strip()}".strip()
    return [tuple(r) for r in rows]
