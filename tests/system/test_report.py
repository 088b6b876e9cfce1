"""HTML and Markdown reports: content, links, figures, merged runs, bad input, and the committed
reference report (a pure function of the committed JSON result)."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from orthoverify.claims import MODULES as CLAIM_MODULES
from orthoverify.cli import main
from orthoverify.engine import get_registry
from orthoverify.engine.registry import EXTRA_ENV
from orthoverify.errors import ReportError
from orthoverify.report import load_report, render_report, report_files
from orthoverify.report.markdown import code, text
from orthoverify.report.mdlite import to_html
from orthoverify.report.model import github_slug, proof_entry

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reports" / "check-default.json"


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code_ = main(list(argv), out=out, err=err)
    return code_, out.getvalue(), err.getvalue()


class Collector(HTMLParser):
    """Ids, internal and external references, tags and visible text of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for k, v in attrs:
            if k == "id" and v:
                self.ids.append(v)
            if k == "href" and v:
                self.hrefs.append(v)
            if k in ("src", "xlink:href") and v:
                self.srcs.append(v)


def parse(html: str) -> Collector:
    c = Collector()
    c.feed(html)
    return c


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text())
    return data


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    render_report([REFERENCE], out_dir=out, name="report")
    return out


# ------------------------------------------------------------------------------ the HTML report
def test_html_is_self_contained_and_every_internal_link_resolves(rendered: Path) -> None:
    html = (rendered / "report.html").read_text()
    doc = parse(html)
    assert not {"script", "link", "img", "iframe", "object"} & doc.tags  # inline CSS and SVG only
    assert not doc.srcs
    assert len(doc.ids) == len(set(doc.ids)), "duplicate ids"
    ids = set(doc.ids)
    internal = [h[1:] for h in doc.hrefs if h.startswith("#")]
    assert internal and all(i in ids for i in internal), [i for i in internal if i not in ids][:5]
    external = [h for h in doc.hrefs if not h.startswith("#")]
    assert not external  # rendered outside the repository: the proof notes are embedded, never linked
    assert '<meta name="viewport"' in html and "<style>" in html


def test_html_has_summary_errata_figures_and_every_claim(rendered: Path, reference: dict[str, Any]) -> None:
    html = (rendered / "report.html").read_text()
    ids = set(parse(html).ids)
    assert {"summary", "errata", "figures", "claims"} <= ids
    for c in reference["claims"]:
        assert f"claim-{c['id']}" in ids
    refuted = [c for c in reference["claims"] if c["verdict"] == "refuted"]
    errata = html.split('id="errata"', 1)[1].split('id="figures"', 1)[0]
    assert f"Errata ({len(refuted)})" in errata
    for c in refuted:
        assert f"orthoverify replay {REFERENCE} {c['id']}" in errata
        fixed = c["id"] + ".corrected"
        if any(x["id"] == fixed for x in reference["claims"]):
            assert f"#claim-{fixed}" in errata.split(f"#claim-{c['id']}", 1)[1].split('class="erratum"', 1)[0]
    summary = html.split('id="summary"', 1)[1].split('id="errata"', 1)[0]
    counts = reference["summary"]
    assert f'<td class="num">{counts["verified"]}</td>' in summary
    assert "2.13.0" in summary or reference["environment"]["torch"] in summary  # the environment


def test_html_figures_are_the_family_pictures(rendered: Path) -> None:
    html = (rendered / "report.html").read_text()
    ids = set(parse(html).ids)
    for fig in ("fig-ratio-n", "fig-coverage", "fig-cayley-maxabs", "fig-urnn-rank", "fig-drift"):
        assert fig in ids, fig
    assert any(i.startswith("fig-grad-unitary-gradient-bound") for i in ids)
    figures = html.split('id="figures"', 1)[1].split('id="claims"', 1)[0]
    assert figures.count("<svg") >= 6 and figures.count("<figcaption>") >= 6


