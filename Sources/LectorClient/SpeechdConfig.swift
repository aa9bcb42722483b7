/// Edits the user's Speech Dispatcher configuration (`$XDG_CONFIG_HOME/speech-dispatcher/speechd.conf`,
/// speech-dispatcher 0.11's dotconf syntax) to make Lector its default output module, and back. Pure: text in,
/// text out.
///
/// `enable` adds one block between marker comments: the Lector module and speech-dispatcher's own eSpeak NG
/// module (AddModule), Lector as DefaultModule, and a client section that keeps Orca on eSpeak NG (a screen
/// reader's speech is not media: it must not be paused by a media key or ducked). The user's own AddModule
/// lines stay (their modules stay loaded); their DefaultModule lines are commented out with a marker. When
/// there was no file, the block starts by including the system configuration, which speech-dispatcher
/// otherwise reads only when the user has none. `disable` removes the block and the markers, giving back the
/// text exactly as it was (no file when there was none).
public enum SpeechdConfig {
    static let begin = "# >>> lector: added by `lector speechd enable`; `lector speechd disable` removes it"
    static let end = "# <<< lector"
    static let disabled = "#lector-disabled# "
    static let created = "# (lector: there was no speechd.conf)"

    /// The configuration with Lector as the default module. `current` is the file's text (nil when there is
    /// none), `module` the absolute path of `sd_lector`, `system` the system configuration to include when
    /// the file is new. Enabling twice gives the same text.
    public static func enable(_ current: String?, module: String, system: String?) -> String {
        let text = current.map(disable) ?? nil
        var lines: [String] = []
        for line in (text ?? "").split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let word = line.drop { $0 == " " || $0 == "\t" }.prefix { !$0.isWhitespace }
            lines.append(word == "DefaultModule" ? disabled + line : line)
        }
        if lines.last == "" { lines.removeLast() }
        var block = [begin]
        if text == nil {
            block.append(created)
            if let system { block.append("Include \"\(system)\"") }
        }
        block += [
            "AddModule \"lector\" \"\(module)\" \"lector.conf\"",
            "AddModule \"espeak-ng\" \"sd_espeak-ng\" \"espeak-ng.conf\"",
            "DefaultModule lector",
            "# Orca keeps its own module: a screen reader's speech is not paused by media keys nor ducked.",
            "BeginClient \"*:orca:*\"",
            "DefaultModule espeak-ng",
            "EndClient",
            end,
        ]
        return (lines + block).joined(separator: "\n") + "\n"
    }

    /// The configuration without what `enable` added: nil when `enable` created the file (remove it).
    public static func disable(_ current: String) -> String? {
        var lines: [String] = []
        var inBlock = false, created = false
        for line in current.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == begin { inBlock = true; continue }
            if inBlock {
                if line == self.created { created = true }
                if line == end { inBlock = false }
                continue
            }
            lines.append(line.hasPrefix(disabled) ? String(line.dropFirst(disabled.count)) : line)
        }
        if created && lines.allSatisfy(\.isEmpty) { return nil }
        return lines.joined(separator: "\n")
    }

    /// Whether `current` has Lector's block.
    public static func isEnabled(_ current: String?) -> Bool {
        current?.split(separator: "\n").contains { $0 == begin } ?? false
    }
}
