import Foundation
import Testing

extension Integration {
    /// The pronunciation lexicon end to end: `lector lexicon` writes the file, the daemon reads it again on the
    /// change, and eSpeak NG is given the respelling from the next word. Seen in the Word signals: eSpeak NG
    /// reports each word it says, and the words of a respelling all map back to the one written word.
    @Suite(.privateSession)
    struct Lexicon {
        /// The Word signals (start, length) `dbus-monitor` printed so far, in order.
        static func words(_ monitor: String) -> [(start: Int, length: Int)] {
            let lines = monitor.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            var found: [(Int, Int)] = []
            for (i, line) in lines.enumerated() where line.hasSuffix("member=Word") && i + 3 < lines.count {
                let numbers = lines[(i + 2)...(i + 3)].compactMap { Int($0.split(separator: " ").last ?? "") }
                if numbers.count == 2 { found.append((numbers[0], numbers[1])) }
            }
            return found
        }

        @Test("lector lexicon add is heard from the next word of the text being read; remove and list edit the file")
        func addedWhileReading() async throws {
            let session = try await world()
            // A client that asks for Word signals, and a monitor that sees those addressed to it.
            let client = try BusConnection(address: session.busAddress)
            #expect(client.lector("WatchWords", "(true,)").value != nil)
            let monitor = try session.spawn("dbus-monitor", ["--session", "type='signal',member='Word'"], tag: "lexicon-words")
            defer { monitor.stopNow(grace: 1) }
            try await Task.sleep(for: .milliseconds(300))
            let sentences = (1...10).map { "Zorkmid \(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"][$0 - 1])." }
            let text = sentences.joined(separator: " ")
            let reader = try session.spawn(Paths.lectorBinary, ["read", "--wait", text], tag: "lexicon-read")
            let started = await eventually(timeout: 20) { !Self.words(monitor.stdout).isEmpty }
            #expect(started, "no Word signal\n\(session.daemonLogs())")
            let added = try await session.lector(["lexicon", "add", "zorkmid", "--say", "one two three four"])
            #expect(added.status == 0, "\(added)")
            let exit = await reader.waitForExit(timeout: 90)
            #expect(exit == 0, "lector read --wait: \(reader.stderr)")
            try await Task.sleep(for: .milliseconds(300))
            let words = Self.words(monitor.stdout)
            // Each sentence starts with "Zorkmid" (7 scalars); the last one's starts at the last sentence's start.
            let last = text.unicodeScalars.count - sentences.last!.unicodeScalars.count
            let first = words.filter { $0.start == 0 }
            let lastZork = words.filter { $0.start == last && $0.length == 7 }
            #expect(first.count == 1 && first.first?.length == 7, "first sentence: \(first)")
            // Said as four words, each one the written word.
            #expect(lastZork.count == 4, "last sentence: \(words.filter { $0.start >= last })\n\(session.daemonLogs())")

            let listed = try await session.lector(["lexicon", "list"])
            #expect(listed.stdout == "zorkmid\tsay=one two three four\n", "\(listed)")
            let removed = try await session.lector(["lexicon", "remove", "zorkmid"])
            #expect(removed.status == 0, "\(removed)")
            let again = try await session.lector(["lexicon", "remove", "zorkmid"])
            #expect(again.status == 1 && again.stderr.contains("no entry"), "\(again)")
            let bad = try await session.lector(["lexicon", "add", "(", "--regex", "--say", "x"])
            #expect(bad.status == 1 && bad.stderr.contains("not a regular expression"), "\(bad)")
            withExtendedLifetime(client) {}
        }

        @Test("a W3C PLS lexicon is imported: aliases and eSpeak NG phonemes, IPA-only lexemes counted as left out")
        func importPLS() async throws {
            let session = try await world(.bare)
            let pls = session.directory.appendingPathComponent("names.pls")
            try """
                <?xml version="1.0" encoding="UTF-8"?>
                <lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
                  <lexeme><grapheme>W3C</grapheme><alias>World Wide Web Consortium</alias></lexeme>
                  <lexeme><grapheme>Lector</grapheme><grapheme>LECTOR</grapheme><phoneme alphabet="x-espeak">l'EktO@</phoneme></lexeme>
                  <lexeme><grapheme>tomato</grapheme><phoneme>təˈmɑːtoʊ</phoneme></lexeme>
                </lexicon>
                """.write(to: pls, atomically: true, encoding: .utf8)
            let imported = try await session.lector(["lexicon", "import", pls.path])
            #expect(imported.status == 0 && imported.stdout.contains("imported 3 entries") && imported.stdout.contains("1 lexemes left out"), "\(imported)")
            let listed = try await session.lector(["lexicon", "list"])
            #expect(listed.stdout.contains("W3C\tsay=World Wide Web Consortium\tlang=en-US\n"), "\(listed)")
            #expect(listed.stdout.contains("LECTOR\tphonemes=l'EktO@\tlang=en-US\n"), "\(listed)")
            for word in ["W3C", "Lector", "LECTOR"] { _ = try await session.lector(["lexicon", "remove", word]) }
            let broken = try await session.lector(["lexicon", "import", session.directory.appendingPathComponent("none.pls").path])
            #expect(broken.status == 1 && broken.stderr.split(separator: "\n").count == 1, "\(broken)")
        }
    }
}