def test_proof_links_point_at_the_claims_entries(reference: dict[str, Any]) -> None:
    """Written inside the repository (reports/), both formats link each claim to its entry in the
    top-level proofs/, relative to the report, so the links hold in a clone and on a code host."""
    out = ROOT / "reports"
    files = report_files(load_report([REFERENCE]), out)
    for name in ("report.html", "report.md"):
        pattern = r'href="([^"#]*proofs/[^"]+)"' if name.endswith(".html") else r"\]\(([^)#]*proofs/[^)]+)\)"
        links = set(re.findall(pattern, files[name]))
        assert len(links) == len(reference["claims"]), name
        for link in links:
            file, anchor = link.split("#")
            assert file.startswith("../proofs/") and ".venv" not in link, link
            target = (out / file).resolve()
            assert target.parent == ROOT / "proofs", link
            headings = re.findall(r"^#{2,3} (.+?)\s*$", target.read_text(), re.M)
            assert anchor in {github_slug(h) for h in headings}, link


def test_proof_notes_are_embedded_wherever_the_report_is_written(rendered: Path, reference: dict[str, Any]) -> None:
    """Written outside the repository (or from an installed copy), no link points at a file of this
    machine: each claim's proof entry is embedded, in the HTML and in the Markdown."""
    n = len(reference["claims"])
    for name in ("report.html", "report.md"):
        text = (rendered / name).read_text()
        assert text.count("<summary>Proof notes</summary>") == n, name
        assert "site-packages" not in text and ".venv" not in text and "../" not in text, name
    md = (rendered / "report.md").read_text()
    assert "From `proofs/householder.md — householder.reflection` in the orthoverify repository." in md


def test_markdown_links_and_figure_files_resolve(rendered: Path, reference: dict[str, Any]) -> None:
    md = (rendered / "report.md").read_text()
    slugs = {github_slug(h) for h in re.findall(r"^#{1,6} (.+?)\s*$", md, re.M)}
    anchors = re.findall(r"\]\(#([^)]+)\)", md)
    assert anchors and all(a in slugs for a in anchors), [a for a in anchors if a not in slugs][:5]
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.svg)\)", md)
    assert len(images) >= 6
    for img in images:
        svg = (rendered / img).read_text()
        assert svg.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in svg
    for c in reference["claims"]:
        assert f"\n### {c['id']}\n" in md
    assert md.count("### Erratum: ") == reference["summary"]["refuted"]


def test_markdown_escapes_statements() -> None:
    assert text("W* = a_ij |x| <= 1") == "W\\* = a\\_ij \\|x\\| \\<= 1"
    assert code("a`b") == "``a`b``"


# ------------------------------------------------------------------------------ merged runs
def test_two_runs_side_by_side_with_disagreements(tmp_path: Path, reference: dict[str, Any]) -> None:
    other = json.loads(json.dumps(reference))
    other["environment"]["device"] = "cuda"
    flipped = other["claims"][0]
    flipped["verdict"] = "inconclusive"
    other["claims"] = other["claims"][:-1]  # a claim this run did not check
    second = tmp_path / "check-gpu.json"
    second.write_text(json.dumps(other))
    code_, _, err = run_cli("report", str(REFERENCE), str(second), "--out", str(tmp_path / "out"))
    assert code_ == 0, err
    html = (tmp_path / "out" / "check-default+check-gpu.html").read_text()
    assert "check-default" in html and "check-gpu (cuda)" in html
    assert "Where the runs disagree (1)" in html  # the flipped claim; the one not run is shown as such
    assert '<span class="v v-absent">not run</span>' in html
    md = (tmp_path / "out" / "check-default+check-gpu.md").read_text()
    assert "| verdict | check-default | check-gpu (cuda) |" in md


