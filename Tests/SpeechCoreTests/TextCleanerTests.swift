import Testing
import TestSupport
import SpeechCore

/// True when `text` holds only scalars `TextCleaner.clean` may let through: no C0/C1 control but tab and
/// line feed, no DEL, no ESC.
private func onlyAllowedScalars(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { s in
        s == "\t" || s == "\n" || !((0x00...0x1F).contains(s.value) || (0x7F...0x9F).contains(s.value))
    }
}

@Suite("TextCleaner: invalid UTF-8")
struct InvalidUTF8Tests {
    @Test func latin1AndStrayBytesBecomeReplacementCharacters() {
        #expect(TextCleaner.clean(utf8: [0x63, 0x61, 0x66, 0xE9]) == "caf\u{FFFD}")
        #expect(TextCleaner.clean(utf8: [0xFF]) == "\u{FFFD}")
        #expect(TextCleaner.clean(utf8: [0x61, 0xFF, 0xFE, 0x62]) == "a\u{FFFD}\u{FFFD}b")
    }

    @Test func truncatedSequenceAtTheEndIsRepaired() {
        // "€" is E2 82 AC; its first two bytes alone are one maximal invalid subpart.
        #expect(TextCleaner.clean(utf8: [0x61, 0xE2, 0x82]) == "a\u{FFFD}")
        // An overlong encoding of "/" and a UTF-16 surrogate encoded in UTF-8 are invalid too.
        #expect(!TextCleaner.clean(utf8: [0xC0, 0xAF]).contains("/"))
        #expect(TextCleaner.clean(utf8: [0xED, 0xA0, 0x80]).unicodeScalars.allSatisfy { $0 == "\u{FFFD}" })
    }

    @Test func validUTF8IsKept() {
        let text = "héllo 日本語 مرحبا 🎉👍🏽 e\u{301}"
        #expect(TextCleaner.clean(utf8: Array(text.utf8)) == text)
    }

    @Test
    func invalidUTF8File() throws {
        let cleaned = TextCleaner.clean(utf8: try SharedFiles.badInput("invalid-utf8.txt"))
        #expect(cleaned == "caf\u{FFFD} \u{FFFD} ok, this line has broken bytes.\n")
        #expect(TextCleaner.isReadable(cleaned))
    }
}

@Suite("TextCleaner: control characters and escape sequences")
struct ControlTests {
    @Test func csiSequencesAreRemoved() {
        #expect(TextCleaner.clean("\u{1B}[31mred\u{1B}[0m") == "red")
        #expect(TextCleaner.clean("a\u{1B}[1;31;42mb\u{1B}[Kc\u{1B}[2J") == "abc")
        #expect(TextCleaner.clean("x\u{1B}[?25ly") == "xy")
    }

