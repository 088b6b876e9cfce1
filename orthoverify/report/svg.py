"""Self-contained SVG figures for verification reports (standard library only).

Each function returns one ``<svg>...</svg>`` string that works both inline in an HTML5 page and as
a standalone ``.svg`` file: it declares the SVG namespace, uses presentation attributes rather than
a ``<style>`` element (a style element inside inline SVG would leak into the whole page), prefixes
every id with the caller's ``ident`` (so several charts share one page), is ASCII-only (non-ASCII
text becomes numeric character references, so the file's encoding never matters) and is
byte-for-byte deterministic. Figures scale down on narrow screens (``width="100%"`` with a
``max-width`` of their natural size) and carry ``role="img"`` with a ``<title>`` and ``<desc>``.

Values that cannot be drawn (NaN, infinities, non-positive values on a log axis, histogram
values outside explicit bin edges) are left out and counted in a note inside the figure, so a
reader is never shown a silently truncated picture.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from orthoverify.errors import InputError

__all__ = ["RefLine", "Series", "histogram", "line_chart"]

PALETTE: tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
"""Okabe-Ito colours, in order; colour-blind safe."""

# Marker shapes centred on (0, 0), cycled independently of the colours (7 shapes x 8 colours).
_SHAPES: tuple[str, ...] = (
    '<path d="M-3.6,0a3.6,3.6 0 1,0 7.2,0a3.6,3.6 0 1,0-7.2,0"',  # circle
    '<path d="M-3.2-3.2h6.4v6.4h-6.4z"',  # square
    '<path d="M0-4.4L4,2.6H-4z"',  # triangle
    '<path d="M0-4.6L4.6,0 0,4.6-4.6,0z"',  # diamond
    '<path d="M0,4.4L4-2.6H-4z"',  # triangle pointing down
    '<path d="M-1.4-4.4h2.8v3h3v2.8h-3v3h-2.8v-3h-3v-2.8h3z"',  # plus
    '<path transform="rotate(45)" d="M-1.4-4.6h2.8v3.2h3.2v2.8h-3.2v3.2h-2.8v-3.2h-3.2v-2.8h3.2z"',  # cross
)

_IDENT_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_FONT = "system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
_FS = 12  # base font size in viewBox units
_CHAR_W = 6.8  # estimated average glyph width at _FS, for layout only
_GRID = "#e3e3e3"
_AXIS = "#444"
_REF = "#b3261e"  # thresholds and bounds: a dark red that stands out from the grid and the data
_MUTED = "#555"
_HALO = ' stroke="#fff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"'  # keeps labels legible over data
_MIN_SIZE = 200
_MAX_BINS = 10_000
_HIST_OPACITY = "0.4"


@dataclass(frozen=True)
class Series:
    """One data series of a line chart; ``x`` and ``y`` are converted with ``float()``."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    style: Literal["line", "points", "line+points"] = "line+points"
    dashed: bool = False


@dataclass(frozen=True)
class RefLine:
    """A horizontal (axis="y") or vertical (axis="x") reference line, e.g. a threshold."""

    value: float
    label: str
    axis: Literal["x", "y"] = "y"


# --------------------------------------------------------------------------- text and numbers


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _esc(text: object) -> str:
    """Escape text for XML content and double- or single-quoted attributes; drop XML-invalid chars."""
    s = _XML_INVALID.sub("", str(text))
    return (
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;")
    )


