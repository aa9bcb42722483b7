#!/usr/bin/env python3
"""bench/vorbis_seams.py: what a join of Ogg Vorbis segments does to the audio.

    bench/vorbis_seams.py --lector PATH [--repeat N]

Renders data/samples/en.txt's paragraph, repeated N times (default 8, ~4 minutes: 4 joins), to WAV and to
Ogg Vorbis with Lector (--jobs 2), decodes both with ffmpeg, and follows the Vorbis audio against the WAV in
quarter-second steps: where it falls behind, a join added samples. Prints, per join, the samples added and
the peak sample of the Vorbis audio around them (0 is digital silence), and the whole file's length against
the WAV's. Figures, never pass/fail. Needs numpy.
"""
import argparse
import os
import shutil
import subprocess
import tempfile

import numpy as np

RATE = 22050


def decode(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype="<i2").astype(float)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lector", required=True)
    ap.add_argument("--repeat", type=int, default=8)
    o = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "data/samples/en.txt")) as f:
        text = " ".join([" ".join(f.read().split())] * o.repeat)
    work = tempfile.mkdtemp(prefix="lector-vorbis-seams-")
    try:
        for ext in ("wav", "ogg"):
            subprocess.run([o.lector, "read", "--lang", "en", "--quiet", "--jobs", "2", "--output",
                            os.path.join(work, "t." + ext), text], check=True)
        wav, ogg = decode(os.path.join(work, "t.wav")), decode(os.path.join(work, "t.ogg"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    step, offset, at = RATE // 4, 0, 0
    print("WAV %d samples (%.1f s), Ogg Vorbis %d: %+d samples (%+.3f %%)" % (
        len(wav), len(wav) / RATE, len(ogg), len(ogg) - len(wav), 100.0 * (len(ogg) - len(wav)) / len(wav)))
    while at + step <= len(wav):
        def error(k):
            return np.mean((ogg[at + k:at + k + step] - wav[at:at + step]) ** 2)
        if error(offset) > 2000:  # more than Vorbis's own noise: look for the audio a little later
            candidates = [k for k in range(offset, offset + 4096) if at + k + step <= len(ogg)]
            best = min(candidates, key=error) if candidates else offset
            if best != offset:
                # The join is in the pause before the speech that the second alignment fits: the WAV's run of
                # silence (|sample| <= 32) that ends where the two alignments part.
                lo = max(0, at - 4 * step)
                x = np.arange(lo, at + step)
                before = np.abs(ogg[x + offset] - wav[x])
                after = np.abs(ogg[x + best] - wav[x])
                split = lo + int(np.argmin(before.cumsum() - before + after[::-1].cumsum()[::-1]))
                # The pause: the last run of at least 100 ms of silence (|sample| <= 32) before the split + 0.1 s.
                silent = np.abs(wav[max(0, split - RATE):split + RATE // 10]) <= 32
                onset, start, k = split, split, len(silent)
                while k > 0:
                    if silent[k - 1]:
                        j = k
                        while j > 0 and silent[j - 1]:
                            j -= 1
                        if k - j >= RATE // 10:
                            base = max(0, split - RATE)
                            start, onset = base + j, base + k
                            while onset < len(wav) and abs(wav[onset]) <= 32:
                                onset += 1
                            break
                        k = j
                    else:
                        k -= 1
                pause = ogg[start + offset + 441:onset + best - 441]  # 20 ms from the speech either side
                print("join at %6.2f s: %4d samples added (%4.1f ms) to a pause of %4.0f ms; peak sample in the "
                      "pause (20 ms from speech) %d" % (start / RATE, best - offset, (best - offset) * 1000 / RATE,
                                                       (onset - start) * 1000 / RATE, np.abs(pause).max() if len(pause) else -1))
                offset = best
        at += step


if __name__ == "__main__":
    main()
