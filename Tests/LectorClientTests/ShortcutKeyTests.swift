import Testing
@testable import LectorClient

@Suite struct ShortcutKeyTests {
    @Test("GTK's and Qt's spellings of one key read the same, and are written in each desktop's syntax")
    func spellings() throws {
        let gtk = try #require(ShortcutKey.parse("<Super><Alt>r"))
        let qt = try #require(ShortcutKey.parse("Meta+Alt+R"))
        #expect(gtk == qt)
        #expect(gtk.gtkAccelerator == "<Alt><Super>r")
        #expect(gtk.qtName == "Meta+Alt+R")
        // Qt::META | Qt::ALT | Qt::Key_R
        #expect(gtk.qtKeyCode == 0x1000_0000 | 0x0800_0000 | 0x52)
        #expect(ShortcutKey.parse("ctrl+alt+t") == ShortcutKey.parse("<Control><Alt>T"))
        #expect(ShortcutKey.parse("<Primary><Mod1>t") == ShortcutKey.parse("Ctrl+Alt+T"))
        #expect(ShortcutKey.parse("Win+R") == ShortcutKey.parse("<Super>r"))
    }

    @Test("Key codes as Qt defines them (Qt::Key, Qt::KeyboardModifier)", arguments: [
        ("Ctrl+Alt+R", Int32(0x0C00_0052), "Ctrl+Alt+R", "<Control><Alt>r"),
        ("<Shift><Super>F5", 0x1300_0034, "Meta+Shift+F5", "<Shift><Super>F5"),
        ("F12", 0x0100_003B, "F12", "F12"),
        ("Meta+Space", 0x1000_0020, "Meta+Space", "<Super>space"),
        ("<Control>Page_Down", 0x0500_0017, "Ctrl+PgDown", "<Control>Page_Down"),
        ("Meta+PgUp", 0x1100_0016, "Meta+PgUp", "<Super>Page_Up"),
        ("Print", 0x0100_0009, "Print", "Print"),
        ("Alt+7", 0x0800_0037, "Alt+7", "<Alt>7"),
        ("Meta+F35", 0x1100_0052, "Meta+F35", "<Super>F35"),
    ] as [(String, Int32, String, String)])
    func codes(text: String, code: Int32, qt: String, gtk: String) throws {
        let key = try #require(ShortcutKey.parse(text))
        #expect(key.qtKeyCode == code)
        #expect(key.qtName == qt)
        #expect(key.gtkAccelerator == gtk)
    }

    @Test("Not keys: unknown names and modifiers, empty parts, two keys, a modifier twice",
          arguments: ["", "Meta+", "+R", "Hyper+R", "<Hyper>r", "Meta+Alt+RR", "Meta+F36", "F0", "F05", "Ctrl+Ctrl+R",
                      "<Super><Super>r", "Meta+é", "<Super", "Meta+Alt+R+T", "XF86AudioPlay"])
    func notKeys(text: String) {
        #expect(ShortcutKey.parse(text) == nil)
    }

    @Test("A letter, digit or Space alone (or with Shift alone) would take a key people type; F-keys, Print do not")
    func needsModifier() throws {
        for text in ["r", "Shift+R", "space", "7", "Return"] {
            #expect(try #require(ShortcutKey.parse(text)).needsModifier, "\(text)")
        }
        for text in ["F9", "Print", "Pause", "Alt+R", "<Super>space", "Ctrl+Return"] {
            #expect(try !#require(ShortcutKey.parse(text)).needsModifier, "\(text)")
        }
    }

    @Test("The desktop comes from XDG_CURRENT_DESKTOP: Plasma when it names KDE, else GNOME")
    func desktop() {
        #expect(ShortcutCommand.Desktop.detect("KDE") == .plasma)
        #expect(ShortcutCommand.Desktop.detect("ubuntu:KDE") == .plasma)
        #expect(ShortcutCommand.Desktop.detect("kde") == .plasma)
        #expect(ShortcutCommand.Desktop.detect("ubuntu:GNOME") == .gnome)
        #expect(ShortcutCommand.Desktop.detect("KDEX") == .gnome)
        #expect(ShortcutCommand.Desktop.detect(nil) == .gnome)
    }

    @Test("The Exec argument is quoted as the Desktop Entry Specification says")
    func execQuoting() {
        #expect(PlasmaShortcut.desktopQuoted("/usr/bin/lector") == "/usr/bin/lector")
        #expect(PlasmaShortcut.desktopQuoted("/home/a b/lector") == "\"/home/a b/lector\"")
        #expect(PlasmaShortcut.desktopQuoted("/x/$HOME\"`\\/lector") == "\"/x/\\$HOME\\\"\\`\\\\/lector\"")
        #expect(PlasmaShortcut.desktopQuoted("/x/100%/lector") == "/x/100%%/lector")
    }
}
