#!/usr/bin/python3
"""Drives Lector's reader window the way a person would, through AT-SPI (pyatspi) and the X server
(xdotool), for the end-to-end tests (Tests/IntegrationTests/WindowTests.swift). One step per call; each
prints one JSON object on standard output, and exits 1 with a message on standard error when the window
does not do what the step expects of it within its time.

Steps:
  names                      every button, slider, spin button and list has an accessible name
  open PATH                  opens a file through the window's file chooser (the Open button, a typed path)
  play                       presses the Play button
  follow SECONDS             samples the highlighted word (the text's caret) against the Word signals
                             heard, for SECONDS: {"samples": n, "off": [...], "words": n}
  click TEXT                 clicks the first occurrence of TEXT in the shown text: {"offset": n}
  focus TEXT                 gives the window the X input focus, then clicks TEXT (the text view takes the
                             keyboard focus, as a person's click gives it): {"offset": n}
  comfort FAMILY SIZE        chooses a font family and size in the Reading comfort panel
  text                       the text shown: {"text": ..., "caret": n}
  count                      the characters shown so far: {"count": n}
  key NAME                   presses a key (xdotool's names: space, Right)
  status                     the window's status line: {"status": ...}
  close                      presses the window's Close button
  rate WPM                   sets the speaking rate in its spin button
  paste TEXT                 puts TEXT on the clipboard and presses Ctrl+V in the window
  sleep LABEL                chooses LABEL ("In 15 minutes", "Off") in the sleep timer's panel
  chapters                   opens the chapter list: {"titles": [...]} (its buttons' labels, in order)
  chapter TITLE              chooses the chapter titled TITLE in the chapter list
  voice                      the labels the Voice list shows: {"labels": [...]}
  attributes OFFSET          the text attributes at character OFFSET of the text: {"attributes": [...]}
  sweep SECONDS              every AT-SPI text attribute query at every offset of the text, then for SECONDS
                             every query a screen reader makes at the caret (attributes, text at each
                             boundary, extents) as the reading moves it:
                             {"queries": n, "failed": [...], "caretRuns": [...], "offsets": n}
"""
import json, subprocess, sys, time
import pyatspi
from gi.repository import Gio, GLib

def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)

def until(timeout, probe, what):
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            fail("timed out after %ss waiting for %s" % (timeout, what))
        time.sleep(0.05)

def app():
    def find():
        for a in pyatspi.Registry.getDesktop(0):
            if a is not None and a.name == "lector-window":
                return a
    return until(20, find, "the window on the accessibility bus")

def find(node, pred):
    try:
        if pred(node):
            return node
        for child in node:
            if child is not None:
                hit = find(child, pred)
                if hit is not None:
                    return hit
    except Exception:
        pass
    return None

def find_all(node, pred, out):
    try:
        if pred(node):
            out.append(node)
        for child in node:
            if child is not None:
                find_all(child, pred, out)
    except Exception:
        pass
    return out

def named(root, role, name):
    return until(10, lambda: find(root, lambda n: n.getRoleName() == role and n.name == name),
                 "%s %r" % (role, name))

def press(node):
    action = node.queryAction()
    if action.nActions == 0:  # a menu button: its inner button takes the click
        for child in node:
            if child is not None and child.queryAction().nActions > 0:
                return press(child)
    for i in range(action.nActions):
        if action.getName(i) in ("click", "activate", "press"):
            action.doAction(i)
            return
    action.doAction(0)

def text_view():
    return named(app(), "text", "Text being read")

def xdotool(*args):
    subprocess.run(["xdotool"] + list(args), check=True)

def window_origin():
    """The screen position of the window's top left corner (X11 geometry of the toplevel)."""
    out = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^Lector$", "getwindowgeometry"],
                         capture_output=True, text=True, check=True).stdout
    pos = [l for l in out.splitlines() if "Position" in l][0].split()[1].split(",")
    return int(pos[0]), int(pos[1])

def step_names():
    root = app()
    roles = ("push button", "toggle button", "slider", "spin button", "combo box", "check box")
    # The parts GTK builds inside a drop-down list or a title bar are GTK's own, named by GTK.
    def own(n):
        parent = n.parent
        return parent is not None and parent.getRoleName() == "combo box"
    controls = [n for n in find_all(root, lambda n: n.getRoleName() in roles, []) if not own(n)]
    unnamed = [n.getRoleName() for n in controls if not n.name or n.name.startswith("Gtk")]
    return {"controls": sorted(n.name for n in controls), "unnamed": unnamed}

