import LectorCommon

/// The speech parameters Speech Dispatcher sets with SET, and what Lector makes of them.
///
/// Scales are speech-dispatcher's (SSIP "Parameter Setting Commands"): rate, pitch and volume from -100 to
/// 100, 0 the default (volume's default is 100). Rate maps linearly onto Lector's words per minute on each
/// side of its default (-100 → 80, 0 → 175, 100 → 450), pitch onto eSpeak NG's 0-99 (0 → 50), and the
/// volume onto eSpeak NG's amplitude as speech-dispatcher's own eSpeak NG module sets it (`espeakVOLUME` =
/// volume + 100, where 100 is eSpeak NG's default): an SSML `<prosody volume>` of volume percent more or less
/// than the voice's own (100, speech-dispatcher's default, is "+100%", twice eSpeak NG's default amplitude),
/// so that both modules are as loud at the same setting. Punctuation is left to the server, which reads the
/// punctuation marks out itself (its `SymbolsPreproc`); spelling reads every character
/// (`<say-as interpret-as="characters">`). Voice types (MALE1, …), pitch range and capital letters
/// recognition are accepted and not used.
public struct VoiceSettings: Equatable, Sendable {
    /// -100...100.
    public var rate = 0
    /// -100...100.
    public var pitch = 0
    /// -100...100.
    public var volume = 100
    /// A BCP 47 tag (speech-dispatcher's `language`), nil for none.
    public var language: String?
    /// A voice name from LIST VOICES (`synthesis_voice`), nil for none.
    public var voice: String?
    /// `spelling_mode=on`.
    public var spelling = false
    /// `punctuation_mode`: none, some, most or all.
    public var punctuation = "none"

    /// The defaults: everything at 0, volume 100, no language or voice.
    public init() {}

    /// Takes the values of one SET; returns false when one of them is not understood (the others are kept).
    public mutating func apply(_ values: [String: String]) -> Bool {
        var ok = true
        for (key, raw) in values {
            let value: String? = raw == "NULL" ? nil : raw
            switch key {
            case "rate", "pitch", "volume":
                guard let value, let n = Int(value), (-100...100).contains(n) else { ok = false; continue }
                if key == "rate" { rate = n } else if key == "pitch" { pitch = n } else { volume = n }
            case "language": language = value.flatMap(Self.tag)
            case "synthesis_voice": voice = value
            case "spelling_mode": spelling = value == "on"
            case "punctuation_mode": punctuation = value ?? "none"
            case "voice", "pitch_range", "cap_let_recogn", "punctuation_some", "punctuation_most": continue
            default: continue
            }
        }
        return ok
    }

    /// The BCP 47 tag a `language` value names, nil for none: speech-dispatcher passes the locale's language,
    /// and POSIX's `C` and `POSIX` locales (with any `.codeset` or `@modifier`) name no language.
    static func tag(_ value: String) -> String? {
        let base = value.prefix { $0 != "." && $0 != "@" }
        let lower = base.lowercased()
        return base.isEmpty || lower == "c" || lower == "posix" ? nil : value
    }

    /// Lector's speaking rate in words per minute.
    public var wordsPerMinute: Int {
        let r = SpeakOptions.defaultRate
        let span = rate < 0 ? r - SpeakOptions.rates.lowerBound : SpeakOptions.rates.upperBound - r
        return r + rate * span / 100
    }

    /// Lector's base pitch, 0-99.
    public var basePitch: Int { min(99, (pitch + 100) * 50 / 100) }

    /// Speak's options for a message: SSML, the rate and pitch, and the voice when one is named, else the
    /// language (`withLanguage` false leaves both out, for a second try after Lector refused them).
    public func options(withLanguage: Bool = true) -> SpeakOptions {
        var options = SpeakOptions(rate: wordsPerMinute, pitch: basePitch)
        options.ssml = true
        if withLanguage {
            if let voice { options.voice = voice } else { options.language = language }
        }
        return options
    }

    /// The SSML document Lector reads for a message of `kind` (`data` as the server sent it: SSML for text).
    public func document(_ kind: MessageKind, _ data: String) -> String {
        switch kind {
        case .text: return wrapped(data)
        case .character:
            return wrapped("<speak><say-as interpret-as=\"characters\">" + SSML.escape(data) + "</say-as></speak>", spelled: true)
        case .key, .soundIcon:
            let words = data.map { $0 == "_" || $0 == "-" ? " " : String($0) }.joined()
            let inner = words.count == 1 ? "<say-as interpret-as=\"characters\">" + SSML.escape(words) + "</say-as>"
                : SSML.escape(words)
            return wrapped("<speak>" + inner + "</speak>")
        }
    }

    /// `document` with the volume and spelling applied inside its root element (no spelling when it is
    /// `spelled` already).
    private func wrapped(_ document: String, spelled: Bool = false) -> String {
        var open = "", close = ""
        if volume != 0 {
            open += "<prosody volume=\"\(volume > 0 ? "+" : "-")\(abs(volume))%\">"
            close = "</prosody>" + close
        }
        if spelling && !spelled {
            open += "<say-as interpret-as=\"characters\">"
            close = "</say-as>" + close
        }
        guard !open.isEmpty, let start = SSML.rootContentStart(document),
              let end = document.ranges(of: "</speak>").last?.lowerBound, start <= end
        else { return document }
        return String(document[..<start]) + open + String(document[start..<end]) + close + String(document[end...])
    }
}

/// The little of SSML the module needs to look at.
public enum SSML {
    /// `text` with `&`, `<`, `>` and `"` escaped.
    public static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// Where the content of the `<speak …>` element starts (after its start tag), nil when there is none.
    static func rootContentStart(_ document: String) -> String.Index? {
        guard let tag = document.firstRange(of: "<speak")?.lowerBound,
              let close = document[tag...].firstIndex(of: ">") else { return nil }
        return document.index(after: close)
    }

    /// The words of a document for telling a resent message from a new one: its content stripped of markup
    /// twice, cut into runs of letters, lowercased, without numbers and the words of SSML's own markup
    /// (`speak`, `mark`, `name`, `spd`) that speech-dispatcher's resend may leave in the text.
    public static func resumeWords(_ document: String) -> [String] {
        let ignored: Set<String> = ["speak", "mark", "name", "spd"]
        return content(content(document)).split { !$0.isLetter }.map { $0.lowercased() }.filter { !ignored.contains($0) }
    }

    /// The text a document reads, for comparing two documents: tags removed, the predefined entities
    /// decoded, white space runs made one space, trimmed.
    public static func content(_ document: String) -> String {
        var text = ""
        var inTag = false
        for c in document {
            if inTag { if c == ">" { inTag = false }; continue }
            if c == "<" { inTag = true; continue }
            text.append(c)
        }
        for (entity, c) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")] {
            text = text.replacing(entity, with: c)
        }
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