def test_labels_and_duplicate_names(tmp_path: Path) -> None:
    report = load_report([REFERENCE, REFERENCE])
    assert [r.label for r in report.runs] == ["check-default", "check-default #2"]
    report = load_report([REFERENCE], ["cpu run"])
    assert report.runs[0].label == "cpu run"
    with pytest.raises(ReportError, match="labels"):
        load_report([REFERENCE], ["a", "b"])


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("{not json", "cannot read"),
        ('{"claims": []}', "not an orthoverify result"),
        ('{"orthoverify": "0", "claims": [{"id": "x"}]}', "lacks id, verdict"),
        (
            '{"orthoverify": "0", "claims": [{"id": "a.b", "verdict": "maybe", "statement": "", "paper": "a"}]}',
            "unknown verdict",
        ),
    ],
)
def test_bad_result_files(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReportError, match=message):
        render_report([path], out_dir=tmp_path / "out")
    code_, _, err = run_cli("report", str(path), "--out", str(tmp_path / "out"))
    assert code_ == 2 and message in err


def test_bad_format_and_name(tmp_path: Path) -> None:
    code_, _, err = run_cli("report", str(REFERENCE), "--format", "pdf", "--out", str(tmp_path))
    assert code_ == 2 and "unknown report format" in err
    with pytest.raises(ReportError, match="bad report name"):
        render_report([REFERENCE], out_dir=tmp_path, name="../x")


def test_formats_are_separate(tmp_path: Path) -> None:
    written = render_report([REFERENCE], out_dir=tmp_path, formats=["md"])
    assert [p.name for p in written] == ["check-default.md"] and not (tmp_path / "check-default.html").exists()


# ------------------------------------------------------------------------------ check --report
def test_check_report_shows_every_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(EXTRA_ENV, "tests.planted.planted_claims")
    path = tmp_path / "r.json"
    code_, out, _ = run_cli(
        "check", "planted.*", "--profile", "quick", "--workers", "1", "--json", str(path), "--report", str(tmp_path)
    )
    assert code_ == 1  # planted.crashes errors
    assert "report: " in out and (tmp_path / "r.html").exists() and (tmp_path / "r.md").exists()
    html = (tmp_path / "r.html").read_text()
    for verdict in ("verified", "refuted", "inconclusive", "error"):
        assert f'<span class="v v-{verdict}">{verdict}</span>' in html
    assert "planted crash" in html  # the error message is in the evidence notes
    assert f"orthoverify replay {path} planted.false_reflection_fixes_u" in html
    assert "No proof notes are shipped for <code>planted</code>" in html  # no proofs/planted.md
    assert "No corrected statement is registered" in html


# ------------------------------------------------------------------------------ proofs excerpt
def test_proof_notes_render_escaped() -> None:
    html = to_html("**Proof.** a <script>x</script> `c<d` [l](x.md#y) [j](javascript:alert(1))\n\n- one\n- two")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<strong>Proof.</strong>" in html and "<code>c&lt;d</code>" in html
    assert '<a href="x.md#y">l</a>' in html and "javascript" not in html.split("</p>")[0].split("j")[-1]
    assert "<ul><li>one</li><li>two</li></ul>" in html
    table = to_html("| a | b |\n|---|---|\n| 1 | x \\| y |")
    assert "<th>a</th>" in table and "<td>x | y</td>" in table


def test_every_claim_has_a_proof_entry_found_by_the_report() -> None:
    for claim in get_registry(CLAIM_MODULES):
        entry = proof_entry(ROOT / "proofs", claim.paper, claim.id)
        assert entry is not None and entry.body, claim.id


# ------------------------------------------------------------------------------ the reference report
def test_reference_result_matches_the_registry(reference: dict[str, Any]) -> None:
    assert [c["id"] for c in reference["claims"]] == get_registry(CLAIM_MODULES).ids()
    assert reference["profile"] == "default" and reference["seed"] == 0


def test_committed_report_is_the_rendering_of_the_committed_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """`orthoverify report reports/check-default.json --out reports --name report` (from the root)
    regenerates reports/report.*."""
    monkeypatch.chdir(ROOT)
    files = report_files(load_report(["reports/check-default.json"]), Path("reports"))
    committed = {str(p.relative_to(ROOT / "reports")) for p in (ROOT / "reports" / "report-figures").iterdir()}
    assert {k for k in files if k.endswith(".svg")} == committed
    for rel, content in files.items():
        assert (ROOT / "reports" / rel).read_text() == content, (
            f"reports/{rel} is stale: run `orthoverify report reports/check-default.json --out reports "
            "--name report` from the repository root"
        )


