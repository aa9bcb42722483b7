import Testing
@testable import LectorDaemon

/// The line format of the state files: escaped values round-trip, and no value adds a line or a field.
@Suite struct StateFilesTests {
    @Test("escaping keeps every value on one line and in one field, and round-trips")
    func escapeRoundTrips() {
        let values = [
            "", "plain", "a\nb", "tab\there", "back\\slash", "\\n literally", "CR\r\nLF", "bell \u{7} nul \u{0} del \u{7F}",
            "trailing \\", "\\x4", "\\xZZ", "Grüße, 東京 🎧", "\u{85} \u{2028} \u{2029}", "e\u{301}",
        ]
        for value in values {
            let escaped = StateFiles.escape(value)
            #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(escaped)")
            #expect(StateFiles.unescape(escaped) == value, "\(value.debugDescription) → \(escaped.debugDescription)")
        }
        #expect(StateFiles.escape("a\nb\t\\\u{1}") == #"a\nb\t\\\x01"#)
    }

    @Test("random strings of troublesome scalars round-trip")
    func randomRoundTrips() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Unicode.Scalar] = ["a", " ", "\\", "x", "n", "0", "F", "\n", "\r", "\t", "\u{0}", "\u{1B}", "\u{7F}", "é", "🎧"]
        for _ in 0..<500 {
            var value = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...20, using: &generator) { value.append(alphabet.randomElement(using: &generator)!) }
            let string = String(value)
            #expect(StateFiles.unescape(StateFiles.escape(string)) == string, "\(string.debugDescription)")
        }
    }

    @Test("a value is shortened to its limit at a scalar's boundary, never inside an escape")
    func shortening() {
        #expect(StateFiles.escape("abcdef", maximumBytes: 4) == "abcd")
        #expect(StateFiles.escape("ab\ncd", maximumBytes: 3) == "ab")
        #expect(StateFiles.escape("ab\ncd", maximumBytes: 4) == #"ab\n"#)
        #expect(StateFiles.escape("aé", maximumBytes: 2) == "a")
        let long = String(repeating: "Chapter\n", count: 200_000)
        let escaped = StateFiles.escape(long, maximumBytes: StateFiles.maximumFieldBytes)
        #expect(escaped.utf8.count <= StateFiles.maximumFieldBytes && escaped.utf8.count > StateFiles.maximumFieldBytes - 8)
        #expect(long.hasPrefix(StateFiles.unescape(escaped)))
    }

    @Test("backslashes that start no escape read as they are (files written before escaping)")
    func unknownEscapes() {
        #expect(StateFiles.unescape(#"C:\Users\q"#) == #"C:\Users\q"#)
        #expect(StateFiles.unescape(#"end\"#) == #"end\"#)
        #expect(StateFiles.unescape(#"\x4"#) == #"\x4"#)
        #expect(StateFiles.unescape(#"\x+1"#) == #"\x+1"#)
    }

    @Test("key value lines: split at the first space, escaped values decoded, only line feeds end a line")
    func fields() {
        let bytes = Array("lector-reading 2\ntitle A\\nB C\nempty\nurl file:///x\r\u{2028}y\n\nbad \u{FF}".utf8) + [0xFF]
        let escaped = StateFiles.fields(bytes, escaped: true)
        #expect(escaped["lector-reading"] == "2")
        #expect(escaped["title"] == "A\nB C")
        #expect(escaped["empty"] == "")
        #expect(escaped["url"] == "file:///x\r\u{2028}y")
        #expect(escaped["bad"] == "\u{FF}\u{FFFD}")
        #expect(StateFiles.fields(bytes, escaped: false)["title"] == "A\\nB C")
    }
}
