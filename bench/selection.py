#!/usr/bin/env python3
"""Start cost of `lector read` and the cost of reading the clipboard, figures only (nothing asserted).

    bench/selection.py NEW_LECTOR [OLD_LECTOR] [RUNS]

1. `lector read --help` (process start, the read command's options; no bus), NEW and OLD alternated: plain
   `lector read` must not get slower because the selection reader exists (it is a separate executable,
   `lector-selection`, run only for --selection/--clipboard).
2. On a private Xvfb with xclip owning the clipboard: Lector's own reader (`lector-selection clipboard`, next
   to NEW_LECTOR) against what `lector` ran before (xclip for TARGETS, then xclip for UTF8_STRING).
Medians and 90th percentiles in milliseconds, wall time including process start.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, env=None, runs=1):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return times


def summary(name, times):
    times = sorted(times)
    p90 = times[int(len(times) * 0.9) - 1]
    print(f"{name:<58} median {statistics.median(times):6.2f} ms   p90 {p90:6.2f} ms   n={len(times)}")
    return statistics.median(times)


def main():
    new = os.path.abspath(sys.argv[1])
    old = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
    news, olds = [], []
    for _ in range(runs):  # alternated, so that the machine's load falls on both alike
        news += timed([new, "read", "--help"], env)
        if old:
            olds += timed([old, "read", "--help"], env)
    n = summary("lector read --help (this build)", news)
    if old:
        o = summary("lector read --help (before)", olds)
        print(f"ratio this build / before: {n / o:.3f}")

    display = f":{300 + os.getpid() % 400}"
    xvfb = subprocess.Popen(["Xvfb", display, "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    try:
        xenv = dict(os.environ, DISPLAY=display, WAYLAND_DISPLAY="")
        for _ in range(100):
            if subprocess.run(["xclip", "-out", "-selection", "primary"], env=xenv, capture_output=True).returncode != 127 \
                    and os.path.exists(f"/tmp/.X11-unix/X{display[1:]}"):
                break
            time.sleep(0.05)
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as text:
            text.write("A sentence that was copied to the clipboard. " * 20)
            text.flush()
            owner = subprocess.Popen(["xclip", "-quiet", "-selection", "clipboard", "-in", text.name], env=xenv,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            reader = os.path.join(os.path.dirname(new), "lector-selection")
            own = timed([reader, "clipboard"], xenv, runs=min(runs, 50))
            tool = []
            for _ in range(min(runs, 50)):
                start = time.perf_counter()
                for target in ["TARGETS", "UTF8_STRING"]:
                    subprocess.run(["xclip", "-out", "-selection", "clipboard", "-target", target], env=xenv,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                tool.append((time.perf_counter() - start) * 1000)
            owner.terminate()
            owner.wait()
        a = summary("clipboard, 900 bytes: lector-selection (libxcb)", own)
        b = summary("clipboard, 900 bytes: xclip TARGETS + xclip UTF8_STRING", tool)
        print(f"ratio lector-selection / xclip pair: {a / b:.3f}")
    finally:
        xvfb.terminate()
        xvfb.wait()


if __name__ == "__main__":
    main()