    @Test func oscSequencesAreRemoved() {
        // Terminated by BEL …
        #expect(TextCleaner.clean("a\u{1B}]0;window title\u{07}b") == "ab")
        // … or by ESC \ (a hyperlink: the link text stays).
        #expect(TextCleaner.clean("see \u{1B}]8;;https://example.org\u{1B}\\the site\u{1B}]8;;\u{1B}\\ now")
                == "see the site now")
    }

    @Test func twoCharacterEscapesAndALoneEscapeAreRemoved() {
        #expect(TextCleaner.clean("a\u{1B}cb") == "ab")
        #expect(TextCleaner.clean("a\u{1B}=b\u{1B}>c") == "abc")
        #expect(TextCleaner.clean("end\u{1B}") == "end")
        #expect(TextCleaner.clean("\u{1B}") == "")
    }

    @Test func unterminatedSequencesAtTheEndLeaveTheTextBefore() {
        #expect(TextCleaner.clean("text\u{1B}[31") == "text")
        #expect(TextCleaner.clean("text\u{1B}]0;title") == "text")
    }

    @Test func bellAndOtherControlsBecomeSpaces() {
        #expect(TextCleaner.clean("Bell\u{07}!") == "Bell !")
        #expect(TextCleaner.clean("a\u{01}b\u{08}c\u{7F}d") == "a b c d")
        // C1 controls, NEL and the one-byte CSI among them.
        #expect(TextCleaner.clean("a\u{85}b\u{9B}c\u{80}d") == "a b c d")
    }

    @Test func nulIsRemoved() {
        #expect(TextCleaner.clean("a\u{00}b\u{00}") == "ab")
    }

    @Test func tabAndLineFeedAreKept() {
        #expect(TextCleaner.clean("a\tb\nc\n\n") == "a\tb\nc\n\n")
    }

    @Test func carriageReturnsBecomeLineFeeds() {
        #expect(TextCleaner.clean("a\r\nb") == "a\nb")
        #expect(TextCleaner.clean("a\rb") == "a\nb")
        #expect(TextCleaner.clean("a\r") == "a\n")
        #expect(TextCleaner.clean("a\r\r\nb") == "a\n\nb")
        #expect(TextCleaner.clean("a\r\u{1B}[0mb") == "a\nb")
    }

    @Test func formFeedBecomesAParagraphBreak() {
        #expect(TextCleaner.clean("one\u{0C}two") == "one\n\ntwo")
    }

    @Test func markupCharactersAreKept() {
        let text = "this is a <test>, 5 < 6 and 7 > 3, Tom & Jerry, &amp; <speak>"
        #expect(TextCleaner.clean(text) == text)
    }

    @Test func unterminatedCSIKeepsTheTextAfterIt() {
        // ECMA-48 §5.4: a control sequence holds parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F and
        // one final byte 0x40–0x7E; anything else is not part of it. A truncated colour code must not eat
        // the readable text that follows: the sequence ends before the first byte outside those ranges,
        // and that character is kept.
        #expect(TextCleaner.clean("\u{1B}[31\nПривет, мир.") == "\nПривет, мир.")
        // The space is an intermediate byte (part of the sequence); "日" is not a final byte.
        #expect(TextCleaner.clean("\u{1B}[1 日本語。") == "日本語。")
        #expect(TextCleaner.clean("a\u{1B}[é") == "aé")
        #expect(TextCleaner.clean("a\u{1B}[38;5;\u{1F389} party") == "a\u{1F389} party")
    }

    @Test func theCharacterEndingAnUnterminatedCSIIsCleanedInTurn() {
        // An ESC starts the next sequence, a CR becomes a line feed, other controls become a space.
        #expect(TextCleaner.clean("a\u{1B}[31\u{1B}[0mb") == "ab")
        #expect(TextCleaner.clean("a\u{1B}[3\u{1B}]0;title\u{07}b") == "ab")
        #expect(TextCleaner.clean("a\u{1B}[3\r\nb") == "a\nb")
        #expect(TextCleaner.clean("a\u{1B}[3\rb") == "a\nb")
        #expect(TextCleaner.clean("a\u{1B}[3\u{07}b") == "a b")
        #expect(TextCleaner.clean("a\u{1B}[3\u{7F}b") == "a b")
        #expect(TextCleaner.clean("a\u{1B}[3\u{00}b") == "ab")
        #expect(TextCleaner.clean("a\u{1B}[3\tb") == "a\tb")
        #expect(TextCleaner.clean("a\u{1B}[3\u{0C}b") == "a\n\nb")
    }

    @Test func completeCSIWithIntermediateOrPrivateBytesIsRemoved() {
        // Parameter bytes 0x30–0x3F (digits ; : < = > ?) and intermediate bytes 0x20–0x2F belong to the
        // sequence up to its final byte: DECSCUSR "ESC [ 1 SP q", DECSTR "ESC [ ! p", private modes.
        #expect(TextCleaner.clean("x\u{1B}[1 qy") == "xy")
        #expect(TextCleaner.clean("x\u{1B}[!py") == "xy")
        #expect(TextCleaner.clean("x\u{1B}[>4;2my") == "xy")
        #expect(TextCleaner.clean("x\u{1B}[?1049h\u{1B}[?25l\u{1B}[Hy") == "xy")
        #expect(TextCleaner.clean("x\u{1B}[38:2::255:0:0m~y") == "x~y")
        // The final byte is the last one removed: the letters after it stay.
        #expect(TextCleaner.clean("\u{1B}[1mBold\u{1B}[22m text") == "Bold text")
    }

    @Test func escapeSequencesThatAreNeitherCSINorOSCNorTwoCharacters() {
        // ECMA-35 nF sequences "ESC I… F" (intermediate bytes 0x20–0x2F, then a final byte) are three
        // characters or more: `tput sgr0` writes "ESC ( B ESC [ m" on xterm. And an ESC before a non-ASCII
        // character is no escape sequence at all.
        withKnownIssue("bug: only ESC and the next character are removed; the rest of an nF sequence stays, and a non-ASCII character after ESC is eaten") {
            #expect(TextCleaner.clean("\u{1B}(B\u{1B}[mText") == "Text")
            #expect(TextCleaner.clean("a\u{1B}日本") == "a日本")
        }
    }

    @Test
    func controlCharsFile() throws {
        let cleaned = TextCleaner.clean(utf8: try SharedFiles.badInput("control-chars.txt"))
        #expect(cleaned == "Bell  then escape red and a form feed\n\n done.\n")
    }

    @Test(arguments: ["markup-lookalike.txt", "malformed.ssml", "bidi-mixed.txt", "emoji-only.txt",
                      "engine-crash-apostrophes.txt", "long-word-200k.txt", "empty.txt", "whitespace-only.txt"])
    func cleanTextPassesUnchanged(file: String) throws {
        let bytes = try SharedFiles.badInput(file)
        #expect(TextCleaner.clean(utf8: bytes) == String(decoding: bytes, as: UTF8.self))
    }

    @Test(arguments: ["control-chars.txt", "invalid-utf8.txt", "markup-lookalike.txt", "malformed.ssml",
                      "bidi-mixed.txt", "emoji-only.txt", "empty.txt", "whitespace-only.txt"])
    func cleanedFilesHoldNoControlsAndAreStable(file: String) throws {
        let cleaned = TextCleaner.clean(utf8: try SharedFiles.badInput(file))
        #expect(onlyAllowedScalars(cleaned))
        #expect(TextCleaner.clean(cleaned) == cleaned)
    }

    @Test func randomBytesCleanToAllowedScalarsAndAreStable() {
        var rng = SeededGenerator(seed: 42)
        // Bytes biased towards the interesting ones: ESC, [, ], BEL, CR, LF, FF, NUL, C1 lead bytes, letters.
        let interesting: [UInt8] = [0x1B, 0x5B, 0x5D, 0x07, 0x0D, 0x0A, 0x0C, 0x00, 0x5C, 0xC2, 0x9B, 0x61, 0x20, 0x6D]
        for round in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                Bool.random(using: &rng) ? interesting.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            }
            let cleaned = TextCleaner.clean(utf8: bytes)
            #expect(onlyAllowedScalars(cleaned), "round \(round): \(bytes)")
            #expect(TextCleaner.clean(cleaned) == cleaned, "round \(round): \(bytes)")
        }
    }
}

