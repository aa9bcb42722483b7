/// A key combination for `lector shortcut install KEY`, read in either spelling a desktop uses and written in
/// each one's: GTK's accelerator syntax for GNOME (`<Super><Alt>r`, `gtk_accelerator_parse`) and Qt's for
/// Plasma (`Meta+Alt+R`, `QKeySequence::toString` on Linux, and its key code for kglobalaccel's D-Bus calls).
///
/// Keys understood: the letters A–Z, the digits 0–9, F1–F35, and Space, Tab, Return, Escape, BackSpace,
/// Insert, Delete, Home, End, Page_Up, Page_Down, Left, Up, Right, Down, Print, Pause (in GTK's or Qt's
/// names, any letter case). Modifiers: Shift, Control (Ctrl, Primary), Alt (Mod1), Super (Meta, Win; Plasma's
/// Meta is the Super key).
struct ShortcutKey: Equatable {
    /// The modifier keys held, as a set.
    struct Modifiers: OptionSet, Hashable {
        let rawValue: Int
        static let shift = Modifiers(rawValue: 1)
        static let control = Modifiers(rawValue: 2)
        static let alt = Modifiers(rawValue: 4)
        static let meta = Modifiers(rawValue: 8)
    }

    /// The modifiers held with the key.
    var modifiers: Modifiers
    /// The key pressed with the modifiers.
    var key: Key

    /// The key pressed with the modifiers.
    enum Key: Equatable {
        /// A letter A–Z (stored upper case) or a digit 0–9.
        case character(Character)
        /// F1 to F35.
        case function(Int)
        /// One of `ShortcutKey.named`, by index.
        case named(Int)
    }

    /// Named keys: GTK's keysym name, Qt's name, Qt's key code (Qt::Key), and other spellings accepted.
    static let named: [(gtk: String, qt: String, code: Int32, aliases: [String])] = [
        ("space", "Space", 0x20, []), ("Tab", "Tab", 0x0100_0001, []),
        ("Return", "Return", 0x0100_0004, ["enter"]), ("Escape", "Esc", 0x0100_0000, ["escape"]),
        ("BackSpace", "Backspace", 0x0100_0003, []), ("Insert", "Ins", 0x0100_0006, ["insert"]),
        ("Delete", "Del", 0x0100_0007, ["delete"]), ("Home", "Home", 0x0100_0010, []),
        ("End", "End", 0x0100_0011, []), ("Page_Up", "PgUp", 0x0100_0016, ["pageup", "prior"]),
        ("Page_Down", "PgDown", 0x0100_0017, ["pagedown", "next"]), ("Left", "Left", 0x0100_0012, []),
        ("Up", "Up", 0x0100_0013, []), ("Right", "Right", 0x0100_0014, []), ("Down", "Down", 0x0100_0015, []),
        ("Print", "Print", 0x0100_0009, []), ("Pause", "Pause", 0x0100_0008, []),
    ]

    /// Qt's modifier bits (Qt::KeyboardModifier) for `qtKeyCode`.
    private static let qtModifiers: [(Modifiers, Int32, String)] = [
        (.meta, 0x1000_0000, "Meta"), (.control, 0x0400_0000, "Ctrl"), (.alt, 0x0800_0000, "Alt"),
        (.shift, 0x0200_0000, "Shift"),
    ]

    /// Reads `text` as a GTK accelerator (`<Super><Alt>r`) or a Qt key sequence (`Meta+Alt+R`); nil when it is
    /// neither, names an unknown key or modifier, or is more than one key.
    static func parse(_ text: String) -> ShortcutKey? {
        var modifiers: Modifiers = []
        var rest = Substring(text).drop { $0 == " " }
        while rest.last == " " { rest = rest.dropLast() }
        var words: [Substring]
        if rest.hasPrefix("<") {
            words = []
            while rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") {
                words.append(rest[rest.index(after: rest.startIndex)..<close])
                rest = rest[rest.index(after: close)...]
            }
            words.append(rest)
        } else {
            words = rest.split(separator: "+", omittingEmptySubsequences: false)
        }
        guard let last = words.popLast() else { return nil }
        for word in words {
            guard let modifier = modifier(word.lowercased()), !modifiers.contains(modifier) else { return nil }
            modifiers.insert(modifier)
        }
        guard let key = key(String(last)) else { return nil }
        return ShortcutKey(modifiers: modifiers, key: key)
    }

    private static func modifier(_ name: String) -> Modifiers? {
        switch name {
        case "shift": .shift
        case "control", "ctrl", "primary": .control
        case "alt", "mod1": .alt
        case "super", "meta", "win": .meta
        default: nil
        }
    }

    private static func key(_ name: String) -> Key? {
        let lower = name.lowercased()
        if name.count == 1, let c = name.first, c.isASCII, c.isLetter || c.isNumber {
            return .character(Character(c.uppercased()))
        }
        if lower.hasPrefix("f"), let n = Int(lower.dropFirst()), (1...35).contains(n), !lower.hasPrefix("f0") {
            return .function(n)
        }
        if let index = named.firstIndex(where: {
            $0.gtk.lowercased() == lower || $0.qt.lowercased() == lower || $0.aliases.contains(lower)
        }) {
            return .named(index)
        }
        return nil
    }

    /// Whether the key would take away a key people type (a letter, a digit, Space, Return…) unless Control,
    /// Alt or Super is held with it: function keys, Print and Pause stand alone.
    var needsModifier: Bool {
        if !modifiers.intersection([.control, .alt, .meta]).isEmpty { return false }
        switch key {
        case .function: return false
        case .named(let i): return !["Print", "Pause"].contains(Self.named[i].gtk)
        case .character: return true
        }
    }

    /// In GTK's accelerator syntax, modifiers in a fixed order: `<Shift><Control><Alt><Super>r`.
    var gtkAccelerator: String {
        var text = ""
        for (modifier, name) in [(Modifiers.shift, "Shift"), (.control, "Control"), (.alt, "Alt"), (.meta, "Super")]
        where modifiers.contains(modifier) {
            text += "<\(name)>"
        }
        switch key {
        case .character(let c): return text + c.lowercased()
        case .function(let n): return text + "F\(n)"
        case .named(let i): return text + Self.named[i].gtk
        }
    }

    /// As Plasma shows it and kglobalaccel writes it in kglobalshortcutsrc: `Meta+Ctrl+Alt+Shift+R`.
    var qtName: String {
        let prefix = Self.qtModifiers.filter { modifiers.contains($0.0) }.map { $0.2 + "+" }.joined()
        switch key {
        case .character(let c): return prefix + String(c)
        case .function(let n): return prefix + "F\(n)"
        case .named(let i): return prefix + Self.named[i].qt
        }
    }

    /// Qt's key code: the key (Qt::Key) ORed with the modifier bits, the one int of a QKeySequence that
    /// kglobalaccel's `setShortcutKeys` and `globalShortcutsByKey` take.
    var qtKeyCode: Int32 {
        let bits = Self.qtModifiers.filter { modifiers.contains($0.0) }.reduce(Int32(0)) { $0 | $1.1 }
        switch key {
        case .character(let c): return bits | Int32(c.asciiValue ?? 0)
        case .function(let n): return bits | (0x0100_0030 + Int32(n - 1))
        case .named(let i): return bits | Self.named[i].code
        }
    }
}