def step_open(path):
    root = app()
    press(named(root, "push button", "Open a file"))
    dialog = until(10, lambda: next((w for w in app() if w is not None and w.name == "Open a text to read"), None),
                   "the file chooser")
    time.sleep(0.5)
    xdotool("type", "--delay", "20", path)
    time.sleep(0.3)
    xdotool("key", "Return")
    until(10, lambda: not any(w is not None and w.name == "Open a text to read" for w in app()), "the chooser to close")
    return {}

def step_play():
    root = app()
    play = named(root, "push button", "Play")
    press(play)
    until(10, lambda: find(app(), lambda n: n.getRoleName() == "push button" and n.name == "Pause"), "the Pause button")
    return {}

def step_follow(seconds):
    """Samples the caret (the start of the highlighted word) every 50 ms against the Word signals heard."""
    bus = Gio.bus_get_sync(Gio.BusType.SESSION)
    words = []  # (time, start)
    def on_word(conn, sender, path, iface, member, params):
        words.append((time.monotonic(), params.unpack()[1]))
    bus.signal_subscribe("org.lector.Lector", "org.lector.Lector1", "Word", "/org/lector/Lector", None,
                         Gio.DBusSignalFlags.NONE, on_word)
    # Word signals go only to the clients that ask for them.
    bus.call_sync("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "WatchWords",
                  GLib.Variant("(b)", (True,)), None, Gio.DBusCallFlags.NONE, 5000, None)
    view = text_view().queryText()
    samples = []
    deadline = time.monotonic() + seconds
    context = GLib.MainContext.default()
    while time.monotonic() < deadline:
        while context.iteration(False):
            pass
        caret = view.caretOffset
        samples.append((time.monotonic(), caret))
        time.sleep(0.05)
    while context.iteration(False):
        pass
    # For each sample after the first word: how many words the highlight is from the word heard then.
    starts = [w for _, w in words]
    off = []
    for t, caret in samples:
        heard = [w for wt, w in words if wt <= t]
        if not heard or caret not in starts:
            if heard:
                off.append(99)
            continue
        off.append(abs(starts.index(caret) - (len(heard) - 1)))
    return {"samples": len(samples), "words": len(words), "off": off}

def step_click(needle):
    view = text_view()
    text = view.queryText()
    content = text.getText(0, -1)
    offset = content.find(needle)
    if offset < 0:
        fail("%r is not in the text shown" % needle)
    x, y, w, h = text.getCharacterExtents(offset + 1, pyatspi.WINDOW_COORDS)
    ox, oy = window_origin()
    xdotool("mousemove", str(ox + x + w // 2), str(oy + y + h // 2), "click", "1")
    return {"offset": offset}

def step_focus(needle):
    wid = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^Lector$"],
                         capture_output=True, text=True, check=True).stdout.split()[0]
    xdotool("windowfocus", "--sync", wid)
    return step_click(needle)

def step_comfort(family, size):
    root = app()
    press(named(root, "push button", "Reading comfort"))
    spin = named(app(), "spin button", "Size (points)")
    spin.queryValue().currentValue = float(size)
    font = named(app(), "combo box", "Font")
    press(font)
    # The list opens on the family chosen; the keyboard moves through it as a person would.
    time.sleep(0.5)
    families = ["Sans", "Serif", "Monospace", "OpenDyslexic"]
    for _ in range(families.index(family)):
        xdotool("key", "Down")
    xdotool("key", "Return")
    time.sleep(0.3)
    xdotool("key", "Escape")
    return {}

def step_voice():
    voice = named(app(), "combo box", "Voice")
    labels = find_all(voice, lambda n: n.getRoleName() == "label" and n.name, [])
    return {"labels": [n.name for n in labels]}

def step_key(name):
    """Presses a key in the window (focused first: Xvfb has no window manager to do it)."""
    wid = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "^Lector$"],
                         capture_output=True, text=True, check=True).stdout.split()[0]
    xdotool("windowfocus", "--sync", wid)
    xdotool("key", name)
    return {}

def step_status():
    # The status line is the label described as "Status"; its accessible name is its text.
    label = until(10, lambda: find(app(), lambda n: n.getRoleName() == "label" and n.description == "Status"),
                  "the status line")
    return {"status": label.name}

def step_count():
    return {"count": text_view().queryText().characterCount}

def step_rate(wpm):
    named(app(), "spin button", "Speaking rate, words per minute").queryValue().currentValue = float(wpm)
    return {}

def step_sleep(label):
    # Its name says when the timer pauses the reading ("Sleep timer: pauses at 10:45").
    press(until(10, lambda: find(app(), lambda n: n.getRoleName() == "push button" and (n.name or "").startswith("Sleep timer")),
                "the sleep timer button"))
    # A button with a text is named by its label (GTK makes the label its child).
    text = named(app(), "label", label)
    button = text.parent
    while button is not None and button.getRoleName() != "push button":
        button = button.parent
    press(button)
    xdotool("key", "Escape")
    return {}