@Suite("TextCleaner: field")
struct TextCleanerFieldTests {
    @Test(arguments: [
        ("en_US-joe-medium", "en_US-joe-medium"),
        ("en_US-a\tb-medium", "en_US-a b-medium"),
        ("en_US-a\nb\r\nc-medium", "en_US-a b c-medium"),
        ("en_US-\u{1B}]0;owned\u{07}x-medium", "en_US-x-medium"),
        ("en_US-\u{1B}[31mred\u{1B}[0m-low", "en_US-red-low"),
        ("a\u{85}b\u{2028}c  \t d", "a b c d"),
        ("  \t\n ", ""),
        ("evil\u{202E}txt.exe\u{2066}x\u{2069}", "eviltxt.exex"),
        ("caf\u{E9}\u{0}!", "caf\u{E9}!"),
    ])
    func oneSafeField(_ raw: String, _ expected: String) {
        let field = TextCleaner.field(raw)
        #expect(field == expected)
        #expect(!field.contains("\t") && !field.contains("\n") && !field.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }
}

@Suite("TextCleaner: isReadable")
struct ReadableTests {
    @Test(arguments: ["", " ", " \t\n\r ", "\u{00A0}\u{2003}\u{3000}", "\u{07}\u{1B}\u{00}\u{7F}\u{85}",
                      "\u{200B}\u{200D}\u{FEFF}\u{2060}", "\u{2028}\u{2029}", "\n\n\n"])
    func nothingToRead(text: String) {
        #expect(!TextCleaner.isReadable(text))
    }

    @Test(arguments: ["a", "🎉", "🎉🎉 👍", "👍🏽", "🇫🇷", "日本語", "中文。", "مرحبا", "שלום", "Привет", "5", ".",
                      "\u{FFFD}", "  x  "])
    func somethingToRead(text: String) {
        #expect(TextCleaner.isReadable(text))
    }

    @Test
    func badInputFiles() throws {
        func readable(_ file: String) throws -> Bool {
            TextCleaner.isReadable(TextCleaner.clean(utf8: try SharedFiles.badInput(file)))
        }
        #expect(try !readable("empty.txt"))
        #expect(try !readable("whitespace-only.txt"))
        #expect(try readable("emoji-only.txt"))
        #expect(try readable("bidi-mixed.txt"))
        #expect(try readable("control-chars.txt"))
        #expect(try readable("invalid-utf8.txt"))
        #expect(try readable("long-word-200k.txt"))
    }
}

@Suite("TextCleaner: title")
struct TitleTests {
    @Test func shortTextIsItsOwnTitle() {
        #expect(TextCleaner.title(of: "Hello world.") == "Hello world.")
        #expect(TextCleaner.title(of: "") == "")
        #expect(TextCleaner.title(of: " \n\t\n") == "")
    }

    @Test func firstNonBlankLineWithWhiteSpaceFolded() {
        #expect(TextCleaner.title(of: "\n   \n  First   line\there \nSecond line") == "First line here")
        // Any line break ends the line: CR LF (one Character), CR, U+2028.
        #expect(TextCleaner.title(of: "\r\n First line\r\nSecond line") == "First line")
        #expect(TextCleaner.title(of: "First line\rSecond line") == "First line")
        #expect(TextCleaner.title(of: "First line\u{2028}Second line") == "First line")
    }

