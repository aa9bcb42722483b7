#!/usr/bin/env python3
"""bench/audiobook.py: `lector read --output` against the pipeline a user would write.

    bench/audiobook.py --lector PATH [--size BYTES] [--smoke] [--output FILE.md] [--jobs N] [--only ROWS]

Renders one text (data/samples/en.txt repeated to --size bytes; default 1 MB, --smoke 8 KB) to Opus with
Lector and with `espeak-ng -w` followed by `opusenc`, at the same bit rate and complexity (Lector's defaults
for speech: 32 kbit/s, libopus complexity 10), plus opusenc at its own defaults, then to WAV, FLAC, Ogg Vorbis
and MP3 with Lector. Each row: wall time, CPU time (user + system of every process, workers and encoder
threads included), the peak RSS of the largest process, the audio's length and speed (x real time).
Memory flatness: Lector's Opus rendering again at a quarter of the size (peak RSS should not grow with the
text). FLAC and Ogg Vorbis also with --jobs 1 (their encoders run in parallel too). --only takes a
comma-separated subset of the rows: pipeline, pipeline-defaults, espeak, opus, opus-1, wav, flac, flac-1, ogg,
ogg-1, mp3, quarter (the comparison at full size: --only pipeline,opus,quarter). Each row notes the 1-minute
load average when it ended (the machine may be shared). Prints a Markdown table; figures, never pass/fail.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

LECTOR_OPUS_KBPS = 32
LECTOR_OPUS_COMPLEXITY = 10  # libsndfile 1.2 leaves libopus at its default


def run(steps):
    """Runs commands one after the other; returns (wall s, cpu s, peak RSS MiB of the largest process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    peak = 0
    for argv in steps:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode(errors="replace")
        if p.returncode != 0:
            sys.exit("bench/audiobook.py: %s failed (%d): %s" % (argv[0], p.returncode, err.strip()[:300]))
        peak = max(peak, usage.ru_maxrss)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN covers grandchildren (workers) reaped by our children.
    peak = max(peak, after.ru_maxrss if after.ru_maxrss > before.ru_maxrss else 0)
    return wall, cpu, peak / 1024


def duration(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                         capture_output=True, text=True).stdout.strip()
    try:
        return float(out)
    except ValueError:
        return 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lector", required=True)
    ap.add_argument("--size", type=int)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--output")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--only")
    o = ap.parse_args()
    only = set(o.only.split(",")) if o.only else None
    size = o.size or (8 * 1024 if o.smoke else 1024 * 1024)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "data/samples/en.txt")) as f:
        para = " ".join(f.read().split())
    work = tempfile.mkdtemp(prefix="lector-audiobook-bench-")
    rows = []
    try:
        def text(n):
            path = os.path.join(work, "text-%d.txt" % n)
            body = ""
            while len(body) < n:
                body += para + "\n\n"
            with open(path, "w") as f:
                f.write(body[:body.rindex(".", 0, n) + 1] + "\n")
            return path

        big = text(size)
        wav = os.path.join(work, "espeak.wav")

        def row(key, name, steps, out):
            if only is not None and key not in only:
                return None
            if os.path.exists(out):
                os.unlink(out)
            wall, cpu, rss = run(steps)
            audio = duration(out)
            load = os.getloadavg()[0]
            rows.append((name, wall, cpu, rss, audio, os.path.getsize(out), load))
            print("%-58s wall %8.1f s  cpu %8.1f s  rss %6.1f MiB  audio %8.1f s  load %.1f" % (
                name, wall, cpu, rss, audio, load), file=sys.stderr, flush=True)
            os.unlink(out)
            return wall, cpu, rss

        lector = [o.lector, "read", "--lang", "en", "--quiet", "--force", "--file", big, "--output"]
        out = os.path.join(work, "out")
        espeak = ["espeak-ng", "-v", "en", "-w", wav, "-f", big]
        pipe = row("pipeline", "espeak-ng -w, then opusenc --bitrate %d --comp %d" % (LECTOR_OPUS_KBPS, LECTOR_OPUS_COMPLEXITY),
                   [espeak, ["opusenc", "--quiet", "--bitrate", str(LECTOR_OPUS_KBPS), "--comp",
                             str(LECTOR_OPUS_COMPLEXITY), wav, out + "-p.opus"]], out + "-p.opus")
        row("pipeline-defaults", "espeak-ng -w, then opusenc (its defaults)", [espeak, ["opusenc", "--quiet", wav, out + "-d.opus"]],
            out + "-d.opus")
        row("espeak", "espeak-ng -w alone (WAV)", [espeak], wav)
        mine = row("opus", "lector read --output .opus (defaults: 32 kbit/s, complexity 10, --jobs %d)" % o.jobs,
                   [lector + [out + ".opus"]], out + ".opus")
        row("opus-1", "lector read --output .opus --jobs 1", [lector + [out + "-1.opus", "--jobs", "1"]], out + "-1.opus")
        for ext in ("wav", "flac", "ogg", "mp3"):
            row(ext, "lector read --output .%s --jobs %d" % (ext, o.jobs), [lector + [out + "." + ext]], out + "." + ext)
            if ext in ("flac", "ogg"):
                row(ext + "-1", "lector read --output .%s --jobs 1" % ext, [lector + [out + "-1." + ext, "--jobs", "1"]],
                    out + "-1." + ext)
        quarter = text(size // 4)
        small = row("quarter", "lector read --output .opus, a quarter of the text (memory flatness)",
                    [[o.lector, "read", "--lang", "en", "--quiet", "--force", "--file", quarter, "--output",
                      out + "-q.opus"]], out + "-q.opus")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = ["## Audiobook rendering (%s of text%s)" % (
        ("%d KB" % (size // 1024)) if size < 1024 * 1024 else "%.1f MB" % (size / 1048576), ", smoke" if o.smoke else ""),
        "", "| command | wall s | CPU s | peak RSS MiB | audio s | × real time | size MB | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, wall, cpu, rss, audio, nbytes, load in rows:
        lines.append("| %s | %.1f | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f |" % (
            name, wall, cpu, rss, audio, audio / wall if wall else 0, nbytes / 1e6, load))
    lines.append("")
    if mine and pipe:
        lines.append("Lector / pipeline at the same bit rate and complexity: wall %.2f×, CPU %.2f×, peak RSS %.2f×." % (
            mine[0] / pipe[0], mine[1] / pipe[1], mine[2] / pipe[2]))
    if mine and small:
        lines.append("Peak RSS at the whole text / a quarter of it: %.2f× (flat when near 1)." % (mine[2] / small[2]))
    for ext in ("flac", "ogg"):
        n = [r for r in rows if r[0].startswith("lector read --output .%s " % ext)]
        if len(n) == 2:
            lines.append("%s: --jobs %d / --jobs 1: wall %.2f×, CPU %.2f×." % (ext, o.jobs, n[0][1] / n[1][1], n[0][2] / n[1][2]))
    lines.append("")
    report = "\n".join(lines)
    print(report)
    if o.output:
        with open(o.output, "w") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
