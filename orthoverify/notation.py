"""The paper's notation in plain text: ASCII mathematics (``C~'``, ``||x|| <= 1``, ``sigma``) and
SymPy's printing (``x**3``, ``CRootOf(p, k)``) written as a reader of the paper writes them
(``C̃′``, ``‖x‖ ≤ 1``, ``σ``, x³, a root by value and polynomial). Standard library only, so the
report, the command line and the pytest plugin (which loads in every pytest session) share one
implementation without loading NumPy or SymPy. Nothing is evaluated: text in, text out.
"""

from __future__ import annotations

import re

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "eps": "ε", "epsilon": "ε", "theta": "θ",
    "lambda": "λ", "rho": "ρ", "sigma": "σ", "Sigma": "Σ", "pi": "π", "phi": "φ", "eta": "η",
}  # fmt: skip
_TYPESET: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b([A-Za-z])bar\b"), "\\1\u0304"),  # Cbar -> C̄, hbar -> h̄
    (re.compile(r"\b([A-Za-z])_bar\b"), "\\1\u0304"),
    (re.compile(r"\bsigma_(min|max)\b"), "σ_\\1"),
    (re.compile(r"([A-Za-z])~"), "\\1\u0303"),  # C~ -> C̃, UC~ -> UC̃
    (re.compile(r"(?<![A-Za-z])((?:[A-Za-z][\u0303\u0304]?){1,2})''"), "\\1″"),  # R'' -> R″
    (re.compile(r"(?<![A-Za-z])((?:[A-Za-z][\u0303\u0304]?){1,2})'(?!s\b)"), "\\1′"),  # W' -> W′, C̃' -> C̃′
    (re.compile(r"(?<= )\|\|(?= )"), "|"),  # " || " between two findings is a separator, not a norm
    (re.compile(r"\|\|"), "‖"),
    (re.compile(r"<="), "≤"),
    (re.compile(r">="), "≥"),
    (re.compile(r"!="), "≠"),
    (re.compile(r"\+-"), "±"),
    (re.compile(r"(?<![<-])->"), "→"),
    (re.compile(r"(?<=[\w)\]|′²³‖\u0303\u0304]) - (?=[\w(|√‖])"), " − "),  # a binary minus: 7n - 7 -> 7n − 7
    (re.compile(r"(?:(?<=[=(,] )|(?<=[(,]))-(?=[A-Za-z(√‖\d])"), "−"),  # a leading minus: = -C~_k, (R,-1)
    (re.compile(r"(?<=\)) o (?=[A-Za-z(])"), " ∘ "),  # the Hadamard product: (h~C~') o B
    (re.compile(r"(?<=[)}\]])'"), "′"),  # (W^j)' -> (W^j)′, vec(X)' -> vec(X)′
    (re.compile(r"\bprod_"), "∏_"),
    (re.compile(r"(?<=\^[{(])(\w+) x (\w+)(?=[})])"), "\\1 × \\2"),  # R^{n x n} -> R^{n × n}
    (re.compile(r"\bsqrt\("), "√("),
    (re.compile(r"\^-1\b"), "⁻¹"),
    (re.compile(r"\^-T\b"), "⁻ᵀ"),
    (re.compile(r"\^2\b"), "²"),
    (re.compile(r"\^3\b"), "³"),
    (re.compile(r"\bsum_"), "Σ_"),
    (re.compile(r"\b(" + "|".join(_GREEK) + r")(?![A-Za-z0-9])"), ""),  # lambda_j -> λ_j too
    (re.compile(r"(?<=[α-ωΑ-Ω])'"), "′"),  # sigma'(z) -> σ′(z)
    (re.compile(r"\bd(" + "|".join(_GREEK) + r")(?![A-Za-z0-9])"), ""),  # dL/dsigma -> dL/dσ
]


def typeset(text: str) -> str:
    """Mathematics written in ASCII (``C~'h'``, ``Cbar'``, ``||x|| <= 1``, ``sigma``) in Unicode
    (``C̃′h′``, ``C̄′``, ``‖x‖ ≤ 1``, ``σ``), SymPy's powers ``s**2`` as s²: plain text, no markup,
    no network. Identifiers joined by underscores (check names, ``sigma_min``) are left alone. A SymPy root
    (``CRootOf(p, k) = v``) reads as its value and polynomial, as in :func:`sympy_text`."""
    out = _powers(_CROOT.sub(_root, str(text)))
    for pattern, repl in _TYPESET:
        if repl:
            out = pattern.sub(repl, out)
        else:
            out = pattern.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + _GREEK[m.group(1)], out)
    return out


