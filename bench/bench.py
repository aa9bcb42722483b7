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
import random
import signal
import socket
import statistics
import struct
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

# The text file that starts as the bench's EPUB does (its title page), for the EPUB's first-sound ratio.
# Appended to a document's first-sound row for the first one of the daemon's life (its worker is started for it).
COLD_SUFFIX = ", first of the session"
TITLE_KIND = "one-sentence text file, the EPUB's title"
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
        self.check()
        return os.stat(self.path).st_size // 2

    def check(self):
        """Stops the bench when the recording stopped (the sound server is gone), instead of timing out on every
        measurement that follows."""
        if self.offset is not None and self.proc.poll() is not None:
            raise SystemExit("bench: the recorder (parec) exited with status %d: the sound server is gone"
                             % self.proc.returncode)

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
            self.check()
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


# speech-dispatcher speaking through Lector's module (sd_lector) rather than its own eSpeak NG module.
SD_LECTOR = "speech-dispatcher SSIP, Lector's module"


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


def pids_with_argument(argument):
    """The processes with `argument` among their command-line arguments (/proc/PID/cmdline)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                if argument.encode() in f.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            pass
    return pids


def running(pid):
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


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
        # First sound is taken more often: on this kind of machine a ~10 ms figure that includes a process
        # start spreads over ±5 ms, and the 1 MB / sentence target asks to resolve 10 % of it.
        self.first_sound_runs = 1 if opts.smoke else (opts.first_sound_runs or 3 * opts.runs)
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
        # The system configuration (its eSpeak NG module) for the peer; a second speech-dispatcher, with its own
        # socket and a user configuration whose default is Lector's module (sd_lector, built beside lector), for
        # Lector's module: one server's stuck eSpeak NG module (after PAUSE/RESUME, or a STOP of 1 MB) then
        # never delays the other's measurements.
        module = os.path.join(os.path.dirname(self.o.lector), "lector-speechd-module")
        self.sd_pid = self.spawn_speechd(self.sd_sock, "speechd", None)
        self.sd_lector_sock = os.path.join(self.work, "speechd-lector.sock")
        self.sd_lector_pid = self.spawn_speechd(
            self.sd_lector_sock, "speechd-lector",
            'Include "/etc/speech-dispatcher/speechd.conf"\n'
            'AddModule "lector" "%s" "lector.conf"\nDefaultModule lector\n' % module)
        self.ssip = SSIP(self.sd_sock)
        self.ssip_lector = SSIP(self.sd_lector_sock)

    def spawn_speechd(self, sock, name, config_text):
        """Starts speech-dispatcher on `sock` (with `config_text` as the user's speechd.conf when given) and
        returns its pid."""
        pidfile = os.path.join(self.work, name + ".pid")
        logdir = os.path.join(self.work, name + "-log")
        argv = ["speech-dispatcher", "-d", "-t", "0", "-c", "unix_socket", "-S", sock, "-P", pidfile, "-L", logdir]
        os.makedirs(logdir, exist_ok=True)
        env = self.env
        if config_text:
            config = os.path.join(self.work, name + "-config")
            os.makedirs(os.path.join(config, "speech-dispatcher"), exist_ok=True)
            with open(os.path.join(config, "speech-dispatcher", "speechd.conf"), "w") as f:
                f.write(config_text)
            env = dict(self.env, XDG_CONFIG_HOME=config)
            self.cmdline(name, ["env", "XDG_CONFIG_HOME=" + config] + argv)
        else:
            self.cmdline(name, argv)
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        # The socket can appear before the pid file is written: wait for both, or the server is never stopped.
        deadline = time.perf_counter() + 15
        while True:
            try:
                with open(pidfile) as f:
                    pid = int(f.read().strip())
                if os.path.exists(sock):
                    return pid
            except (OSError, ValueError):
                pass
            if time.perf_counter() > deadline:
                raise SystemExit("bench: speech-dispatcher did not come up")
            time.sleep(0.05)

    def stop_all(self):
        for closer in (getattr(self, "ssip", None), getattr(self, "ssip_lector", None), getattr(self, "dbus", None)):
            if closer:
                try:
                    closer.close()
                except Exception:
                    pass
        # The pid files can name a process of speech-dispatcher's start that is gone by now: the servers are
        # also found by the socket path on their command line, which holds this run's own folder.
        started = [pid for pid in (self.sd_pid, getattr(self, "sd_lector_pid", None)) if pid]
        found = [pid for sock in (self.sd_sock, getattr(self, "sd_lector_sock", None)) if sock
                 for pid in pids_with_argument(sock)]
        for sd_pid in sorted(set(started + found)):
            for pid in children(sd_pid):
                os.kill(pid, signal.SIGTERM)
            # speech-dispatcher (0.11) can miss a SIGTERM that comes while its module is exiting, and with
            # `-t 0` it never leaves by itself: ask again each second, then kill it.
            for attempt in range(4):
                try:
                    os.kill(sd_pid, signal.SIGKILL if attempt == 3 else signal.SIGTERM)
                except OSError:
                    break
                deadline = time.perf_counter() + 1
                while time.perf_counter() < deadline and running(sd_pid):
                    time.sleep(0.05)
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            try:
                self.daemon.wait(5)
            except subprocess.TimeoutExpired:
                self.daemon.kill()

    # -- helpers
    def lector_stop(self):
        self.dbus.call(LECTOR_OBJ, "Stop")

    def ssip_stop(self, ssip=None):
        (ssip or self.ssip).cmd("STOP all")

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
            ("lector read, language detected", self.fs_lector_read_detected),
            ("Lector D-Bus Speak", self.fs_lector_dbus),
            ("Lector D-Bus SpeakFile", self.fs_lector_dbus_file),
            ("espeak-ng CLI", self.fs_espeak),
            ("spd-say", self.fs_spd_say),
            ("spd-say, server not running", self.fs_spd_say_cold),
            ("speech-dispatcher SSIP", self.fs_ssip),
            (SD_LECTOR, lambda kind, timeout: self.fs_ssip(kind, timeout, self.ssip_lector)),
        ]
        # "NAME;NAME" (";": a name may hold a comma): only these tools, for working on the bench itself.
        names = os.environ.get("LECTOR_BENCH_TOOLS")
        if names:
            tools = [t for t in tools if t[0] in names.split(";")]
        big_reads = 0
        for run in range(self.first_sound_runs):
            # Each run measures every tool and text in its own order (seeded: the same order every time the
            # bench runs): a fixed order let whoever ran right after speech-dispatcher's work pay for it, and
            # the two texts are mixed so that a tool's sentence and 1 MB figures are taken among the same
            # neighbours (in a block of its own, the 1 MB text ran among the peers' 1 MB work).
            order = [(kind, timeout, name, fn)
                     for kind, timeout in (("sentence", timeout_small), ("1 MB", timeout_big))
                     for name, fn in tools
                     if not (kind == "1 MB" and name.startswith("floor"))]
            random.Random(run).shuffle(order)
            for kind, timeout, name, fn in order:
                self.quiet()
                try:
                    value = fn(kind, timeout)
                except Exception as e:  # a peer that fails is reported, not fatal; Lector failing is
                    if "ector" in name and not name.startswith("speech-dispatcher"):
                        raise
                    self.notes.append("%s (%s): %s" % (name, kind, e))
                    value = None
                self.add("first sound, %s: %s" % (kind, name), ms(value))
                if kind == "1 MB" and "ector" in name:
                    big_reads += 1
                if os.environ.get("LECTOR_BENCH_TRACE"):
                    log("TRACE %s | %s | %s" % (kind, name, ms(value)))
            # What carrying the 1 MB text over the bus costs with no work done: the part of D-Bus Speak's
            # first sound that no daemon can remove (SpeakFile sends a file descriptor instead).
            self.dbus.cmd("load " + self.big_file)
            self.add("D-Bus round trip of the 1 MB text to a method that does not exist (ms)",
                     self.dbus.cmd("bare")[0] / 1000.0)
            log("first sound: run %d/%d done" % (run + 1, self.first_sound_runs))
        self.extra["big_reads"] = big_reads

    # -- documents
    def make_documents(self):
        """A 2 MB EPUB (pandoc, a chapter every 40 paragraphs) and a 1,000-page PDF (Ghostscript, a running
        header and a page number on every page); 100 KB and 20 pages for --smoke."""
        paras = (100 * 1024 if self.o.smoke else 2 * 1024 * 1024) // (len(self.para) + 1) + 1
        chapters = ["# Chapter %d\n\n%s\n" % (n + 1, "\n\n".join([self.para] * min(40, paras - n * 40)))
                    for n in range((paras + 39) // 40)]
        md = self.write("book.md", "\n".join(chapters))
        epub = os.path.join(self.work, "book.epub")
        subprocess.run(["pandoc", md, "--metadata", "title=Bench Book", "-o", epub], check=True)
        words = self.para.split()
        lines, line = [], ""
        for w in words:
            if len(line) + len(w) > 80:
                lines.append(line)
                line = ""
            line += (" " if line else "") + w
        lines.append(line)
        pages = 20 if self.o.smoke else 1000
        ps = ["%!PS", "/Helvetica findfont 10 scalefont setfont"]
        for n in range(pages):
            ps.append("72 760 moveto (Bench Book) show")
            for i in range(50):
                text = lines[(n * 50 + i) % len(lines)].replace("(", "").replace(")", "")
                ps.append("72 %d moveto (%s) show" % (730 - i * 13, text))
            ps.append("300 40 moveto (%d) show showpage" % (n + 1))
        ps_file = self.write("book.ps", "\n".join(ps) + "\n")
        pdf = os.path.join(self.work, "book.pdf")
        subprocess.run(["ps2pdf", ps_file, pdf], check=True)
        small_md = self.write("small.md", "# Chapter 1\n\n%s\n" % self.para)
        self.small_epub = os.path.join(self.work, "small.epub")
        subprocess.run(["pandoc", small_md, "--metadata", "title=Small Book", "-o", self.small_epub], check=True)
        return [("%d KB EPUB" % (os.path.getsize(md) // 1024), epub), ("%d-page PDF" % pages, pdf)]

    def document_memory(self, docs):
        """Peak RSS over reading a document, beside a one-paragraph EPUB: of the document worker run alone on it
        (ru_maxrss, through bench/peak-rss: a child forked from Python would count Python's size), and growth of the daemon's peak (VmHWM, reset through clear_refs) from before
        `lector read --file` until the worker has sent the whole document and the daemon has taken it in."""
        bin_dir = os.path.dirname(self.o.lector)
        for kind, path in [("one-paragraph EPUB", self.small_epub)] + docs:
            fmt = "pdf" if path.endswith(".pdf") else "epub"
            pdf_worker = os.path.join(bin_dir, "lector-document-pdf")  # absent from builds before it
            worker = pdf_worker if fmt == "pdf" and os.path.exists(pdf_worker) else os.path.join(bin_dir, "lector-document")
            with open(path, "rb") as f:
                err = subprocess.run([self.o.peak_rss, worker, fmt], stdin=f, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE).stderr.decode()
            self.cmdline("document worker peak RSS", [self.o.peak_rss, worker, fmt, "<", path])
            peak = [int(line.split()[1]) for line in err.splitlines() if line.startswith("peak-rss ")]
            self.add("document worker peak RSS, %s (MB)" % kind, peak[0] / 1024.0 if peak else None)
            dpid = self.daemon.pid
            self.lector_stop()
            self.quiet()
            time.sleep(0.3)
            before = proc_status(dpid, "VmRSS")
            if before is None or not clear_peak(dpid):
                self.notes.append("daemon peak RSS: /proc/%d/clear_refs cannot be written" % dpid)
                continue
            argv = [self.o.lector, "read", "--lang", "en", "--file", path]
            self.run_cmd(argv, "lector read --file " + kind).wait(30)
            deadline = time.perf_counter() + 30
            time.sleep(0.1)
            while time.perf_counter() < deadline and any(self.comm(c).startswith("lector-documen") for c in children(dpid)):
                time.sleep(0.05)
            time.sleep(0.5)  # the rest is taken in in idle steps
            peak = proc_status(dpid, "VmHWM")
            self.lector_stop()
            if peak is not None:
                self.add("daemon peak RSS growth while reading, %s (MB)" % kind, peak - before)

    @staticmethod
    def comm(pid):
        try:
            with open("/proc/%d/comm" % pid) as f:
                return f.read().strip()
        except OSError:
            return ""

    def documents(self):
        """First sound of `lector read --file` for documents, beside the one-sentence text file, in the same
        runs (shuffled, seeded), and their ratio. The EPUB is heard first with its title page, "Bench Book.",
        which eSpeak NG voices ~14 ms into its audio against ~0 ms for the sentence (and for the PDF's first
        line, "A lighthouse is …"): the EPUB is compared with a text file of that title, so that the ratio
        measures Lector, not where the first sentence's first audible sample lies."""
        docs = self.make_documents()
        title_file = self.write("title.txt", "Bench Book.\n")
        files = [("one-sentence text file", self.sentence_file), (TITLE_KIND, title_file)] + docs
        for run in range(self.first_sound_runs):
            order = list(files)
            random.Random(run).shuffle(order)
            for kind, path in order:
                self.quiet()
                argv = [self.o.lector, "read", "--lang", "en", "--file", path]
                def stop(p):
                    p.wait(30)
                    self.lector_stop()
                value = self.measure(lambda: self.run_cmd(argv, "lector read --file " + kind), 30, stop)
                # The daemon's first document of a program starts its worker; later ones are handed to a
                # worker started ahead and waiting (DocumentReader): the first is reported on its own.
                cold = run == 0 and (kind, path) in docs
                self.add("first sound, document: lector read --file, %s%s" % (kind, COLD_SUFFIX if cold else ""),
                         ms(value))
            log("documents: run %d/%d done" % (run + 1, self.first_sound_runs))
        for _ in range(1 if self.o.smoke else 3):
            self.document_memory(docs)
        self.poppler_floor(docs)
        for kind, _ in docs:
            reference = TITLE_KIND if "EPUB" in kind else "one-sentence text file"
            base = self.results.get("first sound, document: lector read --file, %s" % reference, [])
            good_base = [v for v in base if v is not None]
            for suffix in ("", COLD_SUFFIX):
                values = self.results.get("first sound, document: lector read --file, %s%s" % (kind, suffix), [])
                good = [v for v in values if v is not None]
                if good and good_base:
                    self.add("first sound ratio, %s%s / %s (x)" % (kind, suffix, reference),
                             statistics.median(good) / statistics.median(good_base))
                    if not suffix:
                        self.add("first sound ratio of minimums, %s / %s (x)" % (kind, reference),
                                 min(good) / min(good_base))

    def poppler_floor(self, docs):
        """The least any poppler-based reader pays before it knows the PDF's first words: poppler-glib alone, loaded
        and warm, opening the PDF from memory, and opening it and extracting the first window (3 pages,
        PDFText.firstWindow), and the first-sound ratio each leaves at best: (one-sentence first sound + that) /
        one-sentence first sound, by minimums."""
        if not self.o.poppler_floor:
            return
        for kind, path in docs:
            if not path.endswith(".pdf"):
                continue
            base = [v for v in self.results.get("first sound, document: lector read --file, one-sentence text file", [])
                    if v is not None]
            for pages, what in (("0", "open it"), ("3", "open it and extract its first 3 pages")):
                argv = [self.o.poppler_floor, path, pages, "20"]
                self.cmdline("poppler alone", argv)
                floor = float(subprocess.run(argv, stdout=subprocess.PIPE, check=True).stdout.decode().split()[1])
                self.add("poppler alone, warm: %s, %s (ms)" % (what, kind), floor)
                if base:
                    self.add("first sound ratio floor set by poppler (%s), %s / one-sentence text file (x)"
                             % (what, kind), (min(base) + floor) / min(base))

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

    def fs_lector_read_detected(self, kind, timeout):
        """`lector read` with no --lang, as a user mostly runs it: the daemon detects the language."""
        return self.fs_lector_read(kind, timeout, lang=[])

    def fs_lector_read(self, kind, timeout, lang=("--lang", "en")):
        argv = [self.o.lector, "read"] + list(lang) + (["--file", self.big_file] if kind == "1 MB" else [SENTENCE])
        def stop(p):
            p.wait(10)
            self.lector_stop()
        return self.measure(lambda: self.run_cmd(argv, "lector read " + kind + ("" if lang else ", language detected")),
                            timeout, stop)

    def fs_lector_dbus(self, kind, timeout, command="speak", method="Speak"):
        self.dbus.cmd("load " + (self.big_file if kind == "1 MB" else self.sentence_file))
        self.rec.calibrate()
        def start():
            self.dbus.send(command + " 175")
        def stop(_):
            answer = self.dbus.answer()
            if not answer.startswith("ok"):
                raise RuntimeError(method + ": " + answer)
            self.add("%s round trip, %s (ms)" % (method, kind), int(answer.split()[1]) / 1000.0)
            self.lector_stop()
        return self.measure(start, timeout, stop)

    def fs_lector_dbus_file(self, kind, timeout):
        return self.fs_lector_dbus(kind, timeout, "speakfile", "SpeakFile")

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

    def fs_spd_say_cold(self, kind, timeout):
        """spd-say when no speech-dispatcher runs, as after its idle timeout (5 s by default, speechd.conf
        Timeout): spd-say's library starts one (autospawn) before it can speak."""
        if kind == "1 MB":
            raise RuntimeError("spd-say cannot take a 1 MB text as its argument (MAX_ARG_STRLEN 128 KiB)")
        runtime = os.path.join(self.work, "spd-cold")  # its own XDG_RUNTIME_DIR: socket and pid file
        os.makedirs(runtime, mode=0o700, exist_ok=True)
        env = dict(self.env)
        env.pop("SPEECHD_ADDRESS", None)
        env["XDG_RUNTIME_DIR"] = runtime
        argv = ["spd-say", "-l", "en", SENTENCE]
        self.cmdline("spd-say, server not running", ["env", "-u", "SPEECHD_ADDRESS"] + argv)
        pidfile = os.path.join(runtime, "speech-dispatcher", "pid", "speech-dispatcher.pid")
        def start():
            return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        def stop(p):
            p.wait(15)
            self.rec.wait_silence(0.3)
            try:
                with open(pidfile) as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                return
            for child in children(pid):
                os.kill(child, signal.SIGTERM)
            try:
                os.kill(pid, signal.SIGTERM)
                deadline = time.perf_counter() + 5
                while os.path.exists("/proc/%d" % pid) and time.perf_counter() < deadline:
                    time.sleep(0.02)
            except OSError:
                pass
        return self.measure(start, timeout, stop)

    def fs_ssip(self, kind, timeout, connection=None):
        ssip = connection or self.ssip
        text = self.big_text if kind == "1 MB" else SENTENCE
        ssip.cmd("SPEAK")
        body = "\r\n".join((".." + l if l.startswith(".") else l) for l in text.split("\n"))
        payload = body.encode() + b"\r\n.\r\n"
        self.rec.calibrate()
        def start():
            ssip.sock.sendall(payload)
        def stop(_):
            ssip.finish_speak()
            if kind == "1 MB":
                self.ssip_stop(ssip)
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
            (SD_LECTOR, lambda: self.ssip_lector.cmd("PAUSE self"), lambda: self.ssip_lector.cmd("RESUME self")),
        ]
        for name, pause, resume in variants:
            self.quiet()
            sd = name.startswith("speech")
            if sd:
                ssip = self.ssip_lector if name == SD_LECTOR else self.ssip
                ssip.send_speak(self.long_text)
                ssip.finish_speak()
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
                self.ssip_stop(ssip)
            else:
                self.lector_stop()
        log("pause/resume done")

    # -- exactness
    def restart_daemon(self):
        """A fresh daemon starts a fresh synthesis worker, whose first run is bit-identical to the reference."""
        self.lector_stop()
        self.daemon.terminate()
        try:
            self.daemon.wait(10)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()
        self.daemon_log.close()
        self.restarts = getattr(self, "restarts", 0) + 1  # keep each daemon's log
        os.replace(self.daemon_log.name, os.path.join(self.work, "daemon-%d.log" % self.restarts))
        self.start_daemon()

    def exactness(self):
        ref_wav = os.path.join(self.work, "ref.wav")
        argv = [self.o.lector, "read", "--output", ref_wav, "--lang", "en", "--rate", "175", "--file", self.para_file]
        self.cmdline("reference rendering", argv)
        subprocess.run(argv, check=True, env=self.env)
        with wave.open(ref_wav) as w:
            ref = array.array("h")
            ref.frombytes(w.readframes(w.getnframes()))
        renderer = Renderer(self.o.lector, PARA_VOICE, split_sentences(self.para))
        self.cmdline("exactness: worker", [self.o.lector, "worker"])
        n = len(renderer.sentences)
        fresh = renderer.render(tuple(range(n)))
        if fresh.pcm != ref:
            self.notes.append("exactness: the bench's own worker rendering (%d sentences, voice %s) differs from "
                              "the reference; nothing measured" % (n, PARA_VOICE))
            return
        self.extra["exact"] = {"trials": 0, "exact": 0}
        for trial in range(max(1, min(self.runs, 5))):
            # pause/resume, mid-word, on a fresh daemon
            self.restart_daemon()
            self.dbus.cmd("load " + self.para_file)
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
            r, detail = exact_splice(fresh, rec, (pmark + rmark) // 2 - mark0)
            self.exact_result("pause/resume", trial, r, detail)
            self.add("exactness: pause/resume, lost(+)/repeated(-)", r)
            # seeks (absolute, MPRIS SetPosition) while reading: forward, and back into heard audio
            for label, at, target_us in (("seek forward 1 s -> 4 s", 1.0, 4000000 + 313000 * trial),
                                         ("seek back 3 s -> 1 s", 3.0, 1000000 + 313000 * trial)):
                self.restart_daemon()
                self.dbus.cmd("load " + self.para_file)
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
                r, detail = exact_seek(renderer, fresh, rec, target_us * RATE // 1000000)
                self.exact_result(label, trial, r, detail)
                self.add("exactness: %s, lost(+)/repeated(-)" % label, r)
        e = self.extra["exact"]
        self.notes.append("exactness: %d of %d trials located bit for bit (the others count under \"no result\")"
                          % (e["exact"], e["trials"]))
        log("exactness done")

    def exact_result(self, label, trial, r, detail):
        self.extra["exact"]["trials"] += 1
        if r is not None:
            self.extra["exact"]["exact"] += 1
        self.notes.append("exactness: %s trial %d: %s: %s" % (label, trial, "n/a" if r is None else "%+.2f ms" % r, detail))

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

    def idle_floor(self):
        """What the fresh daemon's resident memory is made of: PSS and private memory (smaps_rollup), and the
        RSS of bench/idle-floor, a C program that only loads the shared libraries the daemon maps."""
        dpid = self.daemon.pid
        rollup = {}
        with open("/proc/%d/smaps_rollup" % dpid) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == "kB":
                    rollup[parts[0].rstrip(":")] = int(parts[1]) / 1024.0
        exe = os.path.realpath("/proc/%d/exe" % dpid)
        libs = []
        with open("/proc/%d/maps" % dpid) as f:
            for line in f:
                parts = line.split()
                path = parts[5] if len(parts) >= 6 else ""
                if ".so" in os.path.basename(path) and path != exe and "ld-linux" not in path and path not in libs:
                    libs.append(path)
        p = subprocess.Popen([self.o.idle_floor] + libs, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        p.stdout.readline()
        time.sleep(0.5)
        floor = proc_status(p.pid, "VmRSS")
        p.terminate()
        p.wait()
        self.extra["idle_parts"] = dict(pss=rollup.get("Pss"), private=rollup.get("Anonymous"),
                                        floor=floor, libs=len(libs))
        log("idle: daemon RSS %.1f MB, PSS %.1f MB; its %d shared libraries alone: %.1f MB" % (
            self.extra["idle_fresh"], rollup.get("Pss", 0), len(libs), floor or 0))

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
            self.idle_floor()
            self.start_speechd()
            # warm up both: the first reading loads the voice data and starts the worker / the module. Lector's
            # is timed too (one run): it lists the voices and opens eSpeak NG, ICU and CLD2 in the daemon, and
            # starts the worker, which loads the voice.
            for name, warm in (("Lector D-Bus Speak", lambda: self.dbus.cmd("load " + self.sentence_file) and self.dbus.cmd("speak 175")),
                               (None, lambda: (self.ssip.send_speak(SENTENCE), self.ssip.finish_speak()))):
                mark = self.rec.mark()
                warm()
                value = self.rec.first_sound(mark, 10)
                if name:
                    self.add("first sound, sentence: %s, first request after the daemon started" % name, ms(value))
                self.rec.wait_silence(0.3, 20)
            log("servers warm")
            only = os.environ.get("LECTOR_BENCH_ONLY", "").split(",")  # for working on the bench itself
            # memory first: the daemon is fresh, so growth over the 1 MB text is not hidden by earlier readings
            for part in ("memory", "first_sound", "documents", "pause_resume", "exactness", "control", "cost"):
                if only == [""] or part in only:
                    getattr(self, part)()
                if part == "first_sound":
                    self.extra["idle_used"] = proc_status(self.daemon.pid, "VmRSS")
        finally:
            self.stop_all()
            self.rec.stop()
        report(self)


# ---- Exactness analysis ----------------------------------------------------------------------------------

PARA_VOICE = "gmw/en"  # the voice `--lang en` selects; the bench's rendering is checked against the reference


def split_sentences(text):
    """The sample paragraph's sentences as Lector cuts them (checked: rendered one by one they give the
    reference bit for bit)."""
    out, start = [], 0
    for i, c in enumerate(text):
        if c in ".!?" and (i + 1 == len(text) or text[i + 1] == " "):
            out.append(text[start:i + 1].strip())
            start = i + 1
    if text[start:].strip():
        out.append(text[start:].strip())
    return out


class WorkerClient:
    """`lector worker` driven over its pipe protocol (Synthesis/WorkerProtocol.swift): a fresh eSpeak NG per
    instance, so that a sequence of sentences is synthesized with exactly the history the daemon's worker had."""

    def __init__(self, lector):
        self.proc = subprocess.Popen([lector, "worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if self.frame()[0] != 0x81:
            raise RuntimeError("lector worker: no ready frame")

    def frame(self):
        head = self.proc.stdout.read(5)
        if len(head) < 5:
            raise RuntimeError("lector worker exited")
        kind, n = struct.unpack("<BI", head)
        return kind, self.proc.stdout.read(n)

    def send(self, kind, payload):
        self.proc.stdin.write(struct.pack("<BI", kind, len(payload)) + payload)
        self.proc.stdin.flush()

    @staticmethod
    def string(s):
        b = s.encode()
        return struct.pack("<I", len(b)) + b

    def synthesize(self, tag, text, voice, rate=175, pitch=50):
        """(PCM, word starts in samples from the start of this sentence's audio)."""
        self.send(0x01, self.string(voice) + struct.pack("<qq", rate, pitch))
        self.send(0x02, struct.pack("<I", tag) + self.string(text))
        pcm, words = array.array("h"), []
        while True:
            kind, payload = self.frame()
            if struct.unpack_from("<I", payload)[0] != tag:
                continue
            if kind == 0x82:
                pcm.frombytes(payload[4:])
            elif kind == 0x83:
                words.append(struct.unpack_from("<qqq", payload, 4)[2])
            elif kind == 0x84:
                return pcm, words
            elif kind == 0x85:
                raise RuntimeError("lector worker: " + payload[8:].decode(errors="replace"))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(5)


class Rendering:
    """Sentences synthesized in `order` by one fresh worker: the PCM in that order, where each entry starts, and
    each entry's word starts (samples from the entry's start)."""

    def __init__(self, order, parts):
        self.order = order
        self.pcm = array.array("h")
        self.starts, self.words = [], []
        for pcm, words in parts:
            self.starts.append(len(self.pcm))
            self.pcm.extend(pcm)
            self.words.append(words)
        self.bytes = self.pcm.tobytes()

    def find(self, needle, lo=0, hi=None):
        """The first index j >= lo (needle starting before hi) with pcm[j:j+len] == needle, or None."""
        nb = needle.tobytes()
        end = None if hi is None else min(len(self.bytes), 2 * hi + len(nb))
        j = self.bytes.find(nb, 2 * max(0, lo), end)
        while j != -1 and j % 2:
            j = self.bytes.find(nb, j + 1, end)
        return None if j == -1 else j // 2


class Renderer:
    def __init__(self, lector, voice, sentences):
        self.lector, self.voice, self.sentences = lector, voice, sentences
        self.cache = {}

    def render(self, order):
        if order not in self.cache:
            w = WorkerClient(self.lector)
            try:
                self.cache[order] = Rendering(order, [w.synthesize(i + 1, self.sentences[s], self.voice)
                                                      for i, s in enumerate(order)])
            finally:
                w.close()
        return self.cache[order]


SNIPPET = 256  # samples compared exactly to locate a stretch of the recording (11.6 ms)


def locate(rendering, rec, at, lo=0, hi=None, tries=8):
    """(rec index i, rendering index j) with rec[i:i+SNIPPET] == pcm[j:j+SNIPPET] at one j only in [lo, hi),
    trying audible snippets from `at` on, or None."""
    i = first_audible(rec, at)
    for _ in range(tries):
        if i is None or i + SNIPPET > len(rec):
            return None
        j = rendering.find(rec[i:i + SNIPPET], lo, hi)
        if j is not None and rendering.find(rec[i:i + SNIPPET], j + 1, hi) is None:  # only where unique
            return i, j
        i = first_audible(rec, i + SNIPPET)
    return None


def match_forward(rec, i, pcm, j):
    """The first k >= 0 where rec[i+k] != pcm[j+k] (or either ends)."""
    k = 0
    while i + k < len(rec) and j + k < len(pcm) and rec[i + k] == pcm[j + k]:
        k += 1
    return k


def match_back(rec, i, pcm, j, floor):
    """The smallest i' >= floor such that rec[i':i] == pcm[j-(i-i'):j]."""
    while i > floor and j > 0 and rec[i - 1] == pcm[j - 1]:
        i -= 1
        j -= 1
    return i


def audible_between(ref, a, b):
    return any(abs(x) >= QUIET for x in ref[max(0, a):max(0, b)])


def signed_gap(ref, heard_until, heard_from):
    """ms of reference lost (+: heard_from after heard_until) or repeated (-), 0 when that stretch is silent."""
    if heard_from > heard_until:
        return ms(heard_from - heard_until) if audible_between(ref, heard_until, heard_from) else 0.0
    if heard_from < heard_until:
        return -ms(heard_until - heard_from) if audible_between(ref, heard_from, heard_until) else 0.0
    return 0.0


def exact_splice(fresh, rec, mid):
    """(ms lost (+) / repeated (-), detail) across a pause/resume, `mid` a recording index inside the pause.
    The reading before the pause is located in the reference by exact sample match and followed sample by sample
    to where it stops matching (the pause); the reading after it is located likewise and followed back to where
    it starts matching. A cork/uncork keeps one run, so both stretches are the reference's own samples."""
    first = locate(fresh, rec, 0)
    if first is None:
        return None, "the start of the reading is not in the reference"
    i0, j0 = first
    cut = i0 + match_forward(rec, i0, fresh.pcm, j0)
    heard_until = cut - i0 + j0
    second = locate(fresh, rec, max(cut, mid), lo=heard_until - RATE, hi=heard_until + RATE)
    if second is None:
        return None, "the audio after the resume is not in the reference within 1 s of the pause"
    i1, j1 = second
    start = match_back(rec, i1, fresh.pcm, j1, cut)
    heard_from = start - i1 + j1
    return signed_gap(fresh.pcm, heard_until, heard_from), (
        "%d samples bit-identical up to reference sample %d, then from reference sample %d on"
        % (cut - i0, heard_until, heard_from))


def exact_seek(renderer, fresh, rec, target):
    """(ms lost (+) / repeated (-), detail) at a seek to reference sample `target`.
    The old run is located in the reference and followed to where it stops. The new run re-synthesizes the
    target's sentence with the worker's history (the sentences the old run asked for, then the new run's), so
    its samples are not the reference's: the bench renders that history with a fresh worker of its own for each
    possible last sentence the old run asked for, and takes the one that holds the new audio bit for bit. Where
    the new audio starts is then exact in that rendering; it is compared with where it should start there: the
    word holding the target, by as much as the target lies into that word in the reference (at most to the next
    word's start), since timing within a sentence differs from one synthesis to the next by tens of ms."""
    n = len(renderer.sentences)
    first = locate(fresh, rec, 0)
    if first is None:
        return None, "the start of the reading is not in the reference"
    i0, j0 = first
    cut = i0 + match_forward(rec, i0, fresh.pcm, j0)
    k = max(s for s in range(n) if fresh.starts[s] <= target)
    into = target - fresh.starts[k]
    found = None
    for last in range(n):
        rendering = renderer.render(tuple(range(last + 1)) + tuple(range(k, min(n, k + 3))))
        base = rendering.starts[last + 1]
        hit = locate(rendering, rec, cut, lo=base)
        if hit is not None:
            found = rendering, base, last, hit
            break
    if found is None:
        return None, "the audio after the seek matches no rendering of sentence %d" % (k + 1)
    rendering, base, last, (i1, j1) = found
    start = match_back(rec, i1, rendering.pcm, j1, cut)
    got = start - i1 + j1 - base  # samples into the re-synthesized sentence where the new audio starts
    old, new = fresh.words[k], rendering.words[last + 1]
    sentence_end = rendering.starts[last + 2] - base if last + 2 < len(rendering.starts) else len(rendering.pcm) - base
    if len(old) != len(new):
        due = into
    else:
        w = max([-1] + [x for x in range(len(old)) if old[x] <= into])
        anchor_old, anchor_new = (0, 0) if w < 0 else (old[w], new[w])
        bound = new[w + 1] if w + 1 < len(new) else sentence_end
        due = min(anchor_new + into - anchor_old, bound)
    r = signed_gap(rendering.pcm, base + due, base + got)
    return r, ("sentence %d, target %d samples into it; new audio from sample %d of its re-synthesis (history: "
               "sentences 1-%d), due at %d" % (k + 1, into, got, last + 1, due))


# ---- Report ----------------------------------------------------------------------------------------------

def stats(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return min(vals), statistics.median(vals), max(vals), len(vals), len(values) - len(vals)


def ratio_interval(a, c, resamples=2000, seed=1):
    """The 95 % bootstrap interval of median(a) / median(c) (each sample resampled with replacement,
    `resamples` times, seeded): how far the ratio of two medians of this run could move by chance alone.
    None with fewer than 5 results in either sample."""
    a = [v for v in a or [] if v is not None]
    c = [v for v in c or [] if v is not None]
    if len(a) < 5 or len(c) < 5:
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        m = statistics.median(rng.choices(c, k=len(c)))
        if m > 0:
            ratios.append(statistics.median(rng.choices(a, k=len(a))) / m)
    if len(ratios) < resamples // 2:
        return None
    ratios.sort()
    return ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


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
    spd_cold = med("first sound, sentence: spd-say, server not running")
    l_big = med("first sound, 1 MB: Lector D-Bus Speak")
    l_file = med("first sound, sentence: Lector D-Bus SpeakFile")
    l_big_file = med("first sound, 1 MB: Lector D-Bus SpeakFile")
    bare = med("D-Bus round trip of the 1 MB text to a method that does not exist (ms)")
    l_big_read = med("first sound, 1 MB: lector read")
    l_detected = med("first sound, sentence: lector read, language detected")
    l_big_detected = med("first sound, 1 MB: lector read, language detected")
    p_dbus = med("pause to silence: Lector MPRIS D-Bus")
    r_dbus = med("resume to sound: Lector MPRIS D-Bus")
    p_sd = med("pause to silence: speech-dispatcher SSIP")
    r_sd = med("resume to sound: speech-dispatcher SSIP")
    p_sdl = med("pause to silence: " + SD_LECTOR)
    r_sdl = med("resume to sound: " + SD_LECTOR)
    f_sd = med("first sound, sentence: speech-dispatcher SSIP")
    f_sdl = med("first sound, sentence: " + SD_LECTOR)
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

    def iv(a, c):
        """The 95 % interval of the ratio of the first-sound medians of tools `a` and `c` ("kind: tool")."""
        return ratio_interval(b.results.get("first sound, " + a), b.results.get("first sound, " + c))

    rows = [
        ("First sound, one sentence: `lector read` / floor", ratio(l_read, floor), "≤ 2", verdict(le(l_read, floor, 2)),
         iv("sentence: lector read", "sentence: floor (pacat 5 ms)")),
        ("First sound, one sentence: `lector read` / `espeak-ng` CLI", ratio(l_read, espeak), "< 1",
         verdict(None if l_read is None or espeak is None else l_read < espeak),
         iv("sentence: lector read", "sentence: espeak-ng CLI")),
        ("First sound, one sentence: `lector read` / `spd-say` (speech-dispatcher not running, as after its 5 s idle timeout)",
         ratio(l_read, spd_cold), "≤ 0.1", verdict(le(l_read, spd_cold, 0.1))),
        ("First sound, one sentence: `lector read` / `spd-say` (speech-dispatcher running)", ratio(l_read, spd), "≤ 0.1 (same target)", verdict(le(l_read, spd, 0.1))),
        ("First sound, one sentence: D-Bus Speak / floor", ratio(l_dbus, floor), "≤ 1.5", verdict(le(l_dbus, floor, 1.5)),
         iv("sentence: Lector D-Bus Speak", "sentence: floor (pacat 5 ms)")),
        ("First sound, 1 MB / one sentence (D-Bus Speak; carrying 1 MB over the bus alone takes %s ms, %s × the "
         "one-sentence figure)" % (fmt(bare), fmt(ratio(bare, l_dbus), 2)),
         ratio(l_big, l_dbus), "≤ 1.1", verdict(le(l_big, l_dbus, 1.1)), iv("1 MB: Lector D-Bus Speak", "sentence: Lector D-Bus Speak")),
        ("First sound, 1 MB / one sentence (D-Bus SpeakFile: the daemon reads the file)", ratio(l_big_file, l_file),
         "≤ 1.1 (same target)", verdict(le(l_big_file, l_file, 1.1)), iv("1 MB: Lector D-Bus SpeakFile", "sentence: Lector D-Bus SpeakFile")),
        ("First sound, 1 MB / one sentence (`lector read`)", ratio(l_big_read, l_read), "≤ 1.1 (same target)",
         verdict(le(l_big_read, l_read, 1.1)), iv("1 MB: lector read", "sentence: lector read")),
        ("First sound, 1 MB / one sentence (`lector read` with no `--lang`: the daemon detects the language)",
         ratio(l_big_detected, l_detected), "≤ 1.1 (same target)", verdict(le(l_big_detected, l_detected, 1.1)),
         iv("1 MB: lector read, language detected", "sentence: lector read, language detected")),
        ("Pause to silence over D-Bus, ms (Lector / speech-dispatcher %s ms)" % fmt(p_sd), p_dbus, "≤ 10 ms",
         verdict(le(p_dbus, 10))),
        ("Resume to sound over D-Bus, ms (Lector / speech-dispatcher %s ms)" % fmt(r_sd), r_dbus, "≤ 10 ms",
         verdict(le(r_dbus, 10))),
        ("Through speech-dispatcher (SSIP), first sound of one sentence: Lector's module / its eSpeak NG module "
         "(%s ms / %s ms)" % (fmt(f_sdl), fmt(f_sd)), ratio(f_sdl, f_sd), "figure", verdict(None),
         iv("sentence: " + SD_LECTOR, "sentence: speech-dispatcher SSIP")),
        ("Through speech-dispatcher (SSIP), pause to silence, ms: Lector's module (its eSpeak NG module: %s ms)"
         % fmt(p_sd), p_sdl, "figure", verdict(None)),
        ("Through speech-dispatcher (SSIP), resume to sound, ms: Lector's module (its eSpeak NG module: %s ms)"
         % fmt(r_sd), r_sdl, "figure", verdict(None)),
        ("Audio lost across pause/resume, ms (max)", None if ex_p is None else max(0, ex_p[2]), "0 ms",
         verdict(None if ex_p is None else ex_p[2] <= 0)),
        ("Audio repeated across pause/resume, ms (max)", None if ex_p is None else max(0, -ex_p[0]), "≤ one word (~300 ms)",
         verdict(None if ex_p is None else -ex_p[0] <= 300)),
        ("Audio lost (+) / repeated (-) at a seek back into heard audio, ms (worst)",
         None if ex_s is None else (ex_s[2] if abs(ex_s[2]) >= abs(ex_s[0]) else ex_s[0]), "0 lost, ≤ one word repeated",
         verdict(None if ex_s is None else (ex_s[2] <= 0 and -ex_s[0] <= 300))),
        ("Audio lost (+) / repeated (-) at a seek forward (1 s → 4 s and later), ms (worst)",
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
             "client) and CPU/memory (/proc, rusage).\n" % (b.runs, " (smoke mode: one iteration, small texts)" if o.smoke
                                                  else ", first sound %d" % b.first_sound_runs))
    if o.note:
        L.append("**Conditions:** %s\n" % o.note)
    L.append("## Targets (ratios of medians from this run)\n")
    L.append("[low, high] after a first-sound ratio: its 95 % bootstrap interval (each of the two samples resampled "
             "2,000 times), how far the ratio of this run's medians could move by chance alone. The verdict is the "
             "median ratio's.\n")
    L.append("| Target | Measured | Goal | Verdict |")
    L.append("|---|---|---|---|")
    for row in rows:
        name, value, goal, v = row[:4]
        interval = row[4] if len(row) > 4 else None
        shown = fmt(value, 2) + ("" if interval is None else " [%.2f, %.2f]" % interval)
        L.append("| %s | %s | %s | %s |" % (name, shown, goal, v))
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
        L.append("Daemon RSS: fresh idle %s MB, idle after the first-sound runs (which read the %s text %d times) %s MB, idle before this text %s MB; "
                 "while reading: first %s MB, max %s MB, last %s MB. Worker RSS: min %s MB, max %s MB.\n" % (
                     fmt(b.extra.get("idle_fresh")), "64 KB" if o.smoke else "1 MB", b.extra.get("big_reads", 0), fmt(b.extra.get("idle_used")), fmt(mem["idle"]),
                     fmt(s[0][1] if s else None), fmt(mem_max), fmt(s[-1][1] if s else None),
                     fmt(min(worker_mem) if worker_mem else None), fmt(max(worker_mem) if worker_mem else None)))
        L.append("Daemon RSS after each of %d more `Speak` calls of the same text (each replacing the last, "
                 "then Stop), MB: %s.\n" % (len(mem["again"]), ", ".join(fmt(x) for x in mem["again"])))
        L.append("Samples (s: daemon MB / worker MB): " + ", ".join("%.0f: %.1f/%.1f" % x for x in s[::max(1, len(s) // 12)]) + "\n")
    parts = b.extra.get("idle_parts")
    if parts:
        own = None if parts["floor"] is None or b.extra.get("idle_fresh") is None else b.extra["idle_fresh"] - parts["floor"]
        L.append("What the fresh idle daemon's %s MB RSS is made of: `bench/idle-floor`, a C program that only loads the "
                 "%d shared libraries the daemon maps (dlopen, RTLD_NOW), is resident for %s MB, which any program "
                 "linking them pays and which every process using them shares; the rest, %s MB, is lector-daemon's "
                 "own code (with the Swift runtime, linked in) and data. The daemon's PSS (shared pages divided among "
                 "the processes mapping them) is %s MB; its anonymous memory (heap, stacks) %s MB.\n" % (
                     fmt(b.extra.get("idle_fresh")), parts["libs"], fmt(parts["floor"]), fmt(own),
                     fmt(parts["pss"]), fmt(parts["private"])))
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
  (`bench/dbus-client`, a small C program over GIO, so no process start is counted); *Lector D-Bus
  SpeakFile* is one `SpeakFile` call on the same connection, sending the text file's descriptor (opened in the
  call's timing) instead of the text, which is what `lector read --file` and `lector read < FILE` do; the
  *D-Bus round trip of the 1 MB text to a method that does not exist* is the same connection sending the 1 MB
  text to `org.lector.Lector1.NoSuchMethod` and getting GDBus's UnknownMethod back: carrying the text there and
  back with no work done, the part of D-Bus Speak's figure that no daemon can remove; *speech-dispatcher SSIP*
  is one `SPEAK` on an open SSIP connection. The *floor* is already-synthesized PCM (the same sentence by
  eSpeak NG, leading silence cut) written by `pacat --latency-msec=5`, process start included. Between runs
  the previous speech is stopped and 300 ms of silence awaited. Each run measures the tools and both texts in a
  different (seeded, so repeatable) order, one sequence for the two texts, so that no tool always follows the
  same neighbour and a tool's sentence and 1 MB figures are taken among the same neighbours. The daemon and
  speech-dispatcher are warm, except for *spd-say, server not running*: no speech-dispatcher runs (as after
  its idle timeout, 5 s by default), so spd-say's library starts one (autospawn, its own `XDG_RUNTIME_DIR`),
  which is stopped after the run. Lector's daemon needs no idle timeout: it costs no CPU while idle
  (Tests/IntegrationTests/IdleCostTests).
  The 1 MB text starts with the same sentence. `spd-say` cannot take 1 MB as one argument (the kernel's
  128 KiB limit per argument), so for 1 MB speech-dispatcher is measured over SSIP only.
- **Pause to silence**: while reading a long text, at a loud moment (mid-word), the driver notes "now", sends
  the pause, and takes the start of the first silence after "now" that lasts 500 ms (waiting up to 8 s). **Resume to sound**: "now", resume,
  first audible sample. For Lector: MPRIS `Pause`/`Play` over the open bus connection, and `playerctl -p lector
  pause|play` (process start included); for speech-dispatcher: `PAUSE self`/`RESUME self` over SSIP.
- **Exactness**: `lector read --output` renders the sample paragraph uninterrupted (the reference). Before each
  trial the daemon is restarted, so its synthesis worker is fresh and its reading is the reference bit for bit
  (eSpeak NG keeps state from one synthesis to the next: the same sentence synthesized after other sentences
  differs in its samples and by tens of ms in its pauses). The daemon then reads the paragraph with a
  pause/resume (MPRIS, mid-word), or with a `SetPosition` to 4 s while at 1 s, or to 1 s while at 3 s.
  Stretches of the recording are located by exact match of 256 samples (the null sink passes the stream's
  samples unchanged) and followed sample by sample. Pause/resume: the reading before the pause matches the
  reference up to the sample where it stopped, the reading after the resume from the sample where it went on;
  the difference is the reference audio lost (+) or repeated (-). A seek re-synthesizes the target's sentence
  after whatever the old run had asked the worker for, so the bench drives `lector worker` itself (its pipe
  protocol) to render that history with a fresh worker, for each possible last sentence asked for, and keeps
  the rendering that holds the new audio bit for bit; the new audio's first sample is then exact in it and is
  compared with where it is due: the start of the word holding the target plus as much as the target lies
  into that word in the reference (at most up to the next word), word starts being the worker's word events.
  Stretches silent in the reference (|x| < 8) count as 0. A trial whose audio cannot be located bit for bit
  counts under "no result"; the notes give each trial's figure and the samples it rests on.
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
""" % (160 + 24 * len(rows), o.png, "smoke" if o.smoke else "%d runs, first sound %d" % (b.runs, b.first_sound_runs), len(rows), data, data)
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if r.returncode != 0:
        raise SystemExit("bench: gnuplot failed: " + r.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--first-sound-runs", type=int, default=0, help="runs of the first-sound measurements (default 3 × --runs)")
    p.add_argument("--root", required=True)
    p.add_argument("--lector", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--idle-floor", required=True)
    p.add_argument("--peak-rss", required=True)
    p.add_argument("--poppler-floor", default="", help="bench/poppler-floor, built by bench/run (optional)")
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
              and not k.startswith("exactness") and SD_LECTOR not in k]
    if silent:
        print("bench: Lector was not heard in: " + "; ".join(silent), file=sys.stderr)
        sys.exit(1)
    if not os.environ.get("LECTOR_BENCH_KEEP"):
        subprocess.run(["rm", "-rf", o.work])


if __name__ == "__main__":
    main()