def chapter_labels():
    menu = until(10, lambda: find(app(), lambda n: n.getRoleName() == "push button" and n.name == "Chapters"),
                 "the Chapters button")
    def listed():
        labels = find_all(menu, lambda n: n.getRoleName() == "label" and n.name, [])
        return labels if labels else None
    return menu, listed

def step_chapters():
    menu, listed = chapter_labels()
    until(10, lambda: menu.getState().contains(pyatspi.STATE_SENSITIVE), "the Chapters button to be sensitive")
    press(menu)
    titles = [n.name.strip() for n in until(10, listed, "the chapter list")]
    xdotool("key", "Escape")
    return {"titles": titles}

def step_chapter(title):
    menu, listed = chapter_labels()
    press(menu)
    label = until(10, lambda: next((n for n in (listed() or []) if n.name.strip() == title), None), "chapter %r" % title)
    button = label.parent
    while button is not None and button.getRoleName() != "push button":
        button = button.parent
    press(button)
    return {}

def step_attributes(offset):
    attributes, start, end = text_view().queryText().getAttributeRun(int(offset), False)
    return {"attributes": list(attributes), "start": start, "end": end}

def step_sweep(seconds):
    """What a screen reader asks of the text: AT-SPI's attribute queries over the whole text, then, while the
    reading moves the caret, the queries at the caret. Each failure is listed (the window gone ends the step)."""
    view = text_view().queryText()
    queries, failed = 0, []
    def ask(what, call):
        nonlocal queries
        queries += 1
        try:
            return call()
        except Exception as error:  # a dead window answers nothing: the rest would fail alike
            failed.append("%s: %s" % (what, error))
            if len(failed) > 20:
                fail("the window stopped answering: %s" % failed[:3])
    ask("default attributes", view.getDefaultAttributes)
    ask("default attribute set", view.getDefaultAttributeSet)
    count = view.characterCount
    for offset in range(count + 1):
        ask("attributes %d" % offset, lambda: view.getAttributes(offset))
        ask("run %d" % offset, lambda: view.getAttributeRun(offset, False))
        ask("run with defaults %d" % offset, lambda: view.getAttributeRun(offset, True))
        for name in ("bg-color", "fg-color", "underline", "weight"):
            ask("%s %d" % (name, offset), lambda: view.getAttributeValue(offset, name))
    boundaries = (pyatspi.TEXT_BOUNDARY_CHAR, pyatspi.TEXT_BOUNDARY_WORD_START, pyatspi.TEXT_BOUNDARY_WORD_END,
                  pyatspi.TEXT_BOUNDARY_SENTENCE_START, pyatspi.TEXT_BOUNDARY_SENTENCE_END,
                  pyatspi.TEXT_BOUNDARY_LINE_START, pyatspi.TEXT_BOUNDARY_LINE_END)
    runs = []
    deadline = time.monotonic() + float(seconds)
    while time.monotonic() < deadline:
        caret = ask("caret", lambda: view.caretOffset)
        if caret is None:
            continue
        run = ask("run at caret", lambda: view.getAttributeRun(caret, False))
        if run is not None and list(run[0]) not in runs:
            runs.append(list(run[0]))
        ask("attributes at caret", lambda: view.getAttributes(caret))
        for b in boundaries:
            ask("text at caret", lambda: view.getTextAtOffset(caret, b))
            ask("text before caret", lambda: view.getTextBeforeOffset(caret, b))
            ask("text after caret", lambda: view.getTextAfterOffset(caret, b))
        ask("extents at caret", lambda: view.getCharacterExtents(caret, pyatspi.WINDOW_COORDS))
        time.sleep(0.05)
    return {"queries": queries, "failed": failed, "caretRuns": runs, "offsets": count + 1}

def step_paste(text):
    """Puts TEXT on the clipboard (xclip owns it until the X server ends) and presses Ctrl+V in the window."""
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=text.encode(), check=True)
    return step_key("ctrl+v")

def step_close():
    press(named(app(), "push button", "Close"))
    return {}

def step_text():
    view = text_view().queryText()
    return {"text": view.getText(0, -1), "caret": view.caretOffset}

if __name__ == "__main__":
    step, args = sys.argv[1], sys.argv[2:]
    result = {"names": step_names, "open": step_open, "play": step_play, "follow": lambda s: step_follow(float(s)),
              "click": step_click, "focus": step_focus, "comfort": step_comfort, "text": step_text,
              "key": step_key, "status": step_status, "count": step_count, "close": step_close,
              "rate": step_rate, "sleep": step_sleep, "chapters": step_chapters, "chapter": step_chapter,
              "attributes": step_attributes, "sweep": step_sweep,
              "paste": step_paste, "voice": step_voice}[step](*args)
    print(json.dumps(result))