def shorten(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters, cut at a word with an ellipsis."""
    one = " ".join(str(text).split())
    if len(one) <= limit:
        return one
    cut = one[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " …"


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_ORDINAL = ("smallest", "second smallest", "third smallest", "fourth smallest", "fifth smallest")
_CROOT = re.compile(r"CRootOf\(([^(),]+), (\d+)\)(?: = (-?\d+\.\d+))?")
_INTERNAL_LABEL = re.compile(r"(^|\| )[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+ \[([^\[\]]+)\] ")
"""A transcribed proof line's internal label and its place in the paper in brackets, as results
written before the label was dropped record it (``proof.tr3 [App. A, proof of Thm 2, ...] is``):
the place is kept, the label goes."""


def _superscripts(text: str) -> str:
    """SymPy's powers as superscripts: ``x**3`` as x³, ``x**(-1)`` as x⁻¹."""
    return re.sub(r"\*\*\(?(-?\d+)\)?", lambda m: m.group(1).translate(_SUPERSCRIPT), text)


def _juxtaposed(text: str) -> str:
    """A number times a symbol or a bracket written side by side: ``20*x`` as 20x, ``6*(`` as 6(."""
    return re.sub(r"(?<=\d)\*(?=[A-Za-z(])", "", text)


def _powers(text: str) -> str:
    """SymPy's powers and numeric products as a reader writes them (``6*s**2`` as 6s²)."""
    return _juxtaposed(_superscripts(text))


def _polynomial(text: str) -> str:
    """SymPy's ``20*x**3 - 10*x - 1`` as ``20x³ − 10x − 1``."""
    return _powers(text).replace(" - ", " − ")


def _root(m: re.Match[str]) -> str:
    """``CRootOf(p, k) = v`` as ``v… (the smallest real root of p)``: the value first, to four
    digits, then which root of which polynomial (SymPy counts the real roots first, in order)."""
    poly, k, value = _polynomial(m.group(1)), int(m.group(2)), m.group(3)
    if value is None:
        return f"root number {k} of {poly}"
    which = _ORDINAL[k] if k < len(_ORDINAL) else f"{k + 1}th smallest"
    return f"{float(value):.4g}… (the {which} real root of {poly})"


def sympy_text(text: str) -> str:
    """SymPy's printing of an exact value in the paper's notation: roots by value and polynomial,
    ``x**3`` as x³, ``20*x`` as 20x, ``(a)*(b)`` as (a)(b), other products with ·, ``sqrt(2)`` as
    √2, ``4*I/5`` as 4i/5, ``lam`` as λ. Plain text in, plain text out; nothing is evaluated."""
    out = _superscripts(_CROOT.sub(_root, str(text)))
    out = re.sub(r"(\d)\*I\b", r"\1i", out)
    out = re.sub(r"(?<=[\[ ,-])I(?=[\],])", "i", out)
    out = _juxtaposed(out)
    out = out.replace(")*(", ")(")
    out = re.sub(r"(?<=[\w)⁰¹²³⁴⁵⁶⁷⁸⁹])\*(?=[\w(])", "·", out)
    out = re.sub(r"\bsqrt\((\d+)\)", r"√\1", out)
    return re.sub(r"\blam\b", "λ", out)


def math_text(text: str) -> str:
    """A counterexample's quantity or value as a reader of the paper writes it: SymPy notation
    (:func:`sympy_text`) and ASCII mathematics (:func:`typeset`) in Unicode, minus signs as −."""
    out = typeset(sympy_text(_INTERNAL_LABEL.sub(r"\1\2 ", str(text))))
    out = out.replace(" - ", " − ")
    out = re.sub(r"(?<![\w)\]}.])-(?=[\w(])", "−", out)
    out = re.sub(r"(?<=\w)(?<![\d.]e)-(?=\d+[)}])", "−", out)  # n(n-1) -> n(n−1), never 2.1e-52)
    out = re.sub(r"(\w\([\w+−]+\)) (\d+), counted", r"\1 = \2, counted", out)  # a printed formula's value
    out = re.sub(r"(?<=\S) o (?=\S)", " ∘ ", out)  # the Hadamard product
    out = re.sub(r"\b(\w) x (\w)\b", r"\1 × \2", out)  # 2 x 2, m x m
    out = re.sub(r"'(-?\d[\d.e+-]*)'", r"\1", out)  # ['7.38398'] -> [7.38398]
    for word, readable in _READABLE.items():
        out = re.sub(rf"\b{word}\b", readable, out)
    return out


_READABLE = {
    "printed_row": "eq. 3 as printed with dC/dh a row",
    "printed_column": "eq. 3 as printed with dC/dh a column",
    "relu": "ReLU",
}
"""Names of code paths that some values quote, in the paper's words."""
