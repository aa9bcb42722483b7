import Testing
@testable import Synthesis

/// Piper voices named by their model files, and how the language matcher treats them.
@Suite struct PiperVoiceTests {
    @Test func voiceFromModelName() throws {
        let joe = try #require(Voice.piper(model: "/data/voices/en_US-joe-medium.onnx"))
        #expect(joe.identifier == "piper:en_US-joe-medium")
        #expect(joe.name == "en_US-joe-medium")
        #expect(joe.languages == ["en-US"])
        #expect(joe.engine == .piper)
        #expect(joe.model == "/data/voices/en_US-joe-medium.onnx")
        #expect(Voice.piper(model: "de_DE-thorsten_emotional-medium.onnx")?.languages == ["de-DE"])
        #expect(Voice.piper(model: "ca_ES-upc_ona-x_low.onnx")?.identifier == "piper:ca_ES-upc_ona-x_low")
    }

    @Test("a name from a file is one safe field; the model keeps its path")
    func hostileFileNames() throws {
        let path = "/v/en_US-a\tb\nc\u{1B}]0;owned\u{07}-medium.onnx"
        let voice = try #require(Voice.piper(model: path))
        #expect(voice.name == "en_US-a b c-medium")
        #expect(voice.identifier == "piper:en_US-a b c-medium")
        #expect(voice.model == path)
        #expect(Voice.piper(model: "/v/en_US-\u{1B}[2J-low.onnx") == nil)  // nothing left of the dataset part
    }

    @Test(arguments: ["model.onnx", "en_US-joe-medium.onnx.json", "123-joe-low.onnx", "en_US--low.onnx", "-joe.onnx", "en_US-joe-medium.pt"])
    func notAPiperVoiceName(_ path: String) {
        #expect(Voice.piper(model: path) == nil)
    }

    @Test func matcherMatchesLanguagesToESpeakNGOnlyAndFindsPiperVoicesByName() throws {
        let us = Voice(name: "English (America)", identifier: "gmw/en-US", languages: ["en-US", "en"], espeakLanguage: "en-us", gender: .male)
        let joe = try #require(Voice.piper(model: "/v/en_US-joe-medium.onnx"))
        let thorsten = try #require(Voice.piper(model: "/v/de_DE-thorsten-medium.onnx"))
        let matcher = LanguageMatcher(voices: [joe, us, thorsten])
        #expect(try matcher.match("en-US").voice == us)
        #expect(try matcher.match("en").voice == us)
        #expect(throws: LanguageError.self) { try matcher.match("de") }  // no eSpeak NG voice speaks it here
        #expect(matcher.voice(named: "piper:en_US-joe-medium") == joe)
        #expect(matcher.voice(named: "PIPER:EN_US-JOE-MEDIUM") == joe)
        #expect(matcher.voice(named: "en_US-joe-medium") == joe)
        #expect(matcher.voice(named: "piper:en_US-nobody-low") == nil)
    }
}