def _n(v: float) -> str:
    """A coordinate rounded to 2 decimals, without trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _g(v: float) -> str:
    """A data value for prose (desc, notes): 4 significant digits, compact exponent."""
    s = f"{v:.4g}"
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant}e{int(exp)}"
    return s


def _text_width(text: str, size: float = _FS) -> float:
    """Rough rendered width of ``text``; only used to lay out labels and the legend."""
    return len(text) * _CHAR_W * size / _FS


def _to_floats(values: Sequence[object], what: str) -> list[float]:
    out: list[float] = []
    for i, v in enumerate(values):
        try:
            out.append(float(v))  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what}: element {i} ({v!r}) is not convertible to float") from exc
    return out


def _usable(v: float, log: bool) -> bool:
    # |v| > 1e300 is treated like infinity: spans of such values overflow to inf.
    return math.isfinite(v) and abs(v) <= 1e300 and (v > 0 or not log)


def _check_common(ident: str, width: int, height: int) -> None:
    if not isinstance(ident, str) or not _IDENT_RE.fullmatch(ident):
        raise InputError(f"ident must match [A-Za-z][A-Za-z0-9_-]*, got {ident!r}")
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int) or v < _MIN_SIZE:
            raise InputError(f"{name} must be an int >= {_MIN_SIZE}, got {v!r}")


# --------------------------------------------------------------------------- axes and ticks


@dataclass(frozen=True)
class _Tick:
    t: float  # position in axis space (log10 of the value on a log axis)
    text: str
    sup: str = ""  # superscript exponent drawn after ``text``, if any


@dataclass(frozen=True)
class _Axis:
    lo: float  # axis-space range (log10 on a log axis)
    hi: float
    log: bool
    ticks: tuple[_Tick, ...]

    def label_width(self) -> float:
        return max((_text_width(k.text) + _text_width(k.sup, 9) for k in self.ticks), default=0.0)


def _lin_range(vals: Sequence[float], pad: float) -> tuple[float, float]:
    """Data range widened by ``pad`` of its span; a constant or single value gets a +-10% window."""
    if not vals:
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    if hi - lo <= 1e-12 * max(abs(lo), abs(hi)):
        d = abs(lo) * 0.1 or 1.0
        return lo - d, hi + d
    span = hi - lo
    return lo - pad * span, hi + pad * span


def _log_range(vals: Sequence[float], pad: float) -> tuple[float, float]:
    """Range in log10 space; a constant gets one decade around it."""
    if not vals:
        return 0.0, 1.0
    lo, hi = math.log10(min(vals)), math.log10(max(vals))
    if hi - lo < 1e-9:
        return lo - 0.5, hi + 0.5
    span = hi - lo
    return lo - pad * span, hi + pad * span


def _nice_step(span: float, n: float, min_step: float = 0.0) -> float:
    raw = span / max(n, 1.0)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = 10 * mag
    for m in (1, 2, 5):
        if m * mag >= raw * (1 - 1e-9):
            step = m * mag
            break
    return max(step, min_step)


def _lin_ticks(lo: float, hi: float, n: float, integer: bool = False) -> list[_Tick]:
    """Ticks at multiples of a 1-2-5 step inside [lo, hi], labelled with just enough digits."""
    step = _nice_step(hi - lo, n, 1.0 if integer else 0.0)
    k0, k1 = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    if k1 - k0 > 200:  # cannot happen with a sane step; guard against float pathologies
        k1 = k0 + 200
    vals = [0.0 if k == 0 else k * step for k in range(k0, k1 + 1)]
    exp_step = math.floor(math.log10(step) + 1e-9)
    vmax = max((abs(v) for v in vals), default=0.0)
    sci = step < 1e-4 or vmax >= 1e6
    ticks = []
    for v in vals:
        if sci:
            p = max(0, math.floor(math.log10(vmax)) - exp_step)
            mant, exp = f"{v:.{p}e}".split("e")
            text = "0" if v == 0 else f"{mant}e{int(exp)}"
        else:
            text = f"{v:.{max(0, -exp_step)}f}"
        ticks.append(_Tick(v, text))
    return ticks


def _log_ticks(lo: float, hi: float, n: float) -> list[_Tick]:
    """Decade ticks (every k-th decade on wide ranges); 2 and 5 (or 1..9) ticks on narrow ones."""
    span = hi - lo
    eps = 1e-9
    marks: list[tuple[int, int]] = []  # (mantissa, exponent)
    if span < 2.2:
        mults = (1, 2, 5) if span >= 0.6 else tuple(range(1, 10))
        for e in range(math.floor(lo), math.ceil(hi) + 1):
            marks += [(m, e) for m in mults if lo - eps <= e + math.log10(m) <= hi + eps]
    else:
        stride = max(1, math.ceil(span / (1.5 * max(n, 2.0))))  # decade labels are short: allow denser ticks
        marks = [(1, e) for e in range(math.ceil(lo - eps), math.floor(hi + eps) + 1) if e % stride == 0]
    if len(marks) < 2:  # very narrow range: plain 1-2-5 ticks on the values themselves
        vlo, vhi = 10.0**lo, 10.0**hi
        return [_Tick(math.log10(k.t), k.text) for k in _lin_ticks(vlo, vhi, n) if k.t > 0]
    plain = all(-3 <= e <= 5 for _, e in marks)
    ticks = []
    for m, e in marks:
        t = e + math.log10(m)
        if plain:
            text = str(m * 10**e) if e >= 0 else f"{m * 10.0**e:.{-e}f}"
            ticks.append(_Tick(t, text))
        else:
            sup = str(e).replace("-", "\u2212")
            ticks.append(_Tick(t, "10" if m == 1 else f"{m}\u00d710", sup))
    return ticks


def _axis(lo: float, hi: float, log: bool, length: float, spacing: float, integer: bool = False) -> _Axis:
    n = max(2.0, length / spacing)
    ticks = _log_ticks(lo, hi, n) if log else _lin_ticks(lo, hi, n, integer)
    return _Axis(lo, hi, log, tuple(ticks))


# --------------------------------------------------------------------------- the shared frame

_LegendSample = Callable[[float, float], str]


@dataclass
class _Frame:
    """Plot geometry plus everything around the data: title, axes, grid, legend, notes."""

    ident: str
    title: str
    xlabel: str
    ylabel: str
    width: int
    height: int
    xa: _Axis
    ya: _Axis
    x0: float
    x1: float
    y0: float
    y1: float
    title_lines: list[str]

    def px(self, t: float) -> float:
        return self.x0 + (t - self.xa.lo) / (self.xa.hi - self.xa.lo) * (self.x1 - self.x0)

    def py(self, t: float) -> float:
        return self.y1 - (t - self.ya.lo) / (self.ya.hi - self.ya.lo) * (self.y1 - self.y0)

    def tx(self, v: float) -> float:
        """Pixel x of a data value (which must be usable on this axis)."""
        return self.px(math.log10(v) if self.xa.log else v)

    def ty(self, v: float) -> float:
        return self.py(math.log10(v) if self.ya.log else v)


def _make_frame(
    *,
    ident: str,
    title: str,
    xlabel: str,
    ylabel: str,
    width: int,
    height: int,
    xrange: tuple[float, float, bool],
    yrange: tuple[float, float, bool],
    y_integer: bool = False,
) -> _Frame:
    """Lay out the plot area: title on top, y tick labels on the left, x ticks and label below."""
    title_lines = textwrap.wrap(title, max(10, int((width - 24) / (_CHAR_W * 14 / _FS)))) if title else []
    top = 24 + 18 * (len(title_lines) - 1) + 16 if title_lines else 16
    y0, y1 = float(top), float(height - 46)
    ya = _axis(yrange[0], yrange[1], yrange[2], y1 - y0, 45.0, y_integer)
    x0 = (24.0 if ylabel else 8.0) + ya.label_width() + 9
    x1 = width - 20.0
    xa = _axis(xrange[0], xrange[1], xrange[2], x1 - x0, 80.0)
    return _Frame(ident, title, xlabel, ylabel, width, height, xa, ya, x0, x1, y0, y1, title_lines)


def _tick_text(k: _Tick, x: float, y: float, anchor: str, cls: str) -> str:
    sup = f'<tspan dy="-5" font-size="9">{_esc(k.sup)}</tspan>' if k.sup else ""
    return f'<text class="{cls}" x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}">{_esc(k.text)}{sup}</text>'


def _ref_lines(f: _Frame, refs: Sequence[RefLine]) -> tuple[list[str], list[str]]:
    """Dashed reference lines in a strong colour (a threshold or bound must read at a glance, over
    pale data too), clipped to the plot, and their labels (drawn on top, in the same colour)."""
    lines, labels = [], []
    for r in refs:
        v = float(r.value)
        if r.axis == "x":
            if not _usable(v, f.xa.log):
                continue
            x = f.tx(v)
            lines.append(f"M{_n(x)},{_n(f.y0)}V{_n(f.y1)}")
            right = x > (f.x0 + f.x1) / 2
            lx, anchor = (x - 4, "end") if right else (x + 4, "start")
            labels.append(
                f'<text class="ov-ref" x="{_n(lx)}" y="{_n(f.y0 + 13)}" text-anchor="{anchor}" font-size="11" '
                f'font-weight="600" fill="{_REF}"{_HALO}>{_esc(r.label)}</text>'
            )
        else:
            if not _usable(v, f.ya.log):
                continue
            y = f.ty(v)
            lines.append(f"M{_n(f.x0)},{_n(y)}H{_n(f.x1)}")
            below = y < f.y0 + 16
            ly = y + 13 if below else y - 4
            labels.append(
                f'<text class="ov-ref" x="{_n(f.x1 - 4)}" y="{_n(ly)}" text-anchor="end" font-size="11" '
                f'font-weight="600" fill="{_REF}"{_HALO}>{_esc(r.label)}</text>'
            )
    path = (
        [f'<path d="{"".join(lines)}" fill="none" stroke="{_REF}" stroke-width="1.8" stroke-dasharray="7 4"/>']
        if lines
        else []
    )
    return path, labels


def _check_refs(refs: Sequence[RefLine]) -> None:
    for r in refs:
        if r.axis not in ("x", "y"):
            raise InputError(f"reference line {r.label!r}: axis must be 'x' or 'y', got {r.axis!r}")
        _to_floats([r.value], f"reference line {r.label!r}")


def _ref_values(refs: Sequence[RefLine], axis: str, log: bool) -> list[float]:
    return [v for r in refs if r.axis == axis for v in [float(r.value)] if _usable(v, log)]


def _render(
    f: _Frame,
    *,
    desc: str,
    defs: Sequence[str],
    data: Sequence[str],
    refs: Sequence[RefLine],
    legend: Sequence[tuple[str, _LegendSample]],
    notes: Sequence[str],
    empty: bool,
) -> str:
    """Assemble the figure around the (already positioned) data elements."""
    ident, w = f.ident, f.width
    out: list[str] = []
    # Grid, ticks and tick labels.
    grid: list[str] = []
    marks: list[str] = []
    labels: list[str] = []
    for k in f.xa.ticks:
        x = _n(f.px(k.t))
        grid.append(f"M{x},{_n(f.y0)}V{_n(f.y1)}")
        marks.append(f"M{x},{_n(f.y1)}v5")
        labels.append(_tick_text(k, f.px(k.t), f.y1 + 18, "middle", "ov-xtick"))
    for k in f.ya.ticks:
        yt = _n(f.py(k.t))
        grid.append(f"M{_n(f.x0)},{yt}H{_n(f.x1)}")
        marks.append(f"M{_n(f.x0)},{yt}h-5")
        labels.append(_tick_text(k, f.x0 - 8, f.py(k.t) + 4, "end", "ov-ytick"))
    if grid:
        out.append(f'<path d="{"".join(grid)}" fill="none" stroke="{_GRID}" stroke-width="1"/>')
    axes = f"M{_n(f.x0)},{_n(f.y0)}V{_n(f.y1)}H{_n(f.x1)}" + "".join(marks)
    out.append(f'<path d="{axes}" fill="none" stroke="{_AXIS}" stroke-width="1"/>')
    out.append(f'<g fill="#222">{"".join(labels)}</g>')
    if f.xlabel:
        out.append(
            f'<text x="{_n((f.x0 + f.x1) / 2)}" y="{_n(f.y1 + 37)}" text-anchor="middle">{_esc(f.xlabel)}</text>'
        )
    if f.ylabel:
        cy = (f.y0 + f.y1) / 2
        out.append(f'<text transform="rotate(-90)" x="{_n(-cy)}" y="16" text-anchor="middle">{_esc(f.ylabel)}</text>')
    # Data and reference lines, clipped to the plot area.
    ref_path, ref_labels = _ref_lines(f, refs)
    out.append(f'<g clip-path="url(#{ident}-clip)">{"".join(ref_path)}{"".join(data)}</g>')
    out.extend(ref_labels)
    if empty:
        out.append(
            f'<text class="ov-nodata" x="{_n((f.x0 + f.x1) / 2)}" y="{_n((f.y0 + f.y1) / 2 + 5)}" '
            f'text-anchor="middle" font-size="14" fill="{_MUTED}">no data</text>'
        )
    # Legend below the plot, wrapping to as many rows as needed.
    y = float(f.height)
    items: list[str] = []
    lx0 = row_x = f.x0
    row_h = 0.0
    avail = w - 12 - lx0
    for label, sample in legend:
        lines = textwrap.wrap(label, max(8, int((avail - 34) / _CHAR_W))) or [""]
        iw = 34 + max(_text_width(s) for s in lines)
        ih = 16.0 * len(lines) + 2
        if row_x > lx0 and row_x + iw > lx0 + avail:
            y += row_h
            row_x, row_h = lx0, 0.0
        cy = y + 9
        tsp = "".join(
            f'<tspan x="{_n(row_x + 32)}" dy="{0 if i == 0 else 16}">{_esc(s)}</tspan>' for i, s in enumerate(lines)
        )
        items.append(f'{sample(row_x + 13, cy)}<text x="{_n(row_x + 32)}" y="{_n(cy + 4)}">{tsp}</text>')
        row_x += iw + 18
        row_h = max(row_h, ih)
    y += row_h
    if items:
        out.append(f'<g class="ov-legend">{"".join(items)}</g>')
    for note in notes:
        y += 16
        out.append(
            f'<text class="ov-note" x="{_n(f.x0)}" y="{_n(y)}" font-size="11" font-style="italic" '
            f'fill="{_MUTED}">{_esc(note)}</text>'
        )
    h = math.ceil(y + 10)
    # Title.
    head = [
        f'<text x="12" y="{24 + 18 * i}" font-size="14" font-weight="bold">{_esc(s)}</text>'
        for i, s in enumerate(f.title_lines)
    ]
    clip = (
        f'<clipPath id="{ident}-clip"><rect x="{_n(f.x0)}" y="{_n(f.y0)}" width="{_n(f.x1 - f.x0)}" '
        f'height="{_n(f.y1 - f.y0)}"/></clipPath>'
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="100%" '
        f'style="max-width:{w}px;height:auto" role="img" aria-labelledby="{ident}-title {ident}-desc" '
        f'font-family="{_esc(_FONT)}" font-size="{_FS}">'
        f'<title id="{ident}-title">{_esc(f.title)}</title><desc id="{ident}-desc">{_esc(desc)}</desc>'
        f"<defs>{clip}{''.join(defs)}</defs>"
        f'<rect width="{w}" height="{h}" fill="#fff"/>' + "".join(head) + "".join(out) + "</svg>"
    )
    return svg.encode("ascii", "xmlcharrefreplace").decode("ascii")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --------------------------------------------------------------------------- line chart


def line_chart(
    series: Sequence[Series],
    *,
    ident: str,
    title: str,
    xlabel: str,
    ylabel: str,
    xlog: bool = False,
    ylog: bool = False,
    refs: Sequence[RefLine] = (),
    width: int = 640,
    height: int = 360,
) -> str:
    """Draw series as lines and/or markers on linear or log axes; return one ``<svg>`` element.

    Series are told apart by colour (Okabe-Ito) and marker shape; points that cannot be drawn
    (non-finite, or <= 0 on a log axis) are left out, break the line, and are counted in a note.
    """
    _check_common(ident, width, height)
    _check_refs(refs)
    cleaned: list[tuple[Series, list[tuple[float, float] | None]]] = []
    for s in series:
        if s.style not in ("line", "points", "line+points"):
            raise InputError(f"series {s.label!r}: style must be 'line', 'points' or 'line+points', got {s.style!r}")
        if len(s.x) != len(s.y):
            raise InputError(f"series {s.label!r}: x has {len(s.x)} values but y has {len(s.y)}")
        xs = _to_floats(s.x, f"series {s.label!r} x")
        ys = _to_floats(s.y, f"series {s.label!r} y")
        pts = [(a, b) if _usable(a, xlog) and _usable(b, ylog) else None for a, b in zip(xs, ys, strict=True)]
        cleaned.append((s, pts))

    good = [p for _, pts in cleaned for p in pts if p is not None]
    all_x = [p[0] for p in good] + _ref_values(refs, "x", xlog)
    all_y = [p[1] for p in good] + _ref_values(refs, "y", ylog)
    xr = _log_range(all_x, 0.04) if xlog else _lin_range(all_x, 0.04)
    yr = _log_range(all_y, 0.06) if ylog else _lin_range(all_y, 0.06)
    f = _make_frame(
        ident=ident,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        width=width,
        height=height,
        xrange=(*xr, xlog),
        yrange=(*yr, ylog),
    )

    defs, data, legend, parts = [], [], [], []
    dropped_total = 0
    for i, (s, pts) in enumerate(cleaned):
        colour, mid = PALETTE[i % len(PALETTE)], f"{ident}-m{i}"
        markers = s.style != "line"
        stroke = s.style != "points"
        if markers:
            defs.append(
                f'<marker id="{mid}" viewBox="-6 -6 12 12" markerWidth="12" markerHeight="12" '
                f'markerUnits="userSpaceOnUse">{_SHAPES[i % len(_SHAPES)]} fill="{colour}" stroke="#fff" '
                f'stroke-width="0.7"/></marker>'
            )
        attrs = (
            f'fill="none" stroke="{colour if stroke else "none"}" stroke-width="1.8" stroke-linejoin="round" '
            f'stroke-linecap="round"' + (' stroke-dasharray="6 4"' if s.dashed and stroke else "")
        )
        mk = f' marker-start="url(#{mid})" marker-mid="url(#{mid})" marker-end="url(#{mid})"' if markers else ""
        # Consecutive drawable points form one sub-path; a lone point gets a zero-length segment so
        # that it still shows (round cap for lines, a marker otherwise).
        runs: list[list[tuple[float, float]]] = [[]]
        for p in pts:
            if p is None:
                if runs[-1]:
                    runs.append([])
            else:
                runs[-1].append((f.tx(p[0]), f.ty(p[1])))
        d = "".join(
            "M" + " ".join(f"{_n(a)},{_n(b)}" for a, b in run) + ("h0" if len(run) == 1 else "") for run in runs if run
        )
        if d:
            data.append(f'<path class="ov-series" d="{d}" {attrs}{mk}><title>{_esc(s.label)}</title></path>')

        def sample(x: float, y: float, attrs: str = attrs, mid: str = mid, markers: bool = markers) -> str:
            mk = f' marker-mid="url(#{mid})"' if markers else ""
            return f'<path d="M{_n(x - 11)},{_n(y)} {_n(x)},{_n(y)} {_n(x + 11)},{_n(y)}" {attrs}{mk}/>'

        legend.append((s.label, sample))
        shown = [p for p in pts if p is not None]
        dropped = len(pts) - len(shown)
        dropped_total += dropped
        if shown:
            xs_ = [p[0] for p in shown]
            ys_ = [p[1] for p in shown]
            part = (
                f"Series {s.label}: {_plural(len(shown), 'point')}, x from {_g(min(xs_))} to {_g(max(xs_))}, "
                f"y from {_g(min(ys_))} to {_g(max(ys_))}"
            )
        else:
            part = f"Series {s.label}: no points shown"
        parts.append(part + (f" ({dropped} not shown)." if dropped else "."))

    scale = ", ".join(a for a, on in (("x", xlog), ("y", ylog)) if on)
    head = f"{title}. Line chart of {len(cleaned)} series; x axis: {xlabel}; y axis: {ylabel}"
    head += f"; log scale on {scale}." if scale else "."
    notes = []
    if dropped_total:
        why = "non-finite or \u2264 0 on a log axis" if (xlog or ylog) else "non-finite"
        notes.append(f"{_plural(dropped_total, 'point')} not shown ({why})")
    ref_text = [f"Reference line {r.label} at {r.axis} = {_g(float(r.value))}." for r in refs]
    desc = " ".join([head, *parts, *ref_text, *(n + "." for n in notes)] + ([] if good else ["No data."]))
    return _render(f, desc=desc, defs=defs, data=data, refs=refs, legend=legend, notes=notes, empty=not good)


# --------------------------------------------------------------------------- histogram


def _bin_edges(bins: int | Sequence[float], finite: Sequence[float]) -> list[float]:
    if isinstance(bins, bool):
        raise InputError(f"bins must be a positive int or a sequence of edges, got {bins!r}")
    if isinstance(bins, int):
        if not 1 <= bins <= _MAX_BINS:
            raise InputError(f"bins must be between 1 and {_MAX_BINS}, got {bins}")
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        if hi - lo <= 1e-12 * max(abs(lo), abs(hi)):
            lo, hi = lo - 0.5, hi + 0.5
        edges = [lo + (hi - lo) * i / bins for i in range(bins + 1)]
        edges[-1] = hi
        return edges
    edges = _to_floats(bins, "bins")
    if len(edges) < 2 or len(edges) > _MAX_BINS + 1:
        raise InputError(f"bins: need between 2 and {_MAX_BINS + 1} edges, got {len(edges)}")
    if not all(_usable(e, False) for e in edges) or any(b <= a for a, b in itertools.pairwise(edges)):
        raise InputError(f"bins: edges must be finite and strictly increasing, got {bins!r}")
    return edges


def histogram(
    groups: Mapping[str, Sequence[float]],
    *,
    ident: str,
    title: str,
    xlabel: str,
    ylabel: str = "cases",
    bins: int | Sequence[float] = 20,
    refs: Sequence[RefLine] = (),
    width: int = 640,
    height: int = 360,
) -> str:
    """Overlay one histogram per group on shared bins; return one ``<svg>`` element.

    ``bins`` is a count (equal width over the finite data range) or explicit edges; the last bin
    includes its right edge. Non-finite values, and values outside explicit edges, are counted in
    a note. Each bar is a ``<rect class="ov-bar">`` whose ``<title>`` gives its count.
    """
    _check_common(ident, width, height)
    _check_refs(refs)
    values = {label: _to_floats(vals, f"group {label!r}") for label, vals in groups.items()}
    finite = {label: [v for v in vals if _usable(v, False)] for label, vals in values.items()}
    edges = _bin_edges(bins, [v for vals in finite.values() for v in vals])
    nb = len(edges) - 1
    counts: dict[str, list[int]] = {}
    dropped = 0
    for label, vals in values.items():
        c = [0] * nb
        for v in finite[label]:
            k = nb - 1 if v == edges[-1] else bisect.bisect_right(edges, v) - 1
            if 0 <= k < nb:
                c[k] += 1
            else:
                dropped += 1
        dropped += len(vals) - len(finite[label])
        counts[label] = c
    total_shown = sum(sum(c) for c in counts.values())
    top = max((max(c, default=0) for c in counts.values()), default=0)
    top_y = max([float(top), *_ref_values(refs, "y", False)])
    low_y = min([0.0, *_ref_values(refs, "y", False)])
    xr = _lin_range([edges[0], edges[-1], *_ref_values(refs, "x", False)], 0.02)
    f = _make_frame(
        ident=ident,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        width=width,
        height=height,
        xrange=(*xr, False),
        yrange=(low_y, (top_y * 1.08) or 1.0, False),
        y_integer=True,
    )

    data, legend, parts = [], [], []
    for i, (label, c) in enumerate(counts.items()):
        colour = PALETTE[i % len(PALETTE)]
        rects = []
        for k, n in enumerate(c):
            if n == 0:
                continue
            xa, xb, yt, yb = f.tx(edges[k]), f.tx(edges[k + 1]), f.ty(n), f.ty(0.0)
            close = "]" if k == nb - 1 else ")"
            tip = f"{label}: {n} in [{_g(edges[k])}, {_g(edges[k + 1])}{close}"
            rects.append(
                f'<rect class="ov-bar" x="{_n(xa)}" y="{_n(yt)}" width="{_n(xb - xa)}" height="{_n(yb - yt)}">'
                f"<title>{_esc(tip)}</title></rect>"
            )
        if rects:
            data.append(
                f'<g fill="{colour}" fill-opacity="{_HIST_OPACITY}" stroke="{colour}" stroke-width="1">'
                + "".join(rects)
                + "</g>"
            )

        def sample(x: float, y: float, colour: str = colour) -> str:
            return (
                f'<rect x="{_n(x - 8)}" y="{_n(y - 6)}" width="16" height="12" fill="{colour}" '
                f'fill-opacity="{_HIST_OPACITY}" stroke="{colour}"/>'
            )

        legend.append((label, sample))
        shown = [v for v in finite[label] if edges[0] <= v <= edges[-1]]
        missing = len(values[label]) - len(shown)
        if shown:
            part = f"Group {label}: {_plural(len(shown), 'value')} from {_g(min(shown))} to {_g(max(shown))}"
        else:
            part = f"Group {label}: no values shown"
        parts.append(part + (f" ({missing} not shown)." if missing else "."))

    explicit = not isinstance(bins, int)
    head = (
        f"{title}. Histogram of {len(counts)} group{'' if len(counts) == 1 else 's'} over {_plural(nb, 'bin')} "
        f"from {_g(edges[0])} to {_g(edges[-1])}; x axis: {xlabel}; y axis: {ylabel}."
    )
    notes = []
    if dropped:
        why = "non-finite or outside the bins" if explicit else "non-finite"
        notes.append(f"{_plural(dropped, 'value')} not shown ({why})")
    ref_text = [f"Reference line {r.label} at {r.axis} = {_g(float(r.value))}." for r in refs]
    desc = " ".join([head, *parts, *ref_text, *(n + "." for n in notes)] + ([] if total_shown else ["No data."]))
    return _render(f, desc=desc, defs=[], data=data, refs=refs, legend=legend, notes=notes, empty=total_shown == 0)