# ------------------------------------------------------------------------------ output names
def test_report_is_named_after_its_result_and_says_when_it_replaces_another(tmp_path: Path) -> None:
    quick = tmp_path / "check-quick.json"
    other = json.loads(REFERENCE.read_text())
    other["claims"] = other["claims"][:1]
    quick.write_text(json.dumps(other))
    out = tmp_path / "out"
    code_, printed, err = run_cli("report", str(quick), "--out", str(out))
    assert code_ == 0 and err == "", err
    assert (out / "check-quick.html").is_file() and (out / "check-quick.md").is_file()
    assert f"report: {out / 'check-quick.html'}" in printed
    code_, _, err = run_cli("report", str(quick), "--out", str(out))  # the same results again: silent
    assert code_ == 0 and err == ""
    code_, _, err = run_cli("report", str(REFERENCE), "--out", str(out), "--name", "check-quick")
    assert code_ == 0
    assert f"replacing {out / 'check-quick.html'}, which was rendered from {quick} (started " in err
    with pytest.warns(UserWarning, match="replacing"):  # back to the quick run's report
        render_report([quick], out_dir=out, name="check-quick")
    rerun = json.loads(quick.read_text())
    rerun["started"] = "2100-01-01T00:00:00+00:00"  # a newer run written to the same file
    quick.write_text(json.dumps(rerun))
    with pytest.warns(UserWarning, match=r"\(started [^)]*\), with a report of .*\(started 2100-01-01"):
        render_report([quick], out_dir=out, name="check-quick")


# ------------------------------------------------------------------------------ reading aids
def test_report_reads_like_an_errata_page(rendered: Path, reference: dict[str, Any]) -> None:
    """Papers cited by authors, title and venue (never a file number); each refuted claim with a
    one-line reason in the index and its erratum, the refuting evidence marked, mathematics in
    Unicode, the claims folded."""
    html = (rendered / "report.html").read_text()
    index = html.split('id="index"', 1)[1].split('id="errata"', 1)[0]
    for c in reference["claims"]:
        if c["verdict"] == "refuted":
            assert f'href="#erratum-{c["id"]}"' in index
            erratum = html.split(f'id="erratum-{c["id"]}"', 1)[1].split("</article>", 1)[0]
            assert 'class="reason"><p><strong>Why' in erratum or 'class="reason"><strong>Why:</strong> ' in erratum
            assert 'class="replay"' in erratum
            assert "Counterexample</strong>" in erratum and "<strong>Refuted by</strong>" in erratum
            article = html.split(f'id="claim-{c["id"]}"', 1)[1].split("</details><details class=", 1)[0]
            assert '<tr class="refutes">' in article and "refutes ◀" in article
    assert index.count('class="why"') == reference["summary"]["refuted"]
    assert "Mhammedi, Hellicar, Rahman, Bailey. Efficient Orthogonal Parametrisation" in html
    assert "Arjovsky, Shah, Bengio. Unitary Evolution Recurrent Neural Networks. ICML 2016" in html
    assert re.search(r"\b00[1-4] (Sec|Lemma|App|Cor)", html) is None  # no paper file numbers
    assert "Arjovsky et al. Lemma 1" in html and "shared/papers" not in html
    assert "C~'" not in html and "Cbar'" not in html and "C̃′" in html
    assert html.count('<details class="claim"') == len(reference["claims"])
    assert f"{len(reference['claims'])} claims: " in html and "in the first run" not in html  # one run: no "first run"


