#!/usr/bin/python3
"""Lector's benchmark against espeak-ng, speech-dispatcher and the floor, measured from what the sink played.

Run by bench/run inside scripts/with-session (a private session bus and a PulseAudio null sink); see
bench/run for the options. Python standard library only (Debian's /usr/bin/python3).

Every latency is measured on the recording of the null sink's monitor (parec, 5 ms latency, raw s16le mono
22050 Hz, running for the whole bench so that the sink never sleeps): the driver notes the sample index of
"now" just before it makes a request, and the latency is the distance to the first audible sample after it
(or, for a pause, to the last one). "Audible" is one sample of magnitude >= 200 (-44 dBFS); the null sink's
monitor is exactly 0 when nothing plays.
"""

import argparse
import array
import datetime
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import wave

RATE = 22050
THRESHOLD = 200  # |sample| at or above which a sample is audible
QUIET = 8  # |sample| below which reference audio counts as silence when judging lost/repeated audio
MPRIS = ("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.mpris.MediaPlayer2.Player")
LECTOR_OBJ = ("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1")

SENTENCE = "Every evening, before the sky turns grey, a small motor wakes and the lamp at the top begins to glow."


def log(*args):
    print("[%7.1f s]" % (time.perf_counter() - T0), *args, flush=True)


T0 = time.perf_counter()


# ---- Recording -------------------------------------------------------------------------------------------

