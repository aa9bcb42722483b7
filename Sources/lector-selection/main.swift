@preconcurrency import Glibc
import SelectionCore
import WaylandSelection
import X11Selection

// `lector-selection primary|clipboard`: the selection's text on standard output (exit 0), or one line on
// standard error (exit 1; exit 3 when no native way reached the display, so that `lector` may try a clipboard
// tool). Run by `lector read --selection|--clipboard` only, so that `lector` itself links neither libxcb nor
// libwayland-client. Wayland (`WAYLAND_DISPLAY`) is asked first; when its compositor has no data-control
// protocol (GNOME's Mutter) or cannot be reached, X11 (`DISPLAY`, XWayland's on a Wayland desktop) is asked.
let arguments = CommandLine.arguments
guard arguments.count == 2, let kind = SelectionKind(rawValue: arguments[1]) else {
    fputs("usage: lector-selection primary|clipboard (run by lector read --selection|--clipboard)\n", stderr)
    exit(2)
}
func set(_ name: String) -> Bool { getenv(name).map { $0.pointee != 0 } ?? false }

var result: Result<String, SelectionFailure> = .failure(.cannotConnect("neither WAYLAND_DISPLAY nor DISPLAY is set"))
if set("WAYLAND_DISPLAY") { result = WaylandSelection.read(kind) }
if set("DISPLAY"), case .failure(let failure) = result, failure.triesAnotherWay {
    let x11 = X11Selection.read(kind)
    // Without an X server either, the Wayland line says more (what to do on GNOME).
    if case .failure(.cannotConnect) = x11, set("WAYLAND_DISPLAY") {} else { result = x11 }
}
switch result {
case .success(let text):
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + written, $0.count - written) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { exit(1) }
        written += n
    }
    exit(0)
case .failure(let failure):
    fputs(failure.line(for: kind) + "\n", stderr)
    exit(failure.exitStatus)
}
