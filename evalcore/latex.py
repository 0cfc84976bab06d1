"""LaTeX escaping for text that came from uploads or settings (system, metric and criterion
names)."""

from __future__ import annotations

LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # Under pdfLaTeX's default OT1 font encoding these print as ¡, ¿ and a dash.
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell (system names come from uploads)."""
    return "".join(LATEX_SPECIAL.get(c, c) for c in " ".join(text.splitlines()))
