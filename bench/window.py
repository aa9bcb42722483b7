#!/usr/bin/python3
"""How long the reader window takes to be on screen: from the start of `lector-window` to the first frame
of its window drawn on the X server (a private Xvfb), measured by watching the root window: MapNotify of a
new top-level window, then its pixels, read with XGetImage every millisecond, until the window's area is
no longer what was there before (the first frame drawn). Prints figures (median, min, max, in ms)
and writes them to --output; never fails on a timing.

    bench/window.py --bin BUILD_DIR [--runs 10] [--output FILE] [--note TEXT]

Run by bench/run under a private session bus (scripts/with-session). It starts its own Xvfb, then measures
"cold" (no daemon on the bus: the window starts one, and must not wait for it), then "warm" (a daemon
reading), and, for comparison, the same with GTK's accessibility bridge off (GTK_A11Y=none).
"""
import argparse, ctypes, ctypes.util, os, statistics, subprocess, sys, time

x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XDefaultRootWindow.restype = ctypes.c_ulong
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XSelectInput.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_long]
x11.XPending.argtypes = [ctypes.c_void_p]
x11.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
x11.XGetImage.restype = ctypes.c_void_p
x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                          ctypes.c_ulong, ctypes.c_int]
x11.XGetPixel.restype = ctypes.c_ulong
x11.XGetPixel.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
x11.XDestroyImage = None  # a macro; images are freed with XFree of the struct and data below
x11.XFree.argtypes = [ctypes.c_void_p]
x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]

SUBSTRUCTURE_NOTIFY = 1 << 19
MAP_NOTIFY = 19
Z_PIXMAP = 2
ALL_PLANES = 0xFFFFFFFF


class XMapEvent(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("event", ctypes.c_ulong), ("window", ctypes.c_ulong),
                ("override_redirect", ctypes.c_int)]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xmap", XMapEvent), ("pad", ctypes.c_long * 24)]


def sample(display, root, points):
    """The pixels of the root window at `points` (a list of (x, y))."""
    out = []
    for x, y in points:
        image = x11.XGetImage(display, root, x, y, 1, 1, ALL_PLANES, Z_PIXMAP)
        out.append(x11.XGetPixel(image, 0, 0) if image else None)
        if image:
            # XImage: data pointer at offset 16 (width, height, xoffset, format: 4 ints); free data, then image.
            data = ctypes.c_void_p.from_address(image + 16).value
            if data:
                x11.XFree(data)
            x11.XFree(image)
    return out


def once(window, env, display, root):
    # Points inside where the window's text and header appear (it opens at the top left of a bare Xvfb).
    points = [(60, 25), (300, 200), (450, 27), (200, 400)]
    before = sample(display, root, points)
    x11.XSync(display, 1)
    start = time.monotonic()
    process = subprocess.Popen([window], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mapped = drawn = None
    event = XEvent()
    deadline = start + 10
    while time.monotonic() < deadline and drawn is None:
        while x11.XPending(display):
            x11.XNextEvent(display, ctypes.byref(event))
            if event.type == MAP_NOTIFY and mapped is None and not event.xmap.override_redirect:
                mapped = time.monotonic()
        if mapped is not None and sample(display, root, points) != before:
            drawn = time.monotonic()
            break
        time.sleep(0.001)
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    time.sleep(0.3)  # the window gone, the root is black again
    if drawn is None:
        return None
    return (mapped - start) * 1000, (drawn - start) * 1000


def measure(window, display_name, runs, label, extra_env=None):
    env = dict(os.environ, DISPLAY=display_name, GDK_BACKEND="x11", GSK_RENDERER="cairo", **(extra_env or {}))
    display = x11.XOpenDisplay(display_name.encode())
    if not display:
        sys.exit("cannot open display " + display_name)
    root = x11.XDefaultRootWindow(display)
    x11.XSelectInput(display, root, SUBSTRUCTURE_NOTIFY)
    results = [r for r in (once(window, env, display, root) for _ in range(runs)) if r]
    if not results:
        return "| %s | never drawn | |" % label
    mapped = [m for m, _ in results]
    drawn = [d for _, d in results]
    return ("| %s | %d | %.0f | %.0f | %.0f | %.0f |"
            % (label, len(results), statistics.median(mapped), statistics.median(drawn), min(drawn), max(drawn)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the build folder holding lector and lector-window")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--output")
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    window = os.path.join(args.bin, "lector-window")
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        display = ":" + xvfb.stdout.readline().decode().strip()
        rows = [measure(window, display, args.runs, "cold: no daemon yet")]
        subprocess.run([os.path.join(args.bin, "lector"), "read", "--lang", "en",
                        "A daemon reading while the window starts."], check=False)
        rows.append(measure(window, display, args.runs, "warm: a daemon reading"))
        rows.append(measure(window, display, args.runs, "warm, accessibility bridge off (GTK_A11Y=none)",
                            {"GTK_A11Y": "none"}))
        subprocess.run([os.path.join(args.bin, "lector"), "stop"], check=False)
    finally:
        xvfb.terminate()
        xvfb.wait()
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    text = ("## The reader window: time to be on screen\n\n"
            "From the start of `lector-window` to its window mapped and its first frame drawn on Xvfb (1280×800, "
            "X11, cairo renderer), in ms; load average %s at the end%s.\n\n"
            "| case | runs | mapped (median) | first frame (median) | min | max |\n|---|---|---|---|---|---|\n"
            % (load, "; " + args.note if args.note else "")) + "\n".join(rows) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
