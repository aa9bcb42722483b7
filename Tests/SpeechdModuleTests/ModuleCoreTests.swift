import Testing
import LectorCommon
@testable import SpeechdModule

@Suite struct ModuleReaderTests {
    @Test func blocksAreReadToTheirDotAndDoubledDotsUndone() {
        var reader = ModuleReader()
        #expect(reader.read("SPEAK").command == .unknown("SPEAK"))
        #expect(reader.read("INIT").command == .initialize)
        #expect(reader.read("SPEAK").replies == ["202 OK RECEIVING MESSAGE"])
        #expect(reader.read("<speak>Hello").command == nil)
        #expect(reader.read("..").command == nil)
        #expect(reader.read("world</speak>").command == nil)
        #expect(reader.read(".").command == .speak(.text, "<speak>Hello\n.\nworld</speak>"))
        #expect(reader.read("SET").replies == ["203 OK RECEIVING SETTINGS"])
        _ = reader.read("rate=20")
        _ = reader.read("language=NULL")
        #expect(reader.read(".").command == .set(["rate": "20", "language": "NULL"]))
        _ = reader.read("KEY")
        _ = reader.read("space")
        #expect(reader.read(".").command == .speak(.key, " "))
        _ = reader.read("CHAR")
        _ = reader.read("a")
        _ = reader.read("b")
        #expect(reader.read(".").command == .invalid("305 DATA MORE THAN ONE LINE"))
        #expect(reader.read("STOP").command == .stop)
        #expect(reader.read("LIST VOICES").command == .listVoices)
    }
}

@Suite struct ModuleCoreTests {
    private func sent(_ actions: [ModuleAction]) -> [String] {
        actions.flatMap { action -> [String] in
            if case .send(let lines) = action { return lines }
            return []
        }
    }

    @Test func aMessageBeginsMarksAndEndsAsHeard() {
        var core = ModuleCore()
        _ = core.handle(.set(["rate": "-100", "pitch": "100", "language": "de"]))
        let speak = core.handle(.speak(.text, "<speak>Hallo.<mark name=\"__spd_1\"/> Welt.</speak>"))
        #expect(sent(speak) == ["200 OK SPEAKING"])
        guard case .request(.speak(_, let options)) = speak.last else { Issue.record("no Speak"); return }
        #expect(options.rate == 80 && options.pitch == 99 && options.language == "de" && options.ssml)
        // The daemon's first events may come before Speak's reply.
        #expect(core.receive(.started, utterance: 7).isEmpty)
        #expect(sent(core.spoke(.success(7), document: "")) == ["701 BEGIN"])
        #expect(core.receive(.mark("__spd_1"), utterance: 7).isEmpty, "speech-dispatcher's own marks stay with the module")
        #expect(sent(core.receive(.mark("chapter"), utterance: 7)) == ["700-chapter", "700 INDEX MARK"])
        #expect(core.receive(.finished, utterance: 6).isEmpty)
        #expect(sent(core.receive(.finished, utterance: 7)) == ["702 END"])
        #expect(!core.isSpeaking)
    }

    @Test func playbackByTheServerIsRefused() {
        var core = ModuleCore()
        #expect(sent(core.handle(.audio(["audio_output_method": "server"]))) == ["303 ERROR INVALID PARAMETER OR VALUE"])
        #expect(sent(core.handle(.audio(["audio_output_method": "pulse"]))) == ["203 OK AUDIO INITIALIZED"])
    }

    @Test func stopBeforeTheReplyStopsOnceTheIdIsKnownAndEndsWithStop() {
        var core = ModuleCore()
        _ = core.handle(.speak(.text, "<speak>Hello.</speak>"))
        #expect(core.handle(.stop) == [.deadline(.stop(core.messageSerial))])
        #expect(core.spoke(.success(3), document: "") == [.request(.stop(3))])
        #expect(sent(core.receive(.stopped, utterance: 3)) == ["701 BEGIN", "703 STOP"])
    }

    @Test func pauseIsReportedAndTheResentEndResumesTheSameUtterance() {
        var core = ModuleCore()
        _ = core.handle(.speak(.text, "<speak>One.<mark name=\"__spd_0\"/> Two. Three.</speak>"))
        _ = core.spoke(.success(4), document: "")
        _ = core.receive(.started, utterance: 4)
        #expect(core.handle(.pause) == [.request(.pause(4)), .deadline(.pause(core.messageSerial))])
        #expect(sent(core.receive(.paused, utterance: 4)) == ["704 PAUSE"])
        let resent = core.handle(.speak(.text, "<speak> Two. Three.</speak>"))
        #expect(resent == [.send(["200 OK SPEAKING"]), .request(.resume(4))])
        #expect(sent(core.receive(.resumed, utterance: 4)) == ["701 BEGIN"])
        #expect(sent(core.receive(.finished, utterance: 4)) == ["702 END"])
        // Paused before any mark: speech-dispatcher 0.11.4 resends the whole message with its markup escaped.
        _ = core.handle(.speak(.text, "<speak>Hello.<mark name=\"__spd_0\"/> You.</speak>"))
        _ = core.spoke(.success(5), document: "")
        _ = core.handle(.pause)
        _ = core.receive(.paused, utterance: 5)
        let escaped = #"<speak>&lt;speak&gt;Hello.<mark name="__spd_0"/>&lt;mark name="__spd_0"/&gt; You.&lt;/speak&gt;</speak>"#
        #expect(core.handle(.speak(.text, escaped)).last == .request(.resume(5)))
        _ = core.receive(.resumed, utterance: 5)
        _ = core.handle(.pause)
        _ = core.receive(.paused, utterance: 5)
        // … and with its symbols preprocessing, the markup's words and no punctuation.
        #expect(core.handle(.speak(.text, "<speak> speak Hello  mark name    spd 0    You   speak </speak>")).last == .request(.resume(5)))
    }

    @Test func aPauseFromElsewhereIsNotReportedAndRefusedLanguagesAreDropped() {
        var core = ModuleCore()
        _ = core.handle(.set(["language": "zz"]))
        _ = core.handle(.speak(.text, "<speak>Hi</speak>"))
        let retry = core.spoke(.failure(SpeakFailure(name: "org.lector.Lector1.Error.UnknownLanguage", message: "no")), document: "d")
        guard case .request(.speak("d", let options)) = retry.last else { Issue.record("no retry"); return }
        #expect(options.language == nil)
        _ = core.spoke(.success(2), document: "d")
        #expect(core.receive(.paused, utterance: 2).isEmpty)
        #expect(sent(core.daemonVanished()) == ["701 BEGIN", "703 STOP"])
    }

    @Test func volumeAndSpellingWrapTheContent() {
        var settings = VoiceSettings()
        _ = settings.apply(["volume": "-50", "spelling_mode": "on"])
        #expect(settings.document(.text, "<speak>ab</speak>")
                == "<speak><prosody volume=\"-50%\"><say-as interpret-as=\"characters\">ab</say-as></prosody></speak>")
        // speech-dispatcher's default, 100, is its eSpeak NG module's amplitude 200: twice eSpeak NG's own.
        #expect(VoiceSettings().document(.character, "<")
                == "<speak><prosody volume=\"+100%\"><say-as interpret-as=\"characters\">&lt;</say-as></prosody></speak>")
        _ = settings.apply(["volume": "0", "spelling_mode": "off"])
        #expect(settings.document(.text, "<speak>ab</speak>") == "<speak>ab</speak>")
        #expect(SSML.content("<speak> a &amp;\n <mark name=\"x\"/>b </speak>") == "a & b")
    }
}
