"""Just enough Markdown to HTML for the proof notes embedded in the HTML report.

Handles what ``proofs/*.md`` use: paragraphs, headings, bullet and numbered lists, pipe
tables, fenced code, block quotes, inline code, bold, italic and links. Everything is escaped
first, so a note can never inject markup into the report.
"""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITAL = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_LIST = re.compile(r"^(\s*)([-*]|\d+\.)\s+(.*)$")


def inline(text: str, link_base: str = "") -> str:
    """One line of Markdown inline markup as HTML (escaped)."""
    parts = _CODE.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        s = html.escape(part, quote=False)
        s = _LINK.sub(lambda m: _link(m.group(1), m.group(2), link_base), s)
        s = _BOLD.sub(r"<strong>\1</strong>", s)
        s = _ITAL.sub(r"<em>\1</em>", s)
        out.append(s)
    return "".join(out)


def _link(label: str, target: str, base: str) -> str:
    href = html.unescape(target)
    if not re.match(r"^[a-z]+:", href) and not href.startswith("#"):
        href = base + href
    elif not href.startswith(("http:", "https:", "#")):
        return label  # no javascript: or other schemes
    return f'<a href="{html.escape(href)}">{label}</a>'


def _table(lines: list[str], base: str) -> str:
    def cells(line: str) -> list[str]:
        s = line.strip()
        if s.startswith("|"):
            s = s[1:]
        if s.endswith("|") and not s.endswith("\\|"):
            s = s[:-1]
        return [c.strip() for c in re.split(r"(?<!\\)\|", s)]

    head = cells(lines[0])
    body = [cells(ln) for ln in lines[2:]]
    out = ['<div class="scroll"><table>', "<thead><tr>"]
    out += [f"<th>{inline(c, base)}</th>" for c in head]
    out.append("</tr></thead><tbody>")
    for row in body:
        out.append("<tr>" + "".join(f"<td>{inline(c.replace(chr(92) + '|', '|'), base)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def to_html(text: str, link_base: str = "", heading_offset: int = 2) -> str:
    """Markdown as HTML; headings are shifted down by ``heading_offset`` levels (to sit inside a section)."""
    lines = text.splitlines()
    out: list[str] = []
    para: list[str] = []
    i = 0

    def flush() -> None:
        if para:
            out.append("<p>" + inline(" ".join(s.strip() for s in para), link_base) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            out.append("<pre><code>" + html.escape("\n".join(lines[i + 1 : j])) + "</code></pre>")
            i = j + 1
            continue
        if not stripped:
            flush()
            i += 1
            continue
        if re.match(r"^-{3,}$", stripped):
            flush()
            out.append("<hr>")
            i += 1
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if m:
            flush()
            level = min(6, len(m.group(1)) + heading_offset)
            out.append(f"<h{level}>{inline(m.group(2), link_base)}</h{level}>")
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(r"^\|?\s*:?-{3,}", lines[i + 1].strip()):
            flush()
            j = i
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            out.append(_table(lines[i:j], link_base))
            i = j
            continue
        if stripped.startswith(">"):
            flush()
            j = i
            quoted = []
            while j < len(lines) and lines[j].strip().startswith(">"):
                quoted.append(lines[j].strip()[1:].strip())
                j += 1
            out.append("<blockquote>" + to_html("\n".join(quoted), link_base, heading_offset) + "</blockquote>")
            i = j
            continue
        if _LIST.match(line):
            flush()
            j = i
            items: list[list[str]] = []
            ordered = bool(re.match(r"^\s*\d+\.", line))
            while j < len(lines) and lines[j].strip():
                lm = _LIST.match(lines[j])
                if lm and len(lm.group(1)) <= len(_LIST.match(line).group(1)) + 1:  # type: ignore[union-attr]
                    items.append([lm.group(3)])
                elif lm:  # a nested item: kept as its own line inside the current item
                    items[-1].append("<br>• " + inline(lm.group(3), link_base))
                    j += 1
                    continue
                else:
                    items[-1].append(lines[j].strip())
                j += 1
            tag = "ol" if ordered else "ul"
            rendered = []
            for it in items:
                text_part = " ".join(s for s in it if not s.startswith("<br>"))
                nested = "".join(s for s in it if s.startswith("<br>"))
                rendered.append(f"<li>{inline(text_part, link_base)}{nested}</li>")
            out.append(f"<{tag}>" + "".join(rendered) + f"</{tag}>")
            i = j
            continue
        para.append(line)
        i += 1
    flush()
    return "\n".join(out)
