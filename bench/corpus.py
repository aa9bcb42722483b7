#!/usr/bin/env python3
"""bench/corpus.py: how well Lector's reading of Tests/Corpus matches what a listener should hear.

    bench/corpus.py [--heard DIR] [--output FILE] [--no-pysbd]

Reads what the end-to-end test heard (`swift test --filter "Integration/CorpusReading/"` writes
.build/corpus-heard/NAME.txt, and NAME.72.txt, NAME.40.txt, NAME.line.txt for the re-wrapped readings of the
folders marked `prose`) and scores it against each folder's expected.txt and never.txt:
 - sentence accuracy: expected sentences heard exactly (white space collapsed), counted by aligning the heard
   list to the expected list line by line (difflib.SequenceMatcher), over the number of expected sentences;
 - clutter heard: occurrences of never.txt tokens in the heard lines;
 - wrap invariance (prose folders): share of the re-wrapped readings' sentences identical to the unwrapped one's.
Totals per format (the source's extension) and overall, beside the targets (>= 98 % per format, no clutter,
wrap invariance 100 %). Then the same accuracy for pySBD, a rule-based segmenter, on the plain-text sources:
once on the text as Lector got it, once with each paragraph's lines joined (pySBD does not unwrap hard-wrapped
lines). pySBD is installed from PyPI into .build/bench-venv on first use; Lector itself never fetches anything.
Prints the Markdown report and writes it to --output (default bench/CORPUS.md). Exits 1 when nothing was heard
yet; pySBD being unavailable is only noted.
"""
import argparse
import datetime
import difflib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Tests", "Corpus")
VENV = os.path.join(ROOT, ".build", "bench-venv")

# The targets the figures are held to.
TARGET_ACCURACY = 98.0
TARGET_CLUTTER = 0
TARGET_WRAP = 100.0

# The re-wrapped readings CorpusTests.swift keeps, by file suffix: fmt -w 72, fmt -w 40, each paragraph on one line.
WRAPS = [("72", "fmt -w 72"), ("40", "fmt -w 40"), ("line", "paragraphs on one line")]

# pySBD's language per folder; every other folder is English.
LANGUAGES = {"sample-de": "de", "sample-es": "es", "sample-fr": "fr", "sample-ru": "ru"}

# Run with the venv's python: reads [{"text", "language"}, ...] as JSON on stdin and writes, for each, the
# list of pySBD's segments (clean=False: the text is segmented as given, nothing is dropped or rewritten).
PYSBD_HELPER = r"""
import json, sys
import pysbd
jobs = json.load(sys.stdin)
out = []
for job in jobs:
    segmenter = pysbd.Segmenter(language=job["language"], clean=False)
    out.append(segmenter.segment(job["text"]))
json.dump({"version": getattr(pysbd, "__version__", "?"), "segments": out}, sys.stdout)
"""


def normalized(line):
    """White space collapsed and trimmed: what a listener hears of a line (as Corpus.normalized in the test)."""
    return " ".join(line.split())


def lines(path):
    """The non-empty lines of the file at `path`, normalized; [] when it does not exist."""
    try:
        with open(path, encoding="utf-8") as f:
            return [n for n in (normalized(l) for l in f.read().split("\n")) if n]
    except FileNotFoundError:
        return []


def raw_lines(path):
    """The file's lines as written (trailing white space dropped), without empty ones; [] when missing."""
    try:
        with open(path, encoding="utf-8") as f:
            return [l.rstrip() for l in f.read().split("\n") if l.strip()]
    except FileNotFoundError:
        return []


