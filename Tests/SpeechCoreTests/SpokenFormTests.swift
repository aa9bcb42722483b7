import Testing
import SpeechCore

/// What is said of `text` under `settings`, white space collapsed.
private func said(_ text: String, _ settings: ReadingSettings = ReadingSettings()) -> String {
    let spoken = SpokenForm.of(text, settings: settings)?.text ?? text
    return spoken.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
}

@Suite("Spoken form: clutter")
struct SpokenFormTests {
    @Test func webAddressesAreReadAsTheirHost() {
        #expect(said("See <https://www.gnu.org/licenses/> for details.") == "See gnu.org for details.")
        #expect(said("Go to https://example.org/a/b?c=1. Then stop.") == "Go to example.org. Then stop.")
        #expect(said("Visit www.example.com, today.") == "Visit example.com, today.")
        #expect(said("(https://en.wikipedia.org/wiki/Lector_(disambiguation))") == "(en.wikipedia.org)")
        var skip = ReadingSettings()
        skip.links = .skip
        #expect(said("See <https://www.gnu.org/licenses/> for details.", skip) == "See for details.")
        skip.links = .full
        #expect(SpokenForm.of("See https://gnu.org/x now.", settings: skip) == nil)
    }

    @Test func emailAddresses() {
        #expect(said("Write to <jane.doe@example.org>.") == "Write to jane.doe at example.org.")
        #expect(said("mailto:bugs@lists.example.net") == "bugs at lists.example.net")
        var skip = ReadingSettings()
        skip.emails = .skip
        #expect(said("Write to <jane.doe@example.org>.", skip) == "Write to.")
        #expect(said("Not an address: a@b, @home.") == "Not an address: a@b, @home.")
    }

    @Test func citationsNumbersHashesAndSymbols() {
        #expect(said("It is known [12]. Others agree [1, 3] [4–6].") == "It is known. Others agree.")
        #expect(said("See [note] and [a1].") == "See [note] and [a1].")
        #expect(said("Commit 3c2ecd9 and 550e8400-e29b-41d4-a716-446655440000 landed.") == "Commit and landed.")
        #expect(said("Card 1234567890123456 and 2026 and deadbeef.") == "Card and 2026 and deadbeef.")
        #expect(said("Title\n=====") == "Title")
        #expect(said("a ----- b ***** c ─── d") == "a b c d")
        #expect(said("Wait... and -> go, 1-2") == "Wait... and -> go, 1-2")
        #expect(said("--").isEmpty)
        var read = ReadingSettings()
        read.symbols = .read
        read.citations = .read
        read.numbers = .read
        #expect(SpokenForm.of("A [1] ===== 3c2ecd9f", settings: read) == nil)
    }

    @Test func emojiAreReadOnce() {
        #expect(said("Great 🎉🎉🎉 news 👍 👍!") == "Great 🎉 news 👍!")
        #expect(SpokenForm.of("Mixed 🎉👍 ok", settings: ReadingSettings()) == nil)
        var skip = ReadingSettings()
        skip.emoji = .skip
        #expect(said("Great 🎉🎉 news", skip) == "Great news")
    }

    @Test func quoteMarkersAndBulletsAreNotRead() {
        #expect(said("I think so, if\n> > the room is free.") == "I think so, if the room is free.")
        #expect(said("* and time") == "and time")
        #expect(said("- a computer\n- a phone") == "a computer a phone")
        #expect(said("5 - 3 is 2") == "5 - 3 is 2")
    }

    @Test func settingsReadAndWrite() throws {
        let s = try ReadingSettings().changed(by: "links=skip, emoji=all")
        #expect(s.links == .skip && s.emoji == .all && s.citations == .skip)
        #expect(try ReadingSettings().changed(by: s.encoded) == s)
        #expect(throws: ReadingSettingsError.self) { try ReadingSettings().changed(by: "links=never") }
        #expect(throws: ReadingSettingsError.self) { try ReadingSettings().changed(by: "colour=red") }
        #expect(throws: ReadingSettingsError.self) { try ReadingSettings().changed(by: "links") }
    }
}

@Suite("Spoken form: offsets back to the written text")
struct SpokenTextTests {
    let written = "See <https://www.gnu.org/licenses/> now [3]."

    @Test func wordsMapBackToWhatIsWritten() throws {
        let spoken = try #require(SpokenForm.of(written, settings: ReadingSettings()))
        #expect(spoken.text == "See gnu.org now.")
        // "See" is the same; "gnu.org" is the whole address; "now" moved.
        #expect(spoken.writtenRange(0..<3) == 0..<3)
        #expect(spoken.writtenRange(4..<11) == 4..<35)
        #expect(spoken.writtenRange(12..<15) == 36..<39)
        #expect(spoken.writtenRange(15..<16) == 43..<44)
        #expect(spoken.spokenOffset(36) == 12)
        #expect(spoken.spokenOffset(10) == 4)
    }

    @Test func theRestFromAWordKeepsItsMap() throws {
        let spoken = try #require(SpokenForm.of(written, settings: ReadingSettings()))
        let rest = spoken.suffix(fromWritten: 36)
        #expect(rest.text == "now.")
        #expect(rest.writtenRange(0..<3) == 0..<3)
        #expect(rest.writtenRange(3..<4) == 7..<8)
        let fromAddress = spoken.suffix(fromWritten: 4)
        #expect(fromAddress.text == "gnu.org now.")
        #expect(fromAddress.writtenRange(0..<7) == 0..<31)
    }
}