def test_errata_speak_the_papers_language(rendered: Path) -> None:
    """Read as a paper author: no internal label of a transcribed line, no SymPy printing, no ASCII
    mathematics in the values, no bare number without what it is, a replay heading naming the
    arithmetics that apply, and every refuting figure said as what fails beside its test ratio."""
    for name in ("report.html", "report.md"):
        text = (rendered / name).read_text()
        errata = text.split("Errata (", 1)[1].split("Figures", 1)[0]
        assert re.search(r"\b(proof|appb)\.[a-z0-9_.]+ ", errata) is None, name  # proof.tr3, appb.dldu_col
        plain = errata.replace("\\*", "*").replace("\\_", "_")
        assert re.search(r"[\w)]\*\*\(?-?\d", plain) is None, name  # SymPy's x**3
        for raw in ("CRootOf", "Cbar", "C~", "R′'", "′'", "lam ", "sqrt(", "printed_row", "= -6 (exact)"):
            assert raw not in plain, (name, raw)
        assert "−0.6505… (the smallest real root of 20x³ − 10x − 1)" in errata, name
        assert "an entry equals −6 in exact arithmetic" in errata, name
        assert "an entry of Alg1 − reference (0 if the claim held) = " in errata, name  # the folded value too
        assert "Replay it (exact arithmetic):" in errata and "Replay it (float64 and 100 digits):" in errata, name
        assert "float64 and high precision" not in errata, name
        theorem5 = errata.split("svd.theorem5", 2)[-1]
        assert "R(W*) − R(W′) = 0.953015" in theorem5.replace("\\*", "*"), name
        assert "test ratio 2.33e+49: the error is 2.33e+49 times what rounding in mpmath-50 allows" in theorem5, name
    for name in ("report.html", "report.md"):  # the evidence notes under every claim too, not only the errata
        whole = (rendered / name).read_text().replace("\\*", "*")
        assert "CRootOf" not in whole and re.search(r"[\w)]\*\*\(?-?\d", whole) is None, name
    md = (rendered / "report.md").read_text()
    assert "`check-default`)" not in md and "` (run check-default)" in md  # a space before "(run ...)"


def test_typeset() -> None:
    from orthoverify.notation import typeset

    assert typeset("Tr(Cbar' dC) = Tr(h~C~' dU), ||x|| <= 1, u != 0") == "Tr(C̄′ dC) = Tr(h̃C̃′ dU), ‖x‖ ≤ 1, u ≠ 0"
    assert typeset("sigma_min(W) >= eps, alpha beta u, (I + A)^-1") == "σ_min(W) ≥ ε, α β u, (I + A)⁻¹"
    assert typeset("U's zeros; W's eigenvalues; float_near_aligned") == "U's zeros; W's eigenvalues; float_near_aligned"
    assert typeset("R'' = 3, rank 7n - 7 < n^2, hbar = Cbar - UC~, g = -C~_k") == (
        "R″ = 3, rank 7n − 7 < n², h̄ = C̄ − UC̃, g = −C̃_k"
    )
    assert typeset("lambda_k = conj(lambda_j), (W^j)' G, sigma'(z), prod_{k=t}, R^{n x n}") == (
        "λ_k = conj(λ_j), (W^j)′ G, σ′(z), ∏_{k=t}, R^{n × n}"
    )
    assert typeset("for any nonzero x in C^n, near-identity") == "for any nonzero x in C^n, near-identity"
    assert typeset("dL/dsigma (or dL/ds), dtheta, delta, dsigmas") == "dL/dσ (or dL/ds), dθ, δ, dsigmas"
    assert typeset("= -||x_{2:}||^2, tril(R,-1), (h~C~') o B', 1e-08") == "= −‖x_{2:}‖², tril(R,−1), (h̃C̃′) ∘ B′, 1e-08"


