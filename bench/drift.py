#!/usr/bin/env python3
"""bench/drift.py: how far each audiobook format's chapter marks and audio stray from the WAV's.

    bench/drift.py --lector PATH [--minutes 240] [--rate 450] [--formats flac,mp3,opus,ogg] [--jobs N]

Makes a Markdown book of short numbered sentences in chapters of about two minutes, long enough for
MINUTES of speech at RATE words per minute, renders it with Lector to WAV and to each format, decodes every
file with ffmpeg (at 22,050 Hz) and follows it against the WAV: at each chapter mark, where the audio of
the chapter's first sentence is (cross-correlated with the WAV around the FLAC's mark, which is the sample
where that sentence starts), and how far the file's own mark is from it. Prints, per format, the wall and
CPU time of the rendering, the worst audio lag (followed every 30 s), the worst mark-to-audio error and the decoded duration
against the WAV's, and the loudest decoded sample in the WAV's pauses (where a
join that clicks would show). Figures, never pass/fail. Needs numpy.
"""
import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time

import numpy as np

RATE = 22050
WORDS = ["amber", "basket", "candle", "dolphin", "ember", "falcon", "garden", "harbour", "island", "jacket",
         "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quarry", "river", "saddle", "timber"]


def book(minutes, rate, per_chapter):
    """A Markdown book: chapters of `per_chapter` sentences of 4 words and a number."""
    words = minutes * rate
    sentences = words // 9
    out, n = [], 0
    while n < sentences:
        out.append("# Chapter %d\n" % (len(out) + 1))
        paragraph = []
        for _ in range(min(per_chapter, sentences - n)):
            w = [WORDS[(n * k + k) % len(WORDS)] for k in (1, 3, 7)]
            paragraph.append("The %s %s %s number %d." % (w[0], w[1], w[2], n))
            n += 1
        out.append(" ".join(paragraph) + "\n")
    return "\n".join(out)


def decode(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-ac", "1", "-ar", str(RATE), "-f", "s16le", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype="<i2").astype(np.float32)


def marks(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "csv=p=0", path],
                         capture_output=True, text=True, check=True).stdout
    # csv: id,time_base,start,start_time,end,end_time,title
    return [float(line.split(",")[3]) for line in out.splitlines() if line.strip()]


def lag(decoded, wav, at, window=RATE // 2, reach=RATE * 20):
    """Samples by which `decoded` lags `wav` around sample `at` (cross-correlation of half a second)."""
    ref = wav[at:at + window]
    lo, hi = max(0, at - reach), min(len(decoded), at + window + reach)
    seg = decoded[lo:hi]
    if len(ref) < window or len(seg) < window:
        return None
    n = 1 << int(np.ceil(np.log2(len(seg) + window)))
    corr = np.fft.irfft(np.fft.rfft(seg, n) * np.conj(np.fft.rfft(ref, n)), n)[:len(seg) - window + 1]
    energy = np.convolve(seg ** 2, np.ones(window, dtype=np.float32), "valid")
    score = corr / np.sqrt(np.maximum(energy, 1.0))
    return lo + int(np.argmax(score)) - at


def pauses_peak(decoded, wav, window=RATE // 50):
    """The loudest decoded sample where the WAV is silent (|x| <= 32) for 20 ms, 10 ms from speech either side."""
    n = min(len(decoded), len(wav)) // window * window
    quiet = (np.abs(wav[:n]).reshape(-1, window).max(axis=1) <= 32)
    inner = quiet.copy()
    inner[1:] &= quiet[:-1]
    inner[:-1] &= quiet[1:]
    if not inner.any():
        return 0
    return int(np.abs(decoded[:n]).reshape(-1, window)[inner].max())


def worst_lag(decoded, wav, step=RATE * 30):
    """The largest lag of `decoded` behind `wav`, followed every 30 s, samples."""
    worst = 0
    for at in range(RATE, len(wav) - RATE, step):
        if np.abs(wav[at:at + RATE // 2]).max() < 1000:
            continue
        k = lag(decoded, wav, at)
        if k is not None and abs(k) > abs(worst):
            worst = k
    return worst


def render(lector, source, out, rate, jobs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    command = [lector, "read", "--lang", "en", "--rate", str(rate), "--quiet", "--force", "--output", out, "--file", source]
    if jobs:
        command[2:2] = ["--jobs", str(jobs)]
    subprocess.run(command, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - start, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lector", required=True)
    ap.add_argument("--minutes", type=int, default=240)
    ap.add_argument("--rate", type=int, default=450)
    ap.add_argument("--formats", default="flac,mp3,opus,ogg")
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--chapter", type=int, default=40, help="sentences per chapter")
    ap.add_argument("--keep", help="a folder to keep the files in")
    o = ap.parse_args()
    work = o.keep or tempfile.mkdtemp(prefix="lector-drift-")
    os.makedirs(work, exist_ok=True)
    try:
        source = os.path.join(work, "book.md")
        with open(source, "w") as f:
            f.write(book(o.minutes, o.rate, o.chapter))
        wall, cpu = render(o.lector, source, os.path.join(work, "book.wav"), o.rate, o.jobs)
        wav = decode(os.path.join(work, "book.wav"))
        print("WAV: %.1f s of audio, rendered in %.1f s wall, %.1f s CPU" % (len(wav) / RATE, wall, cpu))
        formats = o.formats.split(",")
        if "flac" not in formats:
            formats.insert(0, "flac")
        reference = None
        for fmt in formats:
            path = os.path.join(work, "book." + fmt)
            wall, cpu = render(o.lector, source, path, o.rate, o.jobs)
            audio, own = decode(path), marks(path)
            if fmt == "flac":
                reference = own
            worst_mark, worst_at = 0.0, 0.0
            for mine, exact in zip(own, reference):
                at = int(round(exact * RATE))
                k = lag(audio, wav, at)
                if k is None:
                    continue
                heard = exact + k / RATE           # where the chapter's first sentence is in this file
                if abs(mine - heard) > abs(worst_mark):
                    worst_mark, worst_at = mine - heard, exact
            drift = worst_lag(audio, wav)
            print("%-4s %3d marks  wall %7.1f s  CPU %7.1f s  worst audio lag %+8.1f ms  worst mark-to-audio %+8.1f ms "
                  "(at %.0f s)  duration %+8.1f ms  peak in pauses %d" % (
                      fmt, len(own), wall, cpu, 1000 * drift / RATE, 1000 * worst_mark, worst_at,
                      1000 * (len(audio) - len(wav)) / RATE, pauses_peak(audio, wav)))
    finally:
        if not o.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
