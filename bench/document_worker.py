#!/usr/bin/env python3
"""Time from starting the document worker to its first byte of output, and its peak RSS, per document.

    bench/document_worker.py [--runs N] [--work DIR] NAME=WORKER_DIR ...

Makes the bench's documents (bench.py's recipe: a one-sentence HTML, a one-paragraph EPUB, a 2 MB pandoc
EPUB with a chapter every 40 paragraphs, a 1,000-page Ghostscript PDF with a running header and page numbers)
in DIR, then runs `lector-document FORMAT < DOC` (`lector-document-pdf pdf` for the PDF when WORKER_DIR has it)
of every WORKER_DIR, alternated, N times each (default 20), and prints min / median / max in ms of the first
output byte (the start sent ahead for a long EPUB or PDF, else the whole text) and the peak RSS (ru_maxrss from
bench/peak-rss.c, compiled into .build/bench/ when missing)."""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make(work):
    with open(os.path.join(ROOT, "data/samples/en.txt")) as f:
        para = " ".join(f.read().split())
    docs = []
    html = os.path.join(work, "one.html")
    with open(html, "w") as f:
        f.write("<html><body><p>The quick brown fox jumps over the lazy dog.</p></body></html>\n")
    docs.append(("one-sentence HTML", "html", html))
    small_md = os.path.join(work, "small.md")
    with open(small_md, "w") as f:
        f.write("# Chapter 1\n\n%s\n" % para)
    small = os.path.join(work, "small.epub")
    subprocess.run(["pandoc", small_md, "--metadata", "title=Small Book", "-o", small], check=True)
    docs.append(("one-paragraph EPUB", "epub", small))
    paras = 2 * 1024 * 1024 // (len(para) + 1) + 1
    chapters = ["# Chapter %d\n\n%s\n" % (n + 1, "\n\n".join([para] * min(40, paras - n * 40)))
                for n in range((paras + 39) // 40)]
    md = os.path.join(work, "book.md")
    with open(md, "w") as f:
        f.write("\n".join(chapters))
    epub = os.path.join(work, "book.epub")
    subprocess.run(["pandoc", md, "--metadata", "title=Bench Book", "-o", epub], check=True)
    docs.append(("2 MB EPUB", "epub", epub))
    words, lines, line = para.split(), [], ""
    for w in words:
        if len(line) + len(w) > 80:
            lines.append(line)
            line = ""
        line += (" " if line else "") + w
    lines.append(line)
    ps = ["%!PS", "/Helvetica findfont 10 scalefont setfont"]
    for n in range(1000):
        ps.append("72 760 moveto (Bench Book) show")
        for i in range(50):
            text = lines[(n * 50 + i) % len(lines)].replace("(", "").replace(")", "")
            ps.append("72 %d moveto (%s) show" % (730 - i * 13, text))
        ps.append("300 40 moveto (%d) show showpage" % (n + 1))
    ps_file = os.path.join(work, "book.ps")
    with open(ps_file, "w") as f:
        f.write("\n".join(ps) + "\n")
    pdf = os.path.join(work, "book.pdf")
    if not os.path.exists(pdf):
        subprocess.run(["ps2pdf", ps_file, pdf], check=True)
    docs.append(("1,000-page PDF", "pdf", pdf))
    return docs


PEAK_RSS = os.path.join(ROOT, ".build/bench/peak-rss")


def once(worker, fmt, path):
    """(ms to the first output byte, peak RSS in MB, the latter through peak-rss in a run of its own)"""
    with open(path, "rb") as f:
        t0 = time.perf_counter()
        p = subprocess.Popen([worker, fmt], stdin=f, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdout.read(1)
        first = (time.perf_counter() - t0) * 1000
        p.stdout.read()
        p.wait()
    with open(path, "rb") as f:
        err = subprocess.run([PEAK_RSS, worker, fmt], stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).stderr
    peak = [int(line.split()[1]) for line in err.decode().splitlines() if line.startswith("peak-rss ")]
    return first, peak[0] / 1024.0 if peak else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work", default="/tmp/lector-document-bench")
    ap.add_argument("builds", nargs="+", help="NAME=WORKER_DIR")
    o = ap.parse_args()
    os.makedirs(o.work, exist_ok=True)
    if not os.path.exists(PEAK_RSS) or os.path.getmtime(PEAK_RSS) < os.path.getmtime(os.path.join(ROOT, "bench/peak-rss.c")):
        os.makedirs(os.path.dirname(PEAK_RSS), exist_ok=True)
        subprocess.run(["cc", "-O2", "-Wall", "-o", PEAK_RSS, os.path.join(ROOT, "bench/peak-rss.c")], check=True)
    docs = make(o.work)
    builds = [b.split("=", 1) for b in o.builds]
    results = {}
    for _ in range(o.runs):
        for kind, fmt, path in docs:
            for name, folder in builds:
                pdf_worker = os.path.join(folder, "lector-document-pdf")
                worker = pdf_worker if fmt == "pdf" and os.path.exists(pdf_worker) else os.path.join(folder, "lector-document")
                results.setdefault((kind, name), []).append(once(worker, fmt, path))
    print("| document | build | first byte min / median / max (ms) | peak RSS median (MB) |")
    print("|---|---|---|---|")
    for kind, _, _ in docs:
        for name, _ in builds:
            r = results[(kind, name)]
            t = [x[0] for x in r]
            print("| %s | %s | %.1f / %.1f / %.1f | %.1f |" % (kind, name, min(t), statistics.median(t), max(t),
                                                             statistics.median([x[1] for x in r])))


if __name__ == "__main__":
    sys.exit(main())
