#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GLibKit
import Synthesis
import Testing
@testable import LectorDaemon

/// Piper voices found in folders, and `[voices]` naming one.
@Suite struct PiperVoicesTests {
    static func touch(_ path: String) {
        let f = fopen(path, "w")
        fputs("x", f)
        fclose(f)
    }

    @Test("every model named like a Piper voice is found, the first of a name wins, other files are skipped")
    func voicesInFolders() throws {
        let a = String(cString: mkdtemp(strdup("/tmp/lector-piper-XXXXXX")))
        let b = String(cString: mkdtemp(strdup("/tmp/lector-piper-XXXXXX")))
        let files = [a + "/en_US-joe-medium.onnx", a + "/en_US-joe-medium.onnx.json", a + "/notes.txt",
                     a + "/model.onnx", b + "/en_US-joe-medium.onnx", b + "/de_DE-thorsten-low.onnx"]
        for file in files { Self.touch(file) }
        defer { for file in files { unlink(file) }; rmdir(a); rmdir(b) }
        let voices = Piper.voices(in: [a, b, "/nonexistent/folder"])
        #expect(voices.map(\.identifier) == ["piper:en_US-joe-medium", "piper:de_DE-thorsten-low"])
        #expect(voices.first?.model == a + "/en_US-joe-medium.onnx")
        #expect(voices.allSatisfy { $0.engine == .piper })
    }

    @Test("[voices] en=piper:NAME makes an installed Piper voice English's; an unknown one is one problem")
    func configuredPiperVoice() throws {
        let joe = try #require(Voice.piper(model: "/v/en_US-joe-medium.onnx"))
        let us = Voice(name: "English (America)", identifier: "gmw/en-US", languages: ["en-US", "en"], espeakLanguage: "en-us", gender: .male)
        let matcher = LanguageMatcher(voices: [us, joe])
        let file = try KeyFile(text: "[voices]\nen=piper:en_US-joe-medium\nen-GB=piper:en_GB-nobody-low\n")
        let (config, problems) = Configuration.parse(file, path: "/cfg", matcher: matcher)
        #expect(config.voice(for: "en-US") == "piper:en_US-joe-medium")
        #expect(problems.count == 1 && problems[0].contains("unknown voice 'piper:en_GB-nobody-low'"), "\(problems)")
    }
}
