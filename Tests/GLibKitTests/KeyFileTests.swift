import GLibKit
import Testing

/// `KeyFile`: GKeyFile's groups, keys and typed values, and the line scan that GKeyFile lacks.
@Suite struct KeyFileTests {
    static let text = """
        # a comment
        [speech]
        rate = 190
        volume=0.5
        name=Hello\\sthere

        [voices]
          de=German
        de = Deutsch
        """

    @Test("groups, keys and values as GLib reads them")
    func values() throws {
        let file = try KeyFile(text: Self.text)
        #expect(file.groups == ["speech", "voices"])
        #expect(file.keys(inGroup: "speech") == ["rate", "volume", "name"])
        #expect(file.keys(inGroup: "nothing") == [])
        #expect(try file.integer("rate", inGroup: "speech") == 190)
        #expect(try file.double("volume", inGroup: "speech") == 0.5)
        #expect(file.string("name", inGroup: "speech") == "Hello there") // \\s decoded
        #expect(file.string("de", inGroup: "voices") == "Deutsch") // the last value wins
        #expect(file.string("missing", inGroup: "speech") == nil)
        #expect(try file.integer("missing", inGroup: "speech") == nil)
    }

    @Test("a value of the wrong type throws GLib's error")
    func wrongType() throws {
        let file = try KeyFile(text: "[a]\nn=fast\n")
        #expect(throws: GLibError.self) { try file.integer("n", inGroup: "a") }
        #expect(throws: GLibError.self) { try file.double("n", inGroup: "a") }
    }

    @Test("lines of keys and groups, 1-based; the last line that sets a key")
    func lines() throws {
        let file = try KeyFile(text: Self.text)
        #expect(file.lineNumber(ofKey: "rate", inGroup: "speech") == 3)
        #expect(file.lineNumber(ofKey: "name", inGroup: "speech") == 5)
        #expect(file.lineNumber(ofKey: "de", inGroup: "voices") == 9)
        #expect(file.lineNumber(ofKey: "de", inGroup: "speech") == nil)
        #expect(file.lineNumber(ofGroup: "voices") == 7)
        #expect(file.lineNumber(ofGroup: "other") == nil)
    }

    @Test("syntax errors and missing files")
    func errors() {
        #expect(throws: GLibError.self) { try KeyFile(text: "[a]\nnot a key\n") }
        do {
            _ = try KeyFile(path: "/nonexistent/lector/config", maximumBytes: 4096)
            Issue.record("no error")
        } catch {
            #expect(error.isFileNotFound)
        }
    }
}