    @Test func cutAtAWordWithAnEllipsis() {
        #expect(TextCleaner.title(of: "The quick brown fox jumps", limit: 12) == "The quick…")
        #expect(TextCleaner.title(of: "The quick brown fox jumps", limit: 80) == "The quick brown fox jumps")
        // Exactly the limit: no cut.
        #expect(TextCleaner.title(of: "The quick brown", limit: 15) == "The quick brown")
    }

    @Test func aWordLongerThanTheLimitIsCutInside() {
        #expect(TextCleaner.title(of: "Supercalifragilistic word", limit: 10) == "Supercali…")
        let long = String(repeating: "a", count: 200_000)
        let title = TextCleaner.title(of: long)
        #expect(title == String(repeating: "a", count: 79) + "…")
        #expect(title.count == 80)
    }

    @Test func countsCharactersNotScalars() {
        let flags = "🇫🇷🇩🇪🇮🇹 e\u{301}te\u{301}"
        #expect(TextCleaner.title(of: flags, limit: 8) == flags)
    }

    @Test func titleNeverExceedsTheLimit() {
        // "At most `limit` characters", the ellipsis included: when the kept words fill the limit, the last
        // one goes to make room for "…".
        #expect(TextCleaner.title(of: "The quick brown fox", limit: 16) == "The quick brown…")
        #expect(TextCleaner.title(of: "The quick brown fox", limit: 15) == "The quick…")
        #expect(TextCleaner.title(of: "The quick brown fox", limit: 10) == "The quick…")
        #expect(TextCleaner.title(of: "The quick brown fox", limit: 9) == "The…")
    }

    @Test func aFirstWordThatFillsTheLimitIsCutInside() {
        // No whole word fits with the ellipsis: the first word is cut, as a word longer than the limit is.
        #expect(TextCleaner.title(of: "The quick", limit: 3) == "Th…")
        #expect(TextCleaner.title(of: "  The quick", limit: 3) == "Th…")
        #expect(TextCleaner.title(of: "The quick", limit: 2) == "T…")
        #expect(TextCleaner.title(of: "The quick", limit: 1) == "…")
        #expect(TextCleaner.title(of: "e\u{301}t\u{E9} dure", limit: 3) == "e\u{301}t…")
    }

    @Test func titleOfEveryLimitFitsAndIsAPrefixOfWholeWords() {
        let texts = ["The quick brown fox jumps over the lazy dog", "  a bb  ccc\tdddd eeeee\nsecond line",
                     "Supercalifragilistic expialidocious", "👍🏽 🇫🇷🇩🇪 e\u{301}te\u{301} 日本語の文 x", "one"]
        for text in texts {
            let folded = text.split(separator: "\n").first!.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for limit in 1...(folded.count + 2) {
                let title = TextCleaner.title(of: text, limit: limit)
                #expect(title.count <= limit, "\(text.debugDescription) limit \(limit): \"\(title)\"")
                if folded.count <= limit {
                    #expect(title == folded, "\(text.debugDescription) limit \(limit): \"\(title)\"")
                } else {
                    #expect(title.hasSuffix("…") && folded.hasPrefix(title.dropLast()),
                            "\(text.debugDescription) limit \(limit): \"\(title)\"")
                    // Cut at a word boundary unless the first word alone does not fit with the ellipsis.
                    let kept = title.dropLast()
                    let firstWord = folded.prefix(while: { !$0.isWhitespace })
                    if kept.count >= firstWord.count {
                        #expect(folded.dropFirst(kept.count).first == " ", "\(text.debugDescription) limit \(limit): \"\(title)\"")
                    }
                }
            }
        }
    }
}

/// `needsCleaning` looks at eight bytes at a time: a control character (or a C1 control, 0xC2 0x80–0x9F, also
/// across two words) is found wherever it lies, and nothing else is taken for one.
@Suite struct TextCleanerWordScanTests {
    @Test("a control character at any position of a long text is cleaned; other text is kept as it is")
    func everyPosition() {
        for position in 0..<24 {
            let before = String(repeating: "a", count: position), after = String(repeating: "b", count: 20)
            for control in ["\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}", "\r", "\u{0C}"] {
                let text = before + control + after
                #expect(TextCleaner.clean(text) != text, "\(position) \(control.unicodeScalars.first!.value)")
            }
            for kept in ["\n", "\t", "\u{A0}", "é", "\u{C2}", "€", "\u{1F600}", "\u{2029}"] {
                let text = before + kept + after
                #expect(TextCleaner.clean(text) == text, "\(position) \(kept.unicodeScalars.first!.value)")
            }
        }
    }
}