class Recorder:
    """parec on the sink's monitor into a raw file; maps monotonic time to sample indices."""

    def __init__(self, path, device):
        self.path = path
        self.file = open(path, "wb")
        self.proc = subprocess.Popen(
            ["parec", "--raw", "--format=s16le", "--rate=%d" % RATE, "--channels=1", "--latency-msec=5",
             "-d", device], stdout=self.file, stderr=subprocess.DEVNULL)
        self.offset = None
        deadline = time.perf_counter() + 15
        while self.count() < RATE // 10:
            if self.proc.poll() is not None or time.perf_counter() > deadline:
                raise SystemExit("bench: parec -d %s delivers no data" % device)
            time.sleep(0.01)
        self.calibrate(0.3)

    def count(self):
        return os.stat(self.path).st_size // 2

    def calibrate(self, seconds=0.05):
        """The upper envelope of (samples recorded - RATE * t): the least delayed view of "now"."""
        best = None
        end = time.perf_counter() + seconds
        while True:
            t = time.perf_counter()
            off = self.count() - t * RATE
            best = off if best is None or off > best else best
            if t >= end:
                break
            time.sleep(0.001)
        self.offset = best

    def mark(self):
        return int(self.offset + time.perf_counter() * RATE)

    def samples(self, start, end=None):
        start = max(0, start)
        with open(self.path, "rb") as f:
            f.seek(start * 2)
            data = f.read(-1 if end is None else max(0, (end - start) * 2))
        a = array.array("h")
        a.frombytes(data[: len(data) // 2 * 2])
        return a

    def wait_until(self, index, timeout=10):
        deadline = time.perf_counter() + timeout
        while self.count() < index and time.perf_counter() < deadline:
            time.sleep(0.005)

    def first_sound(self, mark, timeout):
        """Samples from mark to the first audible sample, or None."""
        deadline = time.perf_counter() + timeout
        pos = mark
        while True:
            chunk = self.samples(pos)
            i = first_audible(chunk)
            if i is not None:
                return pos + i - mark
            pos += len(chunk)
            if time.perf_counter() > deadline:
                return None
            time.sleep(0.003)

    def wait_silence(self, seconds=0.3, timeout=10):
        """Waits until the last `seconds` of the recording are silent; recalibrates the clock meanwhile."""
        need = int(seconds * RATE)
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            n = self.count()
            tail = self.samples(n - need, n)
            if len(tail) >= need and first_audible(tail) is None:
                break
            time.sleep(0.02)
        self.calibrate()

    def silence_start(self, mark, lasting, timeout):
        """Samples from mark to the start of the first silence after it that lasts `lasting` s (None: none
        within `timeout` s)."""
        need = int(lasting * RATE)
        deadline = time.perf_counter() + timeout
        while True:
            chunk = self.samples(mark)
            last = 0
            for i in range(len(chunk) - 1, -1, -1):
                if abs(chunk[i]) >= THRESHOLD:
                    last = i + 1
                    break
            # the first silent stretch of `need` samples: scan forward from mark
            i, quiet_from = 0, 0
            while i < len(chunk):
                if abs(chunk[i]) >= THRESHOLD:
                    quiet_from = i + 1
                elif i + 1 - quiet_from >= need:
                    return quiet_from
                i += 1
            if time.perf_counter() > deadline:
                return None
            time.sleep(0.05)

    def last_sound_before(self, mark, end):
        """Samples from mark to the end of the last audible sample in [mark, end) (0 when none)."""
        chunk = self.samples(mark, end)
        for i in range(len(chunk) - 1, -1, -1):
            if abs(chunk[i]) >= THRESHOLD:
                return i + 1
        return 0

    def loud_now(self, window=0.03):
        n = self.count()
        tail = self.samples(n - int(window * RATE), n)
        return len(tail) > 0 and rms(tail) > 1500

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.file.close()


def first_audible(a, start=0):
    step = 256
    n = len(a)
    i = start
    while i < n:
        chunk = a[i:i + step]
        if max(chunk) >= THRESHOLD or min(chunk) <= -THRESHOLD:
            for j, x in enumerate(chunk):
                if x >= THRESHOLD or x <= -THRESHOLD:
                    return i + j
        i += step
    return None


def rms(a):
    return (sum(x * x for x in a) / max(1, len(a))) ** 0.5


def ms(samples):
    return None if samples is None else samples * 1000.0 / RATE


# ---- Clients ---------------------------------------------------------------------------------------------

class DBusClient:
    """bench/dbus-client: one open session-bus connection, one call per line."""

    def __init__(self, binary):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def cmd(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer.startswith("ok"):
            raise RuntimeError("dbus-client %s: %s" % (line.split(" ")[0], answer or "(exited)"))
        parts = answer.split(" ", 2)
        return int(parts[1]), (parts[2] if len(parts) > 2 else "")

    def call(self, obj, method):
        return self.cmd("call %s %s %s %s" % (obj[0], obj[1], obj[2], method))[0]

    def get(self, obj, prop):
        return self.cmd("get %s %s %s %s" % (obj[0], obj[1], obj[2], prop))

    def send(self, line):
        """Sends without waiting for the answer (read it with `answer()`)."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self):
        return self.proc.stdout.readline().strip()

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(3)
        except Exception:
            self.proc.kill()


class SSIP:
    """A persistent Speech Synthesis Interface Protocol connection to speech-dispatcher (its unix socket)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.cmd("SET self CLIENT_NAME bench:bench:main")
        self.cmd("SET self LANGUAGE en")
        self.cmd("SET self PRIORITY text")

    def _reply(self):
        lines = []
        while True:
            while b"\r\n" not in self.buf:
                data = self.sock.recv(65536)
                if not data:
                    raise RuntimeError("speech-dispatcher closed the connection")
                self.buf += data
            line, self.buf = self.buf.split(b"\r\n", 1)
            line = line.decode("utf-8", "replace")
            lines.append(line)
            if len(line) >= 4 and line[3] == " ":
                return lines

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\r\n")
        reply = self._reply()
        if not reply[-1][:1] in ("1", "2"):
            raise RuntimeError("SSIP %s: %s" % (line, reply[-1]))
        return reply

    def send_speak(self, text):
        """SPEAK with the text; the request counts as made when its last byte is sent."""
        self.cmd("SPEAK")
        body = "\r\n".join((".." + l if l.startswith(".") else l) for l in text.replace("\r", "").split("\n"))
        self.sock.sendall(body.encode() + b"\r\n.\r\n")

    def finish_speak(self):
        return self._reply()

    def close(self):
        try:
            self.sock.sendall(b"QUIT\r\n")
        except OSError:
            pass
        self.sock.close()


# ---- Processes -------------------------------------------------------------------------------------------

def proc_stat(pid):
    """(utime+stime, cutime+cstime) in seconds, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def proc_status(pid, key):
    """A kB field of /proc/PID/status (VmRSS, VmHWM), in MB."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def clear_peak(pid):
    try:
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


# ---- The bench -------------------------------------------------------------------------------------------

class Bench:
    def __init__(self, opts):
        self.o = opts
        self.work = opts.work
        self.runs = 1 if opts.smoke else opts.runs
        self.results = {}  # name -> list of ms (None = nothing heard)
        self.notes = []
        self.extra = {}
        self.commands = []
        self.env = dict(os.environ)
        self.env["LC_ALL"] = "C.UTF-8"
        self.env["XDG_STATE_HOME"] = os.path.join(self.work, "state")
        self.env["XDG_CACHE_HOME"] = os.path.join(self.work, "cache")
        self.sd_sock = os.path.join(self.work, "speechd.sock")
        self.env["SPEECHD_ADDRESS"] = "unix_socket:" + self.sd_sock
        os.environ.update(self.env)
        self.daemon = None
        self.sd_pid = None

    def add(self, name, value):
        self.results.setdefault(name, []).append(value)

    def cmdline(self, what, argv):
        text = " ".join(("'%s'" % a if (" " in a or not a) else a) for a in argv)
        if (what, text) not in self.commands:
            self.commands.append((what, text))

    # -- texts
    def make_texts(self):
        with open(os.path.join(self.o.root, "data/samples/en.txt")) as f:
            para = " ".join(f.read().split())
        self.para = para
        self.sentence_file = self.write("sentence.txt", SENTENCE + "\n")
        big = [SENTENCE, " "]
        size = len(SENTENCE) + 1
        target = 64 * 1024 if self.o.smoke else 1024 * 1024
        while size < target:
            big.append(para)
            big.append("\n")
            size += len(para) + 1
        self.big_text = "".join(big)[:target]
        self.big_file = self.write("big.txt", self.big_text)
        # ~10 minutes at 175 wpm = 1750 words (the sample paragraph has 123); the smoke run reads ~25 s.
        repeats = 1 if self.o.smoke else 14
        self.long_text = "\n".join([para] * repeats) + "\n"
        if self.o.smoke:
            self.long_text = para[:para.index(".", 300) + 1] + "\n"  # ~20 s
        self.long_file = self.write("long.txt", self.long_text)
        self.para_file = self.write("para.txt", para + "\n")

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    # -- servers
    def start_daemon(self):
        self.daemon_log = open(os.path.join(self.work, "daemon.log"), "w")
        self.daemon = subprocess.Popen([self.o.lector, "daemon"], stdout=self.daemon_log, stderr=self.daemon_log)
        self.cmdline("daemon", [self.o.lector, "daemon"])
        deadline = time.perf_counter() + 15
        while True:
            try:
                self.dbus.get(LECTOR_OBJ, "State")
                break
            except RuntimeError:
                if self.daemon.poll() is not None or time.perf_counter() > deadline:
                    raise SystemExit("bench: lector daemon did not come up; see %s" % self.daemon_log.name)
                time.sleep(0.05)

    def start_speechd(self):
        pidfile = os.path.join(self.work, "speechd.pid")
        argv = ["speech-dispatcher", "-d", "-t", "0", "-c", "unix_socket", "-S", self.sd_sock,
                "-P", pidfile, "-L", os.path.join(self.work, "speechd-log")]
        os.makedirs(os.path.join(self.work, "speechd-log"), exist_ok=True)
        self.cmdline("speech-dispatcher", argv)
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.perf_counter() + 15
        while not os.path.exists(self.sd_sock):
            if time.perf_counter() > deadline:
                raise SystemExit("bench: speech-dispatcher did not come up")
            time.sleep(0.05)
        try:
            with open(pidfile) as f:
                self.sd_pid = int(f.read().strip())
        except (OSError, ValueError):
            self.sd_pid = None
        self.ssip = SSIP(self.sd_sock)

    def stop_all(self):
        for closer in (getattr(self, "ssip", None), getattr(self, "dbus", None)):
            if closer:
                try:
                    closer.close()
                except Exception:
                    pass
        if self.sd_pid:
            for pid in children(self.sd_pid):
                os.kill(pid, signal.SIGTERM)
            try:
                os.kill(self.sd_pid, signal.SIGTERM)
            except OSError:
                pass
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(5)
            except subprocess.TimeoutExpired:
                self.daemon.kill()

    # -- helpers
    def lector_stop(self):
        self.dbus.call(LECTOR_OBJ, "Stop")

    def ssip_stop(self):
        self.ssip.cmd("STOP all")

    def run_cmd(self, argv, what):
        self.cmdline(what, argv)
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def quiet(self):
        self.rec.wait_silence(0.3)

    # -- first sound
    def first_sound(self):
        sentence_raw = self.floor_pcm()
        timeout_small = 5
        timeout_big = 20
        tools = [
            ("floor (pacat 5 ms)", self.fs_floor),
            ("lector read", self.fs_lector_read),
            ("Lector D-Bus Speak", self.fs_lector_dbus),
            ("espeak-ng CLI", self.fs_espeak),
            ("spd-say", self.fs_spd_say),
            ("speech-dispatcher SSIP", self.fs_ssip),
        ]
        for run in range(self.runs):
            for kind, timeout in (("sentence", timeout_small), ("1 MB", timeout_big)):
                for name, fn in tools:
                    if kind == "1 MB" and name.startswith("floor"):
                        continue
                    self.quiet()
                    try:
                        value = fn(kind, timeout)
                    except Exception as e:  # a peer that fails is reported, not fatal; Lector failing is
                        if "ector" in name:
                            raise
                        self.notes.append("%s (%s): %s" % (name, kind, e))
                        value = None
                    self.add("first sound, %s: %s" % (kind, name), ms(value))
            log("first sound: run %d/%d done" % (run + 1, self.runs))

    def floor_pcm(self):
        """The one sentence rendered by eSpeak NG, leading silence cut, as raw PCM for pacat."""
        wav = os.path.join(self.work, "floor.wav")
        subprocess.run(["espeak-ng", "-v", "en", "-w", wav, SENTENCE], check=True)
        with wave.open(wav) as w:
            a = array.array("h")
            a.frombytes(w.readframes(w.getnframes()))
        i = first_audible(a) or 0
        self.floor_raw = os.path.join(self.work, "floor.raw")
        with open(self.floor_raw, "wb") as f:
            f.write(a[i:i + RATE].tobytes())  # 1 s is enough
        return self.floor_raw

    def measure(self, start, timeout, stop):
        mark = self.rec.mark()
        proc = start()
        value = self.rec.first_sound(mark, timeout)
        stop(proc)
        return value

    def fs_floor(self, kind, timeout):
        argv = ["pacat", "--raw", "--format=s16le", "--rate=%d" % RATE, "--channels=1", "--latency-msec=5",
                self.floor_raw]
        def stop(p):
            p.wait(10)
        return self.measure(lambda: self.run_cmd(argv, "floor"), timeout, stop)

    def fs_lector_read(self, kind, timeout):
        argv = [self.o.lector, "read", "--lang", "en"] + (["--file", self.big_file] if kind == "1 MB" else [SENTENCE])
        def stop(p):
            p.wait(10)
            self.lector_stop()
        return self.measure(lambda: self.run_cmd(argv, "lector read " + kind), timeout, stop)

    def fs_lector_dbus(self, kind, timeout):
        self.dbus.cmd("load " + (self.big_file if kind == "1 MB" else self.sentence_file))
        self.rec.calibrate()
        def start():
            self.dbus.send("speak 175")
        def stop(_):
            answer = self.dbus.answer()
            if not answer.startswith("ok"):
                raise RuntimeError("Speak: " + answer)
            self.add("Speak round trip, %s (ms)" % kind, int(answer.split()[1]) / 1000.0)
            self.lector_stop()
        return self.measure(start, timeout, stop)

    def fs_espeak(self, kind, timeout):
        argv = ["espeak-ng", "-v", "en"] + (["-f", self.big_file] if kind == "1 MB" else [SENTENCE])
        def stop(p):
            if kind == "1 MB":
                p.terminate()
            p.wait(30)
        return self.measure(lambda: self.run_cmd(argv, "espeak-ng " + kind), timeout, stop)

    def fs_spd_say(self, kind, timeout):
        if kind == "1 MB":
            # A 1 MB argument exceeds the kernel's limit for one argument (128 KiB): spd-say cannot take it.
            raise RuntimeError("spd-say cannot take a 1 MB text as its argument (MAX_ARG_STRLEN 128 KiB)")
        argv = ["spd-say", "-l", "en", SENTENCE]
        def stop(p):
            p.wait(10)
            self.rec.wait_silence(0.3)
        return self.measure(lambda: self.run_cmd(argv, "spd-say"), timeout, stop)

    def fs_ssip(self, kind, timeout):
        text = self.big_text if kind == "1 MB" else SENTENCE
        self.ssip.cmd("SPEAK")
        body = "\r\n".join((".." + l if l.startswith(".") else l) for l in text.split("\n"))
        payload = body.encode() + b"\r\n.\r\n"
        self.rec.calibrate()
        def start():
            self.ssip.sock.sendall(payload)
        def stop(_):
            self.ssip.finish_speak()
            if kind == "1 MB":
                self.ssip_stop()
        return self.measure(start, timeout, stop)

    # -- pause and resume
    def wait_loud(self, timeout=3):
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.rec.loud_now():
                return
            time.sleep(0.003)

    def pause_resume(self):
        cycles = max(1, self.runs)
        variants = [
            ("Lector MPRIS D-Bus", lambda: self.dbus.call(MPRIS, "Pause"), lambda: self.dbus.call(MPRIS, "Play")),
            ("playerctl", lambda: self.run_cmd(["playerctl", "-p", "lector", "pause"], "playerctl pause").wait(10),
             lambda: self.run_cmd(["playerctl", "-p", "lector", "play"], "playerctl play").wait(10)),
            ("speech-dispatcher SSIP", lambda: self.ssip.cmd("PAUSE self"), lambda: self.ssip.cmd("RESUME self")),
        ]
        for name, pause, resume in variants:
            self.quiet()
            sd = name.startswith("speech")
            if sd:
                self.ssip.send_speak(self.long_text)
                self.ssip.finish_speak()
            else:
                self.dbus.cmd("load " + self.long_file)
                self.dbus.cmd("speak 175")
            if self.rec.first_sound(self.rec.mark(), 10) is None:
                self.notes.append("%s: no sound to pause" % name)
                continue
            for _ in range(cycles):
                time.sleep(0.7)
                self.rec.calibrate(0.02)
                self.wait_loud()
                mark = self.rec.mark()
                pause()
                self.add("pause to silence: " + name, ms(self.rec.silence_start(mark, 0.5, 8)))
                self.rec.calibrate(0.02)
                mark = self.rec.mark()
                resume()
                self.add("resume to sound: " + name, ms(self.rec.first_sound(mark, 5)))
            if sd:
                self.ssip_stop()
            else:
                self.lector_stop()
        log("pause/resume done")

    # -- exactness
    def exactness(self):
        ref_wav = os.path.join(self.work, "ref.wav")
        argv = [self.o.lector, "read", "--output", ref_wav, "--lang", "en", "--rate", "175", "--file", self.para_file]
        self.cmdline("reference rendering", argv)
        subprocess.run(argv, check=True, env=self.env)
        with wave.open(ref_wav) as w:
            ref = array.array("h")
            ref.frombytes(w.readframes(w.getnframes()))
        al = Aligner(ref)
        self.dbus.cmd("load " + self.para_file)
        for trial in range(max(1, min(self.runs, 5))):
            # pause/resume
            self.quiet()
            mark0 = self.rec.mark()
            self.dbus.cmd("speak 175")
            time.sleep(1.5 + 0.37 * trial)
            self.wait_loud()
            pmark = self.rec.mark()
            self.dbus.call(MPRIS, "Pause")
            time.sleep(0.5)
            rmark = self.rec.mark()
            self.dbus.call(MPRIS, "Play")
            time.sleep(1.0)
            end = self.rec.mark()
            self.rec.wait_until(end)
            self.lector_stop()
            rec = self.rec.samples(mark0, end)
            r = splice_error(al, rec, pmark - mark0, rmark - mark0)
            if r is None:
                self.notes.append("exactness: pause/resume trial %d: the recording could not be aligned with the "
                                  "reference (pause at %d, resume at %d of %d samples)" % (trial, pmark - mark0, rmark - mark0, len(rec)))
            self.add("exactness: pause/resume, lost(+)/repeated(-)", r)
            # seeks (absolute, MPRIS SetPosition) while reading: forward past what was synthesized, and back
            for label, at, target_us in (("seek forward 1 s -> 4 s", 1.0, 4000000 + 313000 * trial),
                                         ("seek back 3 s -> 1 s", 3.0, 1000000 + 313000 * trial)):
                self.quiet()
                mark0 = self.rec.mark()
                self.dbus.cmd("speak 175")
                time.sleep(at)
                smark = self.rec.mark()
                self.dbus.cmd("setpos %d" % target_us)
                time.sleep(1.0)
                end = self.rec.mark()
                self.rec.wait_until(end)
                self.lector_stop()
                rec = self.rec.samples(mark0, end)
                r = seek_error(al, rec, smark - mark0, target_us * RATE // 1000000)
                self.add("exactness: %s, lost(+)/repeated(-)" % label, r)
        log("exactness done")

    # -- cost
    def cost(self):
        # LECTOR_BENCH_COST_PARAGRAPHS=N reads N sample paragraphs (~37 s each) instead of the 10-minute text,
        # for quicker iterations on the cost alone.
        long_file = self.long_file
        paragraphs = os.environ.get("LECTOR_BENCH_COST_PARAGRAPHS")
        if paragraphs and not self.o.smoke:
            long_file = self.write("cost.txt", "\n".join([self.para] * max(1, int(paragraphs))) + "\n")
        # espeak-ng rendering the same text to a file, with its own rusage
        out = os.path.join(self.work, "espeak-long.wav")
        argv = ["espeak-ng", "-v", "en", "-s", "175", "-w", out, "-f", long_file]
        self.cmdline("cost: espeak-ng", argv)
        espeak = []
        for _ in range(1 if self.o.smoke else 3):
            p = subprocess.Popen(argv)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = status
            espeak.append((ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0))
        with wave.open(out) as w:
            audio_s = w.getnframes() / w.getframerate()
        e_cpu = statistics.median(c for c, _ in espeak)
        e_rss = max(r for _, r in espeak)
        # The floor of real-time playback: the same PCM, already synthesized, played in real time through
        # PulseAudio with Lector's buffer (tlength 100 ms, minreq 40 ms, PlaybackStream.swift) by pacat, its CPU
        # from rusage; the first minute of the text (all of it in the smoke run), CPU per audio second.
        with wave.open(out) as w:
            rate = w.getframerate()
            pcm = w.readframes(rate * (20 if self.o.smoke else 60))
        floor_raw = os.path.join(self.work, "floor-cost.raw")
        with open(floor_raw, "wb") as f:
            f.write(pcm)
        floor_s = len(pcm) / 2 / rate
        argv = ["pacat", "--raw", "--format=s16le", "--rate=%d" % rate, "--channels=1", "--latency-msec=100",
                "--process-time-msec=40", floor_raw]
        self.cmdline("cost: floor (pacat, same buffer)", argv)
        self.quiet()
        p = subprocess.Popen(argv)
        _, _, ru = os.wait4(p.pid, 0)
        floor = dict(cpu=ru.ru_utime + ru.ru_stime, audio_s=floor_s)
        # espeak-ng reading aloud (real time, through PulseAudio): the sample paragraph, for CPU per audio second
        aloud_file = self.sentence_file if self.o.smoke else self.para_file
        aloud_wav = os.path.join(self.work, "aloud.wav")
        subprocess.run(["espeak-ng", "-v", "en", "-s", "175", "-w", aloud_wav, "-f", aloud_file], check=True)
        with wave.open(aloud_wav) as w:
            para_s = w.getnframes() / w.getframerate()
        argv = ["espeak-ng", "-v", "en", "-s", "175", "-f", aloud_file]
        self.cmdline("cost: espeak-ng aloud", argv)
        self.quiet()
        p = subprocess.Popen(argv)
        _, _, ru = os.wait4(p.pid, 0)
        aloud = dict(cpu=ru.ru_utime + ru.ru_stime, rss=ru.ru_maxrss / 1024.0, audio_s=para_s)

        # Lector reading it aloud, in real time
        self.quiet()
        dpid = self.daemon.pid
        workers = children(dpid)
        for pid in [dpid] + workers:
            clear_peak(pid)
        def cpu_now(seen):
            """(daemon, workers incl. reaped ones) CPU seconds."""
            own, reaped = proc_stat(dpid)
            workers = reaped
            for pid in children(dpid):
                seen.add(pid)
                s = proc_stat(pid)
                if s:
                    workers += s[0]
            return own, workers
        seen = set(workers)
        before = cpu_now(seen)
        self.dbus.cmd("load " + long_file)
        t0 = time.perf_counter()
        self.dbus.cmd("speak 175")
        time.sleep(1)
        peak_worker = 0.0
        while True:
            _, status = self.dbus.get(MPRIS, "PlaybackStatus")
            for pid in children(dpid):
                seen.add(pid)
                peak_worker = max(peak_worker, proc_status(pid, "VmHWM") or 0)
            if "Stopped" in status:
                break
            if time.perf_counter() - t0 > audio_s * 1.5 + 60:
                self.notes.append("cost: reading did not end in time")
                break
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        after = cpu_now(seen)
        d_cpu, w_cpu = after[0] - before[0], after[1] - before[1]
        l_cpu = d_cpu + w_cpu
        d_hwm = proc_status(dpid, "VmHWM")
        self.extra["cost"] = dict(audio_s=audio_s, wall=wall, lector_cpu=l_cpu, espeak_cpu=e_cpu,
                                  espeak_rss=e_rss, daemon_hwm=d_hwm, worker_hwm=peak_worker,
                                  espeak_runs=len(espeak), daemon_cpu=d_cpu, worker_cpu=w_cpu, aloud=aloud,
                                  floor=floor)
        log("cost: Lector %.2f s CPU, espeak-ng %.2f s CPU for %.0f s of audio" % (l_cpu, e_cpu, audio_s))

    def memory(self):
        dpid = self.daemon.pid
        self.quiet()
        time.sleep(0.5)
        idle = proc_status(dpid, "VmRSS")
        self.dbus.cmd("load " + self.big_file)
        self.dbus.cmd("speak 175")
        samples = []
        duration = 5 if self.o.smoke else 60
        t0 = time.perf_counter()
        seeked = False
        while time.perf_counter() - t0 < duration:
            rss = proc_status(dpid, "VmRSS")
            w = sum(proc_status(p, "VmRSS") or 0 for p in children(dpid))
            samples.append((time.perf_counter() - t0, rss, w))
            if not seeked and time.perf_counter() - t0 > duration / 2:
                # jump far into the text: memory must not depend on the position
                try:
                    self.dbus.cmd("setpos %d" % (3600 * 1000000))
                except RuntimeError as e:
                    self.notes.append("memory: SetPosition far into the 1 MB text: %s" % e)
                seeked = True
            time.sleep(0.5)
        self.lector_stop()
        # the same 1 MB text spoken again and again (each replaces the last): does memory come back?
        again = []
        for _ in range(3 if self.o.smoke else 10):
            self.dbus.cmd("speak 175")
            time.sleep(0.3)
            self.lector_stop()
            time.sleep(0.2)
            again.append(proc_status(dpid, "VmRSS"))
        self.extra["memory"] = dict(idle=idle, samples=samples, duration=duration, again=again)
        log("memory: idle %.1f MB, max %.1f MB while reading 1 MB" % (idle, max(s[1] for s in samples)))

    def control(self):
        self.quiet()
        self.dbus.cmd("load " + self.long_file)
        self.dbus.cmd("speak 175")
        self.rec.first_sound(self.rec.mark(), 10)
        n = 5 if self.o.smoke else 50
        for _ in range(n):
            self.add("control: Get(PlaybackStatus) round trip", self.dbus.get(MPRIS, "PlaybackStatus")[0] / 1000.0)
            time.sleep(0.02)
        for _ in range(n // 5 * 2):
            self.add("control: PlayPause round trip", self.dbus.call(MPRIS, "PlayPause") / 1000.0)
            time.sleep(0.1)
        self.lector_stop()
        log("control done")

    # -- run it all
    def run(self):
        self.make_texts()
        self.rec = Recorder(os.path.join(self.work, "monitor.raw"), self.o.monitor)
        self.cmdline("recorder", ["parec", "--raw", "--format=s16le", "--rate=22050", "--channels=1",
                                  "--latency-msec=5", "-d", self.o.monitor])
        self.dbus = DBusClient(self.o.client)
        try:
            self.start_daemon()
            time.sleep(0.5)
            self.extra["idle_fresh"] = proc_status(self.daemon.pid, "VmRSS")
            self.start_speechd()
            # warm up both: the first reading loads the voice data and starts the worker / the module
            for warm in (lambda: self.dbus.cmd("load " + self.sentence_file) and self.dbus.cmd("speak 175"),
                         lambda: (self.ssip.send_speak(SENTENCE), self.ssip.finish_speak())):
                mark = self.rec.mark()
                warm()
                self.rec.first_sound(mark, 10)
                self.rec.wait_silence(0.3, 20)
            log("servers warm")
            only = os.environ.get("LECTOR_BENCH_ONLY", "").split(",")  # for working on the bench itself
            # memory first: the daemon is fresh, so growth over the 1 MB text is not hidden by earlier readings
            for part in ("memory", "first_sound", "pause_resume", "exactness", "control", "cost"):
                if only == [""] or part in only:
                    getattr(self, part)()
                if part == "first_sound":
                    self.extra["idle_used"] = proc_status(self.daemon.pid, "VmRSS")
        finally:
            self.stop_all()
            self.rec.stop()
        report(self)


# ---- Exactness analysis ----------------------------------------------------------------------------------

def envelope(a, block):
    return [sum(abs(x) for x in a[i:i + block]) for i in range(0, len(a) - block + 1, block)]


class Aligner:
    """Finds where a stretch of the recording is in the reference. The audio is the same speech but not always
    the same samples (eSpeak NG's wave generator keeps some state from one synthesis to the next, so only a
    fresh worker reproduces the reference bit for bit): coarse search on a 10 ms energy envelope, then on a
    1 ms one, then sample by sample on the absolute difference."""

    def __init__(self, ref):
        self.ref = ref
        self.env10 = envelope(ref, 220)

    def locate(self, rec, at, length=RATE // 5, near=None):
        """The offset o such that rec[at + k] matches ref[at + k + o], or None (silent or no match).
        With `near` (a reference index), only ±1 s around it is searched."""
        snippet = rec[at:at + length]
        if len(snippet) < length or first_audible(snippet) is None:
            return None
        e = envelope(snippet, 220)
        total = sum(e) or 1
        best, best_j = None, None
        n = len(e)
        lo, hi = 0, len(self.env10) - n + 1
        if near is not None:
            lo, hi = max(0, near // 220 - 100), max(0, min(hi, near // 220 + 100))
        for j in range(lo, hi):
            d = 0
            for k in range(n):
                d += abs(e[k] - self.env10[j + k])
                if best is not None and d >= best:
                    break
            if best is None or d < best:
                best, best_j = d, j
        if best is None or best / total > 0.5:  # not this speech
            return None
        coarse = best_j * 220
        best, best_o = None, None
        for o in range(coarse - 330, coarse + 331):  # sample by sample around it
            if o < 0 or o + length > len(self.ref):
                continue
            d = 0
            for k in range(0, length, 2):
                d += abs(snippet[k] - self.ref[o + k])
                if best is not None and d >= best:
                    break
            if best is None or d < best:
                best, best_o = d, o
        if best_o is None or best / (sum(abs(x) for x in snippet[::2]) or 1) > 1.0:
            return None
        return best_o - at


def audible_between(ref, a, b):
    return any(abs(x) >= QUIET for x in ref[max(0, a):max(0, b)])


def signed_gap(ref, heard_until, heard_from):
    """ms of reference lost (+: heard_from after heard_until) or repeated (-), 0 when that stretch is silent."""
    if heard_from > heard_until:
        return ms(heard_from - heard_until) if audible_between(ref, heard_until, heard_from) else 0.0
    if heard_from < heard_until:
        return -ms(heard_until - heard_from) if audible_between(ref, heard_from, heard_until) else 0.0
    return 0.0


def splice_error(al, rec, pause_at, resume_at):
    """ms of reference audio lost (+) or repeated (-) across a pause (rec index pause_at) and resume.
    Needs the pause to fall on a loud moment (mid-word): the last audible sample before the silence and the
    first after it then both lie inside speech, and their places in the reference give the answer."""
    # the pause is the silent stretch that holds the middle of [pause_at, resume_at]
    mid = (pause_at + resume_at) // 2
    if mid >= len(rec) or abs(rec[mid]) >= THRESHOLD:
        return None
    last = mid
    while last >= 0 and abs(rec[last]) < THRESHOLD:
        last -= 1
    first = mid
    while first < len(rec) and abs(rec[first]) < THRESHOLD:
        first += 1
    if last < 0 or first >= len(rec):
        return None
    start = first_audible(rec)
    lead = first_audible(al.ref) or 0
    if start is None:
        return None
    at1 = max(0, last - int(0.4 * RATE))
    off1 = al.locate(rec, at1, int(0.4 * RATE), near=at1 - start + lead)
    off2 = None if off1 is None else al.locate(rec, first, int(0.4 * RATE), near=last + 1 + off1)
    if off1 is None or off2 is None:
        return None
    # a little of quiet signal (|x| < THRESHOLD) may sit on either side: compare in the reference
    return signed_gap(al.ref, last + 1 + off1, first + off2)


def seek_error(al, rec, seek_at, target):
    """ms between where the audio after a seek starts in the reference and the target (+ skipped, - early).
    The new run's start is where the recording stops matching the reference at the new run's offset,
    walking back in 1 ms steps from 300 ms after the seek."""
    probe = seek_at + int(0.3 * RATE)
    while probe < len(rec) and first_audible(rec[probe:probe + RATE // 5]) is None:
        probe += RATE // 10
    off = al.locate(rec, probe, near=target + probe - seek_at)
    if off is None:
        return None
    # walk back in 5 ms blocks while the energy matches the reference at that offset (within a factor ~2)
    i = probe
    step = 110
    misses = 0
    while i - step > seek_at:
        a = sum(abs(x) for x in rec[i - step:i])
        j = i - step + off
        if j < 0:
            break
        b = sum(abs(x) for x in al.ref[j:j + step])
        if abs(a - b) > 0.5 * max(a, b, step * QUIET):
            misses += 1
            if misses == 2:
                i += step
                break
        else:
            misses = 0
        i -= step
    return signed_gap(al.ref, target, i + off)


# ---- Report ----------------------------------------------------------------------------------------------

def stats(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return min(vals), statistics.median(vals), max(vals), len(vals), len(values) - len(vals)


def fmt(x, digits=1):
    return "n/a" if x is None else ("%.*f" % (digits, x))


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    try:
        mem = proc_meminfo_total()
    except OSError:
        mem = "?"
    return "%s, %d cores, %s RAM, %s %s; load average at the end %s" % (
        cpu, os.cpu_count(), mem, platform.system(), platform.release(), load)


def proc_meminfo_total():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return "%.1f GB" % (int(line.split()[1]) / 1024.0 / 1024.0)
    return "?"


def report(b):
    o = b.o
    R = {k: stats(v) for k, v in b.results.items()}

    def med(name):
        s = R.get(name)
        return None if s is None else s[1]

    def ratio(a, c):
        return None if a is None or c in (None, 0) else a / c

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "**missed**")

    floor = med("first sound, sentence: floor (pacat 5 ms)")
    l_read = med("first sound, sentence: lector read")
    l_dbus = med("first sound, sentence: Lector D-Bus Speak")
    espeak = med("first sound, sentence: espeak-ng CLI")
    spd = med("first sound, sentence: spd-say")
    l_big = med("first sound, 1 MB: Lector D-Bus Speak")
    l_big_read = med("first sound, 1 MB: lector read")
    p_dbus = med("pause to silence: Lector MPRIS D-Bus")
    r_dbus = med("resume to sound: Lector MPRIS D-Bus")
    p_sd = med("pause to silence: speech-dispatcher SSIP")
    r_sd = med("resume to sound: speech-dispatcher SSIP")
    ex_p = R.get("exactness: pause/resume, lost(+)/repeated(-)")
    ex_s = R.get("exactness: seek back 3 s -> 1 s, lost(+)/repeated(-)")
    ex_f = R.get("exactness: seek forward 1 s -> 4 s, lost(+)/repeated(-)")
    cost = b.extra.get("cost", {})
    mem = b.extra.get("memory", {})
    mem_max = max((s[1] for s in mem.get("samples", [])), default=None)
    growth = None if mem_max is None or mem.get("idle") is None else mem_max - mem["idle"]
    worker_mem = [s[2] for s in mem.get("samples", [])]

    def le(a, c, k=1.0):
        return None if a is None or c is None else a <= k * c

    rows = [
        ("First sound, one sentence: `lector read` / floor", ratio(l_read, floor), "≤ 2", verdict(le(l_read, floor, 2))),
        ("First sound, one sentence: `lector read` / `espeak-ng` CLI", ratio(l_read, espeak), "< 1",
         verdict(None if l_read is None or espeak is None else l_read < espeak)),
        ("First sound, one sentence: `lector read` / `spd-say`", ratio(l_read, spd), "≤ 0.1", verdict(le(l_read, spd, 0.1))),
        ("First sound, one sentence: D-Bus Speak / floor", ratio(l_dbus, floor), "≤ 1.5", verdict(le(l_dbus, floor, 1.5))),
        ("First sound, 1 MB / one sentence (D-Bus Speak)", ratio(l_big, l_dbus), "≤ 1.1", verdict(le(l_big, l_dbus, 1.1))),
        ("First sound, 1 MB / one sentence (`lector read`)", ratio(l_big_read, l_read), "≤ 1.1 (same target)",
         verdict(le(l_big_read, l_read, 1.1))),
        ("Pause to silence over D-Bus, ms (Lector / speech-dispatcher %s ms)" % fmt(p_sd), p_dbus, "≤ 10 ms",
         verdict(le(p_dbus, 10))),
        ("Resume to sound over D-Bus, ms (Lector / speech-dispatcher %s ms)" % fmt(r_sd), r_dbus, "≤ 10 ms",
         verdict(le(r_dbus, 10))),
        ("Audio lost across pause/resume, ms (max)", None if ex_p is None else max(0, ex_p[2]), "0 ms",
         verdict(None if ex_p is None else ex_p[2] <= 0)),
        ("Audio repeated across pause/resume, ms (max)", None if ex_p is None else max(0, -ex_p[0]), "≤ one word (~300 ms)",
         verdict(None if ex_p is None else -ex_p[0] <= 300)),
        ("Audio lost (+) / repeated (-) at a seek back into heard audio, ms (worst)",
         None if ex_s is None else (ex_s[2] if abs(ex_s[2]) >= abs(ex_s[0]) else ex_s[0]), "0 lost, ≤ one word repeated",
         verdict(None if ex_s is None else (ex_s[2] <= 0 and -ex_s[0] <= 300))),
        ("Audio lost (+) / repeated (-) at a seek forward past synthesis, ms (worst)",
         None if ex_f is None else (ex_f[2] if abs(ex_f[2]) >= abs(ex_f[0]) else ex_f[0]), "0 lost, ≤ one word repeated",
         verdict(None if ex_f is None else (ex_f[2] <= 0 and -ex_f[0] <= 300))),
        ("CPU, Lector (daemon + worker) / `espeak-ng -w`, same text", ratio(cost.get("lector_cpu"), cost.get("espeak_cpu")),
         "≤ 1.1", verdict(le(cost.get("lector_cpu"), cost.get("espeak_cpu"), 1.1))),
        ("Daemon RSS idle (fresh), MB", b.extra.get("idle_fresh"), "≤ 15 MB", verdict(le(b.extra.get("idle_fresh"), 15))),
        ("Daemon RSS growth while reading the %s text, MB" % ("64 KB" if o.smoke else "1 MB"), growth, "≤ 5 MB",
         verdict(le(growth, 5))),
    ]

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = []
    L.append("# Lector benchmark results\n")
    L.append("Generated by `bench/run%s` on %s.  " % (" --smoke" if o.smoke else "", now))
    L.append("Machine: %s.  " % machine())
    L.append("Lector: `%s` (release build), git %s.\n" % (os.path.relpath(o.lector, o.root), o.git))
    L.append("Runs per measurement: %d%s. Medians decide; min and max show the spread. All figures come from the "
             "recording of the null sink's monitor (parec, 5 ms latency), except round trips (measured by the "
             "client) and CPU/memory (/proc, rusage).\n" % (b.runs, " (smoke mode: one iteration, small texts)" if o.smoke else ""))
    if o.note:
        L.append("**Conditions:** %s\n" % o.note)
    L.append("## Targets (ratios of medians from this run)\n")
    L.append("| Target | Measured | Goal | Verdict |")
    L.append("|---|---|---|---|")
    for name, value, goal, v in rows:
        L.append("| %s | %s | %s | %s |" % (name, fmt(value, 2), goal, v))
    L.append("")
    L.append("## Latencies (ms)\n")
    L.append("| Measurement | min | median | max | runs | no result |")
    L.append("|---|---|---|---|---|---|")
    for name in b.results:
        s = R[name]
        if s is None:
            L.append("| %s | n/a | n/a | n/a | 0 | %d |" % (name, len(b.results[name])))
        else:
            L.append("| %s | %s | %s | %s | %d | %d |" % (name, fmt(s[0]), fmt(s[1]), fmt(s[2]), s[3], s[4]))
    L.append("")
    if cost:
        L.append("## Cost\n")
        L.append("| | Lector (daemon + worker) | espeak-ng -w | ratio |")
        L.append("|---|---|---|---|")
        L.append("| Text | %.0f s of audio at 175 wpm, read aloud in real time (%.0f s wall) | the same text rendered to a WAV file (median of %d) | |"
                 % (cost["audio_s"], cost["wall"], cost["espeak_runs"]))
        L.append("| CPU s | %.2f | %.2f | %s |" % (cost["lector_cpu"], cost["espeak_cpu"],
                                                  fmt(ratio(cost["lector_cpu"], cost["espeak_cpu"]), 2)))
        L.append("| CPU per audio second, ms | %.2f | %.2f | |" % (1000 * cost["lector_cpu"] / cost["audio_s"],
                                                                 1000 * cost["espeak_cpu"] / cost["audio_s"]))
        L.append("| CPU s, daemon / worker | %.2f / %.2f | | |" % (cost["daemon_cpu"], cost["worker_cpu"]))
        a = cost["aloud"]
        L.append("| `espeak-ng` reading aloud through PulseAudio (%.0f s of speech): CPU per audio second, ms | "
                 "| %.2f | %s |" % (a["audio_s"], 1000 * a["cpu"] / a["audio_s"],
                                    fmt(ratio(cost["lector_cpu"] / cost["audio_s"], a["cpu"] / a["audio_s"]), 2)))
        fl = cost.get("floor")
        if fl:
            floor_ms = 1000 * fl["cpu"] / fl["audio_s"]   # CPU per audio second of real-time playback alone
            daemon_ms = 1000 * cost["daemon_cpu"] / cost["audio_s"]
            best = cost["worker_cpu"] + floor_ms * cost["audio_s"] / 1000
            L.append("| Floor: the same PCM played in real time by `pacat` with Lector's buffer (tlength 100 ms, "
                     "minreq 40 ms; first %.0f s): CPU per audio second, ms | daemon %.2f | %.2f | daemon / floor %s |"
                     % (fl["audio_s"], daemon_ms, floor_ms, fmt(ratio(daemon_ms, floor_ms), 2)))
            L.append("| Synthesis + playing: worker + floor × audio seconds, CPU s | %.2f of Lector's %.2f | "
                     "%.2f (`espeak-ng -w` + floor) | Lector / (worker + floor) %s; best reachable vs `espeak-ng -w` %s |"
                     % (best, cost["lector_cpu"], cost["espeak_cpu"] + floor_ms * cost["audio_s"] / 1000,
                        fmt(ratio(cost["lector_cpu"], best), 2),
                        fmt(ratio(cost["espeak_cpu"] + floor_ms * cost["audio_s"] / 1000, cost["espeak_cpu"]), 2)))
        L.append("| Peak RSS, MB | daemon %s, worker %s | %.1f | |" % (fmt(cost["daemon_hwm"]), fmt(cost["worker_hwm"]),
                                                                       cost["espeak_rss"]))
        L.append("")
    if mem:
        s = mem["samples"]
        L.append("## Memory while reading the %s text (%d s, a SetPosition 1 h into it halfway)\n"
                 % ("64 KB (smoke)" if o.smoke else "1 MB", mem["duration"]))
        L.append("Daemon RSS: fresh idle %s MB, idle after the first-sound runs (which read the 1 MB text 20 times) %s MB, idle before this text %s MB; "
                 "while reading: first %s MB, max %s MB, last %s MB. Worker RSS: min %s MB, max %s MB.\n" % (
                     fmt(b.extra.get("idle_fresh")), fmt(b.extra.get("idle_used")), fmt(mem["idle"]),
                     fmt(s[0][1] if s else None), fmt(mem_max), fmt(s[-1][1] if s else None),
                     fmt(min(worker_mem) if worker_mem else None), fmt(max(worker_mem) if worker_mem else None)))
        L.append("Daemon RSS after each of %d more `Speak` calls of the same text (each replacing the last, "
                 "then Stop), MB: %s.\n" % (len(mem["again"]), ", ".join(fmt(x) for x in mem["again"])))
        L.append("Samples (s: daemon MB / worker MB): " + ", ".join("%.0f: %.1f/%.1f" % x for x in s[::max(1, len(s) // 12)]) + "\n")
    if b.notes:
        L.append("## Notes from this run\n")
        for n in dict.fromkeys(b.notes):  # each once, in order
            L.append("- " + n + (" (%d times)" % b.notes.count(n) if b.notes.count(n) > 1 else ""))
        L.append("")
    analysis = os.path.join(o.root, "bench", "analysis.md")
    if not o.smoke and os.path.exists(analysis):
        # the reasons behind the figures, written by hand after a full run: kept with every later run
        with open(analysis) as f:
            L.append(f.read())
    L.append("## How each figure is measured\n")
    L.append(METHODS)
    L.append("## Exact commands\n")
    L.append("```")
    L.append("bench/run%s   # everything below, on a private session bus and PulseAudio null sink" % (" --smoke" if o.smoke else ""))
    for what, text in b.commands:
        L.append("%-28s %s" % (what + ":", text.replace(o.work, "$WORK").replace(o.root + "/", "")))
    L.append("```")
    L.append("")
    L.append("![first sound and pause latencies](%s)\n" % os.path.basename(o.png))
    with open(o.output, "w") as f:
        f.write("\n".join(L))
    chart(b, R, o)
    log("wrote %s and %s" % (o.output, o.png))


METHODS = """- **First sound**: the driver notes the sample index of "now" in the recording (its clock is calibrated
  against the recording's growth before each run), makes the request, and finds the first sample of
  magnitude >= 200 after that index. `lector read` and `espeak-ng`/`spd-say` include their process start,
  as a user runs them; *Lector D-Bus Speak* is one `Speak` call on an open bus connection
  (`bench/dbus-client`, a small C program over GIO, so no process start is counted); *speech-dispatcher SSIP*
  is one `SPEAK` on an open SSIP connection. The *floor* is already-synthesized PCM (the same sentence by
  eSpeak NG, leading silence cut) written by `pacat --latency-msec=5`, process start included. Between runs
  the previous speech is stopped and 300 ms of silence awaited. The daemon and speech-dispatcher are warm.
  The 1 MB text starts with the same sentence. `spd-say` cannot take 1 MB as one argument (the kernel's
  128 KiB limit per argument), so for 1 MB speech-dispatcher is measured over SSIP only.
- **Pause to silence**: while reading a long text, at a loud moment (mid-word), the driver notes "now", sends
  the pause, and takes the start of the first silence after "now" that lasts 500 ms (waiting up to 8 s). **Resume to sound**: "now", resume,
  first audible sample. For Lector: MPRIS `Pause`/`Play` over the open bus connection, and `playerctl -p lector
  pause|play` (process start included); for speech-dispatcher: `PAUSE self`/`RESUME self` over SSIP.
- **Exactness**: `lector read --output` renders the sample paragraph uninterrupted (the reference). The daemon
  then reads it with a pause/resume (MPRIS, mid-word), and separately with a `SetPosition` to 4 s while at
  1 s. Stretches of the recording are located in the reference by exact sample match (the null sink passes the
  stream's samples unchanged); walking sample by sample to where the match ends before the pause and begins
  after the resume gives the reference audio lost (+) or repeated (-); stretches that are silent in the
  reference (|x| < 8) count as 0. For a seek, the start of the new audio is compared with the target.
  Only a fresh worker reproduces the reference bit for bit (eSpeak NG's wave generator keeps state from one
  synthesis to the next), so stretches are aligned on their energy envelope (10 ms, then sample by sample):
  the resolution is a few ms, and a trial that cannot be aligned (a pause right at a word's end, an underrun
  between the two stretches) counts under "no result".
- **Cost**: CPU = utime + stime of the daemon and its worker (and of reaped children), from /proc, over the
  whole reading; peak RSS = VmHWM after resetting it (/proc/PID/clear_refs) before the reading. espeak-ng's
  figures are its rusage (`os.wait4`). The floor of real-time playback is `pacat`'s rusage playing the first
  minute of `espeak-ng -w`'s rendering of the text in real time with Lector's buffer settings (tlength 100 ms,
  minreq 40 ms): what feeding PulseAudio in real time costs at all, without synthesis, D-Bus or events; worker
  + floor is what reading aloud could cost at best. **Memory while reading 1 MB**: VmRSS of the daemon and the worker
  every 0.5 s; halfway a `SetPosition` one hour into the text.
- **Control latency**: round trips measured by the client around the blocking call, while reading.
"""


def chart(b, R, o):
    rows = []
    groups = [("first sound, sentence: ", "first sound (sentence)"), ("first sound, 1 MB: ", "first sound (1 MB)"),
              ("pause to silence: ", "pause"), ("resume to sound: ", "resume")]
    for prefix, label in groups:
        for name in b.results:
            if name.startswith(prefix) and R[name] is not None:
                rows.append(("%s: %s" % (label, name[len(prefix):]), R[name]))
    if not rows:
        return
    data = os.path.join(o.work, "chart.dat")
    with open(data, "w") as f:
        for i, (label, s) in enumerate(rows):
            f.write('%d "%s" %.3f %.3f %.3f\n' % (i, label, max(s[1], 0.1), max(s[0], 0.1), max(s[2], 0.1)))
    script = """
set terminal pngcairo size 1100,%d font "sans,9"
set output "%s"
set title "Lector benchmark: median (bar) and min-max, ms, log scale (%s)"
set logscale x
set xlabel "ms"
set grid xtics
set ytics nomirror
set yrange [-1:%d]
set style fill solid 0.6
unset key
plot "%s" using 3:1:(0.1):3:($1-0.35):($1+0.35):yticlabels(2) with boxxyerrorbars lc rgb "#4a7ebb", \\
     "%s" using 3:1:4:5 with xerrorbars lc rgb "black" pt 7 ps 0.5
""" % (160 + 24 * len(rows), o.png, "smoke" if o.smoke else "%d runs" % b.runs, len(rows), data, data)
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        raise SystemExit("bench: gnuplot failed: " + r.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--root", required=True)
    p.add_argument("--lector", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--monitor", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--png", required=True)
    p.add_argument("--git", default="?")
    p.add_argument("--note", default="")
    o = p.parse_args()
    o.work = tempfile.mkdtemp(prefix="lector-bench.")
    for d in ("state", "cache"):
        os.makedirs(os.path.join(o.work, d), exist_ok=True)
    b = Bench(o)
    b.run()
    # Timings never fail the bench; Lector not being heard at all does (that is breakage, not slowness).
    silent = [k for k, v in b.results.items() if "ector" in k and v and all(x is None for x in v)
              and not k.startswith("exactness")]
    if silent:
        print("bench: Lector was not heard in: " + "; ".join(silent), file=sys.stderr)
        sys.exit(1)
    if not os.environ.get("LECTOR_BENCH_KEEP"):
        subprocess.run(["rm", "-rf", o.work])


if __name__ == "__main__":
    main()