def matched(got, want):
    """How many lines of `want` appear in `got` in the same order: the matched lines of a line-by-line alignment.

    autojunk is off: on long texts difflib would otherwise treat frequent lines as junk and miss them."""
    matcher = difflib.SequenceMatcher(a=want, b=got, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


def clutter(heard, tokens):
    """Occurrences of each never-heard token in the heard lines, as {token: count} for those that occur.

    Tokens are counted as substrings, every (non-overlapping) occurrence: "@" twice in a line counts 2."""
    hits = {}
    for token in tokens:
        n = sum(line.count(token) for line in heard)
        if n:
            hits[token] = n
    return hits


def source_format(folder):
    """The extension of the folder's source: `source.EXT`, or the `source.EXT` its make.sh names; "?" if unknown."""
    path = os.path.join(CORPUS, folder)
    for name in sorted(os.listdir(path)):
        if name.startswith("source."):
            return name[len("source."):]
    make = os.path.join(path, "make.sh")
    if os.path.exists(make):
        with open(make, encoding="utf-8", errors="replace") as f:
            found = re.search(r"source\.([A-Za-z0-9]+)", f.read())
        if found:
            return found.group(1)
    return "?"


def unwrapped(text):
    """Each paragraph (blocks split by a blank line) on one line, its lines trimmed and joined by a space.

    The same transformation as Corpus.rewrapped(width: 0) in the test, so pySBD gets the text Lector got."""
    return "\n\n".join(" ".join(l.strip() for l in block.split("\n") if l.strip())
                       for block in text.split("\n\n"))


def pct(n, d):
    """n / d as a percentage string with one decimal, or "–" when d is 0."""
    return "–" if d == 0 else f"{100.0 * n / d:.1f} %"


def folders():
    """The corpus folders (those with an expected.txt), by name, as the test finds them."""
    return sorted(n for n in os.listdir(CORPUS) if os.path.exists(os.path.join(CORPUS, n, "expected.txt")))


def score_folder(name, heard_dir):
    """Lector's figures for one folder: a dict, with heard=None when the test left no NAME.txt for it."""
    folder = os.path.join(CORPUS, name)
    expected = lines(os.path.join(folder, "expected.txt"))
    never = raw_lines(os.path.join(folder, "never.txt"))
    result = {
        "name": name,
        "format": source_format(name),
        "expected": expected,
        "known": raw_lines(os.path.join(folder, "known.txt")),
        "prose": os.path.exists(os.path.join(folder, "prose")),
        "heard": None,
    }
    heard_path = os.path.join(heard_dir, name + ".txt")
    if not os.path.exists(heard_path):
        return result
    heard = lines(heard_path)
    result.update(heard=heard, matched=matched(heard, expected), clutter=clutter(heard, never),
                  missing=[e for e in expected if e not in heard], extra=[h for h in heard if h not in expected])
    if result["prose"]:
        # Each re-wrapped reading against the unwrapped one: its sentences that the unwrapped reading has too,
        # in order, over its own number of sentences.
        wraps = []
        for suffix, label in WRAPS:
            again = lines(os.path.join(heard_dir, f"{name}.{suffix}.txt"))
            if os.path.exists(os.path.join(heard_dir, f"{name}.{suffix}.txt")):
                wraps.append({"label": label, "same": matched(again, heard), "count": len(again),
                              "changed": [a for a in again if a not in heard]})
        result["wraps"] = wraps
    return result


def pysbd_python(log):
    """The venv's python with pysbd importable, making .build/bench-venv and installing pysbd on first use.

    Returns (path, None), or (None, reason) when the venv or pip fails (no python3-venv, no network)."""
    python = os.path.join(VENV, "bin", "python")
    if os.path.exists(python) and subprocess.run([python, "-c", "import pysbd"], capture_output=True).returncode == 0:
        return python, None
    log(f"pySBD: installing it into {os.path.relpath(VENV, ROOT)} (PyPI)")
    try:
        # (Re)made when it has no pip: a venv left half-made by a failed earlier attempt.
        if not os.path.exists(os.path.join(VENV, "bin", "pip")):
            made = subprocess.run([sys.executable, "-m", "venv", "--clear", VENV], capture_output=True, text=True,
                                  timeout=300)
            if made.returncode != 0:
                return None, "python3 -m venv failed: " + last_line(made.stderr or made.stdout)
        # Short timeouts and one retry: without a network pip would otherwise retry for minutes.
        pip = subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check",
                              "--timeout", "20", "--retries", "1", "pysbd"],
                             capture_output=True, text=True, timeout=600)
        if pip.returncode != 0:
            return None, "pip install pysbd failed: " + last_line(pip.stderr or pip.stdout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if subprocess.run([python, "-c", "import pysbd"], capture_output=True).returncode != 0:
        return None, "pysbd does not import after pip install"
    return python, None


def last_line(text):
    """The last non-empty line of a tool's output, for a one-line reason."""
    rows = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return rows[-1] if rows else "no output"


def pysbd_scores(results, log):
    """pySBD's figures on the plain-text sources: (version, rows) with a row per folder, or (None, reason)."""
    plain = [r for r in results if os.path.exists(os.path.join(CORPUS, r["name"], "source.txt"))]
    if not plain:
        return None, "no folder has a plain-text source"
    python, reason = pysbd_python(log)
    if python is None:
        return None, reason
    texts = {}
    jobs = []
    for r in plain:
        with open(os.path.join(CORPUS, r["name"], "source.txt"), encoding="utf-8") as f:
            texts[r["name"]] = f.read()
        language = LANGUAGES.get(r["name"], "en")
        jobs.append({"text": texts[r["name"]], "language": language})
        jobs.append({"text": unwrapped(texts[r["name"]]), "language": language})
    try:
        run = subprocess.run([python, "-c", PYSBD_HELPER], input=json.dumps(jobs), capture_output=True,
                             text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if run.returncode != 0:
        return None, "the pySBD helper failed: " + last_line(run.stderr)
    answer = json.loads(run.stdout)
    segments = answer["segments"]
    rows = []
    for i, r in enumerate(plain):
        # Each segment normalized like a heard line; empty ones (blank lines kept by clean=False) dropped.
        as_given = [n for n in (normalized(s) for s in segments[2 * i]) if n]
        joined = [n for n in (normalized(s) for s in segments[2 * i + 1]) if n]
        rows.append({"name": r["name"], "language": LANGUAGES.get(r["name"], "en"), "prose": r["prose"],
                     "expected": len(r["expected"]), "lector": r.get("matched"),
                     "given": matched(as_given, r["expected"]), "joined": matched(joined, r["expected"]),
                     "given_count": len(as_given), "joined_count": len(joined)})
    return answer.get("version", "?"), rows


def verdict(ok):
    """The mark beside a figure held to a target."""
    return "meets" if ok else "**misses**"


def report(results, heard_dir, pysbd):
    """The Markdown report, as a list of lines."""
    heard = [r for r in results if r["heard"] is not None]
    out = ["# Tests/Corpus: what Lector reads aloud, scored", ""]
    stamp = max(os.path.getmtime(os.path.join(heard_dir, r["name"] + ".txt")) for r in heard)
    moment = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc)
    when = f"{moment.day} {moment:%B %Y %H:%M} UTC"
    git = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    # Uncommitted changes to the sources are named, since the heard files may have been read by such a build.
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "Sources"], capture_output=True,
                           text=True).stdout.strip()
    tree = (git.stdout.strip() or "?") + (", with uncommitted changes in Sources/" if dirty else "")
    out += [f"`bench/corpus.py` over `{os.path.relpath(heard_dir, ROOT)}` (heard by the end-to-end test "
            f"`Integration/CorpusReading`, {when}; tree at {tree}). Sentence accuracy: expected "
            "sentences heard exactly (white space collapsed), aligned line by line with the heard list, over the "
            "expected sentences. Clutter: occurrences of the folder's never.txt tokens in what was heard. Wrap "
            "invariance: share of the sentences of the re-wrapped readings (fmt -w 72, fmt -w 40, paragraphs on "
            "one line) that are the unwrapped reading's.", ""]
    missing = [r["name"] for r in results if r["heard"] is None]
    if missing:
        out += [f"Not heard (the test has not read them yet; left out of the totals): {', '.join(missing)}.", ""]

    out += ["## Per folder", "",
            "| folder | format | sentences | heard exactly | accuracy | clutter heard | wrap invariance |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for r in heard:
        hits = sum(r["clutter"].values())
        wrap = "–"
        if r["prose"]:
            same = sum(w["same"] for w in r["wraps"])
            count = sum(w["count"] for w in r["wraps"])
            wrap = pct(same, count)
        out.append(f"| {r['name']} | {r['format']} | {len(r['expected'])} | {r['matched']} | "
                   f"{pct(r['matched'], len(r['expected']))} | {hits} | {wrap} |")
    out.append("")
    for r in heard:
        notes = []
        if r["missing"]:
            notes += ["  - expected, not heard: " + "; ".join(f"“{m}”" for m in r["missing"])]
        if r["extra"]:
            notes += ["  - heard instead: " + "; ".join(f"“{m}”" for m in r["extra"])]
        if r["clutter"]:
            notes += ["  - clutter: " + ", ".join(f"`{t}` × {n}" for t, n in r["clutter"].items())]
        for w in r.get("wraps", []):
            if w["changed"]:
                notes += [f"  - {w['label']}: {w['same']} of {w['count']} the same; new: "
                          + "; ".join(f"“{c}”" for c in w["changed"])]
        if r["known"]:
            notes += ["  - known deviations (known.txt): " + " ".join(r["known"])]
        if notes:
            out += [f"- **{r['name']}**"] + notes
    out.append("")

    out += ["## Totals", "",
            f"Targets: ≥ {TARGET_ACCURACY:g} % sentence accuracy per format, {TARGET_CLUTTER} clutter tokens, "
            f"wrap invariance {TARGET_WRAP:g} % on prose.", "",
            "| format | folders | sentences | heard exactly | accuracy | target | clutter heard | target | "
            "wrap invariance (prose) | target |",
            "|---|---:|---:|---:|---:|---|---:|---|---:|---|"]
    groups = sorted({r["format"] for r in heard}) + ["all"]
    for group in groups:
        rows = [r for r in heard if group == "all" or r["format"] == group]
        n = sum(len(r["expected"]) for r in rows)
        m = sum(r["matched"] for r in rows)
        hits = sum(sum(r["clutter"].values()) for r in rows)
        wraps = [w for r in rows if r["prose"] for w in r["wraps"]]
        same, count = sum(w["same"] for w in wraps), sum(w["count"] for w in wraps)
        wrap_cells = (f"{pct(same, count)} | {verdict(same == count)}" if count else "– | –")
        label = "**all**" if group == "all" else group
        out.append(f"| {label} | {len(rows)} | {n} | {m} | {pct(m, n)} | "
                   f"{verdict(n and 100.0 * m / n >= TARGET_ACCURACY)} | {hits} | {verdict(hits <= TARGET_CLUTTER)} | "
                   f"{wrap_cells} |")
    out.append("")
    # Wrap invariance by kind of re-wrapping, over every prose folder: which wrapping breaks sentences.
    by_wrap = []
    for _, label in WRAPS:
        wraps = [w for r in heard if r["prose"] for w in r["wraps"] if w["label"] == label]
        if wraps:
            by_wrap.append(f"{label} {pct(sum(w['same'] for w in wraps), sum(w['count'] for w in wraps))}")
    if by_wrap:
        out += ["Wrap invariance by re-wrapping: " + ", ".join(by_wrap) + ".", ""]

    out += ["## Lector against pySBD", ""]
    version, rows = pysbd
    if version is None:
        out += ["pySBD: skipped (--no-pysbd)." if rows is None else f"pySBD: not available ({rows}).", ""]
        return out
    out += [f"pySBD {version} (`pysbd.Segmenter(language=…, clean=False)`) on the same plain-text sources, "
            "scored the same way: “as given” is the file Lector read; “lines joined” has each paragraph's "
            "lines joined by a space first, since pySBD does not unwrap hard-wrapped lines (Lector does). "
            "pySBD only segments: it neither drops nor rewrites anything (addresses, quote marks, underlines) "
            "and adds no full stop to a heading or a line that has none, as expected.txt has them, so on "
            "email, readme and the GPL header its score also counts the clean-up a listener needs; the prose "
            "rows are segmentation alone (but for the heading “Preamble.”).", "",
            "| folder | language | sentences | Lector | pySBD as given | pySBD lines joined |",
            "|---|---|---:|---:|---:|---:|"]
    for row in rows:
        if row["lector"] is None:
            continue
        out.append(f"| {row['name']} | {row['language']} | {row['expected']} | {pct(row['lector'], row['expected'])} | "
                   f"{pct(row['given'], row['expected'])} ({row['given_count']} segments) | "
                   f"{pct(row['joined'], row['expected'])} ({row['joined_count']} segments) |")
    for label, subset in (("plain text, all", [r for r in rows if r["lector"] is not None]),
                          ("prose only", [r for r in rows if r["lector"] is not None and r["prose"]])):
        if not subset:
            continue
        n = sum(r["expected"] for r in subset)
        lector, given, joined = (sum(r[k] for r in subset) for k in ("lector", "given", "joined"))
        out.append(f"| **{label}** | | {n} | **{pct(lector, n)}** | **{pct(given, n)}** | **{pct(joined, n)}** |")
    out.append("")
    subset = [r for r in rows if r["lector"] is not None]
    n = sum(r["expected"] for r in subset)
    lector, given, joined = (sum(r[k] for r in subset) for k in ("lector", "given", "joined"))

    def ratio(a, b):
        """a / b as "N.NN×", or "–" when b is 0."""
        return f"{a / b:.2f}×" if b else "–"
    out += [f"Lector / pySBD, sentences heard exactly over all plain-text folders: {ratio(lector, given)} against "
            f"the text as given, {ratio(lector, joined)} against the lines joined "
            f"({lector}, {given} and {joined} of {n}).", ""]
    return out


def main():
    """Scores the heard files, prints the report and writes it; exit 1 when there is nothing heard to score."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--heard", default=os.path.join(ROOT, ".build", "corpus-heard"),
                        help="the folder the corpus test wrote (default .build/corpus-heard)")
    parser.add_argument("--output", default=os.path.join(ROOT, "bench", "CORPUS.md"),
                        help="the Markdown report to write (default bench/CORPUS.md)")
    parser.add_argument("--no-pysbd", action="store_true", help="skip the comparison with pySBD")
    args = parser.parse_args()
    heard_dir = os.path.abspath(args.heard)

    results = [score_folder(name, heard_dir) for name in folders()]
    if not any(r["heard"] is not None for r in results):
        print(f"bench/corpus.py: nothing heard in {heard_dir}: run "
              "`swift test --filter \"Integration/CorpusReading/\"` (or scripts/test) first", file=sys.stderr)
        return 1

    def log(message):
        """Progress goes to stderr, so stdout is the report alone."""
        print(message, file=sys.stderr)
    # When pySBD is unavailable the report says so in one line; Lector's figures stand on their own.
    pysbd = (None, None) if args.no_pysbd else pysbd_scores(results, log)
    text = "\n".join(report(results, heard_dir, pysbd)).rstrip() + "\n"
    print(text, end="")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