def test_values_in_the_papers_notation() -> None:
    """SymPy's printing and the internal labels of results, as a reader of the paper writes them;
    nothing is evaluated (a polynomial is rewritten as text)."""
    from orthoverify.notation import math_text

    root = "w* = CRootOf(20*x**3 - 10*x - 1, 0) = -0.6504879941551969592132635 (R'' = 3.1)"
    assert math_text(root) == "w* = −0.6505… (the smallest real root of 20x³ − 10x − 1) (R″ = 3.1)"
    assert math_text("CRootOf(x**2 - 2, 1) = 1.4142135") == "1.414… (the second smallest real root of x² − 2)"
    assert math_text("charpoly(W D) = (lam - 1)*(lam + 1); [3/5 + 4*I/5], [0, -I]") == (
        "charpoly(W D) = (λ − 1)(λ + 1); [3/5 + 4i/5], [0, −i]"
    )
    assert math_text("counted 6*s**2 + 7*s along s*(1, 0, 1); 1 - sqrt(2); 2 x 2") == (
        "counted 6s² + 7s along s·(1, 0, 1); 1 − √2; 2 × 2"
    )
    assert math_text("proof.tr3 [App. A, 3rd display] is ill-typed: a | appb.dldu_col [App. B] is wrong: b") == (
        "App. A, 3rd display is ill-typed: a | App. B is wrong: b"
    )
    assert math_text("moved 2.1e-52) of n(n-1) 2, counted 1; ['7.38398']") == (
        "moved 2.1e-52) of n(n−1) = 2, counted 1; [7.38398]"
    )


def test_index_filters_by_paper_and_verdict_without_script(rendered: Path, reference: dict[str, Any]) -> None:
    html = (rendered / "report.html").read_text()
    index = html.split('id="index"', 1)[1].split('id="errata"', 1)[0]
    for p in {c["paper"] for c in reference["claims"]}:
        assert f'id="fp-{p}"' in index and f"#fp-{p}:checked~.idx li:not(.fp-{p}){{display:none}}" in index
    assert 'id="fv-refuted"' in index and "#fv-refuted:checked~.idx li:not(.fv-refuted){display:none}" in index
    assert index.count("<li class=") == len(reference["claims"])


def test_proof_notes_ship_with_the_package_and_cite_no_outside_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orthoverify
    from orthoverify.report.model import find_proofs_dir

    assert find_proofs_dir() == Path(orthoverify.__file__).resolve().parents[1] / "proofs"  # the checkout's
    assert '"share/orthoverify/proofs" = ["proofs/*.md"]' in (ROOT / "pyproject.toml").read_text()  # in the wheel
    for f in (ROOT / "proofs").glob("*.md"):
        text = f.read_text()
        assert "../" not in text and "shared/papers" not in text, f.name
        assert re.search(r"\b00[1-4] (Sec|eq|Lemma|App|Cor)", text) is None, f.name  # no paper file numbers
    monkeypatch.chdir(tmp_path)  # rendered far from the repository: the proof notes are still there
    (html,) = render_report([REFERENCE], out_dir=tmp_path / "elsewhere", formats=["html"])
    assert html.read_text().count("<summary>Proof notes</summary>") == len(json.loads(REFERENCE.read_text())["claims"])


def test_bounds_are_never_crossed_by_a_bar_and_a_phone_reads_the_summary(rendered: Path) -> None:
    """The scaled Cayley histogram's bins end at the bound 1 (a bar across the line would read as
    values above the bound); the reference lines are drawn strongly; the verdict counts are one row
    per verdict (narrow on a phone); replay commands wrap between words only; a counterexample that
    breaks only at high precision says where float64 fails."""
    html = (rendered / "report.html").read_text()
    fig = html.split('id="fig-cayley-maxabs"', 1)[1].split("</figure>", 1)[0]
    (bound,) = re.findall(r'<path d="M([\d.]+),[\d.]+V[\d.]+" fill="none" stroke="#b3261e" stroke-width="1.8"', fig)
    rects = re.findall(r'<rect class="ov-bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', fig)
    bars = [(float(x), float(w)) for x, w in rects]
    assert bars and max(x + w for x, w in bars) <= float(bound) + 0.01
    summary = html.split('id="summary"', 1)[1].split("</table>", 1)[0]
    assert "<th>verdict</th>" in summary and summary.count("<tr>") == 1 + 5  # header, 4 verdicts, total
    assert ".replay{white-space:pre-wrap;word-break:normal;overflow-wrap:normal}" in html
    erratum = html.split('id="erratum-householder.algorithm2_float"', 1)[1].split("</article>", 1)[0]
    assert "float64 fails on other inputs: test ratio 5.79e+07 &gt; 30" in erratum
