import Foundation
import Testing

/// The texts of Tests/Corpus: one folder per text, holding its source (`source.*`, or a `make.sh` that makes it
/// in the folder it is run in, with real tools), `expected.txt` (the sentences a listener should hear, one per
/// line) and `never.txt` (tokens that must never be heard, one per line). A folder with a file `prose` is also
/// read re-wrapped by `fmt` at 72 and 40 columns and with each paragraph on one line: its sentences must not
/// change. What the daemon said of each is written to `.build/corpus-heard/NAME.txt` (and the wrapped variants'
/// to `NAME.72.txt`, …), which bench/corpus.py reads too.
enum Corpus {
    static let root = Paths.packageRoot.appendingPathComponent("Tests/Corpus")
    static let heardFolder = Paths.packageRoot.appendingPathComponent(".build/corpus-heard")

    /// The corpus folders, by name.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0 + "/expected.txt").path) }
            .sorted()
    }

    /// White space collapsed, trimmed: what a listener hears of a line.
    static func normalized(_ line: String) -> String {
        line.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The lines of the file at `url` that hold something.
    static func lines(_ url: URL) -> [String] {
        ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map { normalized(String($0)) }.filter { !$0.isEmpty }
    }

    /// The folder's source: `source.*`, or what its `make.sh` makes in `work`.
    static func source(of name: String, in work: URL) throws -> URL {
        let folder = root.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        if let file = files.first(where: { $0.hasPrefix("source.") }) { return folder.appendingPathComponent(file) }
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/bin/sh")
        make.arguments = [folder.appendingPathComponent("make.sh").path]
        make.currentDirectoryURL = work
        try make.run()
        make.waitUntilExit()
        guard make.terminationStatus == 0,
              let made = try FileManager.default.contentsOfDirectory(atPath: work.path).first(where: { $0.hasPrefix("source.") })
        else { throw HarnessError("\(name)/make.sh made no source.* (exit \(make.terminationStatus))") }
        return work.appendingPathComponent(made)
    }

    /// `text` re-wrapped: by `fmt -w WIDTH`, or (width 0) each paragraph on one line.
    static func rewrapped(_ text: String, width: Int) throws -> String {
        if width == 0 {
            return text.components(separatedBy: "\n\n").map {
                $0.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
            }.joined(separator: "\n\n")
        }
        let fmt = Process()
        fmt.executableURL = URL(fileURLWithPath: "/usr/bin/fmt")
        fmt.arguments = ["-w", String(width)]
        let input = Pipe(), output = Pipe()
        fmt.standardInput = input
        fmt.standardOutput = output
        try fmt.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        fmt.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

extension Integration {
    /// Tests/Corpus read through the daemon as a person would (`lector read --file`), compared sentence by
    /// sentence with what a listener should hear.
    @Suite(.privateSession)
    struct CorpusReading {
        /// What the daemon says of `file`: its sentences' spoken text, white space collapsed.
        func heard(_ file: URL, in session: PrivateSession, bus: BusConnection) async throws -> [String] {
            let read = try await session.lector(["read", "--file", file.path], timeout: 60)
            guard read.status == 0 else { throw HarnessError("lector read --file \(file.lastPathComponent): \(read)") }
            let sentences = try #require(bus.lectorSentences(), "Sentences failed")
            _ = try await session.lector(["stop"], timeout: 10)
            return sentences.map { Corpus.normalized($0.heard) }.filter { !$0.isEmpty }
        }

        static func keep(_ heard: [String], as name: String) {
            try? FileManager.default.createDirectory(at: Corpus.heardFolder, withIntermediateDirectories: true)
            try? (heard.joined(separator: "\n") + "\n").write(to: Corpus.heardFolder.appendingPathComponent(name + ".txt"),
                                                             atomically: true, encoding: .utf8)
        }

        @Test("each corpus text is heard as its expected sentences, with none of its never-heard tokens",
              arguments: Corpus.names)
        func corpusText(name: String) async throws {
            let session = try await world()
            let bus = try BusConnection(address: session.busAddress)
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("lector-corpus-\(name)-\(getpid())")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let folder = Corpus.root.appendingPathComponent(name)
            let source = try Corpus.source(of: name, in: work)
            let expected = Corpus.lines(folder.appendingPathComponent("expected.txt"))
            let never = Corpus.lines(folder.appendingPathComponent("never.txt"))
            let said = try await heard(source, in: session, bus: bus)
            Self.keep(said, as: name)
            let missing = expected.filter { !said.contains($0) }
            let extra = said.filter { !expected.contains($0) }
            // A folder's known.txt says what Lector does not hear right there yet: its misses are known issues.
            let known = try? String(contentsOf: folder.appendingPathComponent("known.txt"), encoding: .utf8)
            withKnownIssue(Comment(rawValue: known ?? ""), isIntermittent: true) {
                #expect(said == expected, "\(name): \(missing.count) expected sentence(s) not heard: \(missing.prefix(5)); heard instead: \(extra.prefix(5))")
            } when: { known != nil }
            for token in never {
                let hits = said.filter { $0.contains(token) }
                #expect(hits.isEmpty, "\(name): '\(token)' heard in \(hits.prefix(3))")
            }
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("prose").path) else { return }
            let text = try String(contentsOf: source, encoding: .utf8)
            for width in [72, 40, 0] {
                let file = work.appendingPathComponent("wrapped-\(width).txt")
                try Corpus.rewrapped(text, width: width).write(to: file, atomically: true, encoding: .utf8)
                let again = try await heard(file, in: session, bus: bus)
                Self.keep(again, as: "\(name).\(width == 0 ? "line" : String(width))")
                withKnownIssue(Comment(rawValue: known ?? ""), isIntermittent: true) {
                    #expect(again == said, "\(name) wrapped \(width == 0 ? "on one line" : "at \(width)"): \(again.filter { !said.contains($0) }.prefix(3))")
                } when: { known != nil }
            }
        }
    }
}
