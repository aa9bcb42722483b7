import Testing
import LectorCommon
@testable import SpeechdModule

/// A daemon that does not answer, over-long lines, and locale names that are no language.
@Suite struct ModuleDeadlineTests {
    private func sent(_ actions: [ModuleAction]) -> [String] {
        actions.flatMap { action -> [String] in
            if case .send(let lines) = action { return lines }
            return []
        }
    }

    @Test func aStopTheDaemonDoesNotAnswerIsAnsweredByTheModule() {
        var core = ModuleCore()
        _ = core.handle(.speak(.text, "<speak>One.</speak>"))
        _ = core.spoke(.success(3), document: "", serial: core.messageSerial)
        _ = core.receive(.started, utterance: 3)
        let stop = core.handle(.stop)
        #expect(stop.contains(.request(.stop(3))))
        guard case .deadline(let deadline) = stop.last else { Issue.record("no deadline"); return }
        #expect(sent(core.timedOut(deadline)) == ["703 STOP"])
        #expect(!core.isSpeaking)
        #expect(core.receive(.stopped, utterance: 3).isEmpty, "the late signal is not reported twice")
    }

    @Test func aDeadlineOfAnEarlierMessageDoesNothing() {
        var core = ModuleCore()
        _ = core.handle(.speak(.text, "<speak>One.</speak>"))
        guard case .deadline(let old) = core.handle(.stop).last else { Issue.record("no deadline"); return }
        _ = core.spoke(.success(1), document: "", serial: core.messageSerial)
        _ = core.receive(.stopped, utterance: 1)
        _ = core.handle(.speak(.text, "<speak>Two.</speak>"))
        #expect(core.timedOut(old).isEmpty)
        #expect(core.isSpeaking)
    }

    @Test func aSpeakWithoutReplyEndsItsMessageAndStopsWhatComesLate() {
        var core = ModuleCore()
        _ = core.handle(.speak(.text, "<speak>One.</speak>"))
        let serial = core.messageSerial
        let failed = core.spoke(.failure(SpeakFailure(name: "org.freedesktop.DBus.Error.NoReply", message: "timed out")),
                                document: "", serial: serial)
        #expect(sent(failed) == ["701 BEGIN", "702 END"])
        #expect(failed.contains(.request(.stop(0))))
        #expect(core.spoke(.success(9), document: "", serial: serial) == [.request(.stop(9))])
    }

    @Test func anOverlongLineIsNeverReadAsProtocol() {
        var reader = ModuleReader()
        _ = reader.read("INIT")
        #expect(reader.overlong().command == .invalid("300 ERR UNKNOWN COMMAND"))
        _ = reader.read("SPEAK")
        #expect(reader.overlong().command == nil)
        #expect(reader.read("QUIT").command == nil, "inside the block a later line is data")
        #expect(reader.read(".").command == .invalid("301 ERROR CANT SPEAK"))
        #expect(reader.read("QUIT").command == .quit)
    }

    @Test(arguments: ["C", "c", "POSIX", "C.UTF-8", "C.utf8", "POSIX@euro", ""])
    func posixLocalesNameNoLanguage(_ value: String) {
        var settings = VoiceSettings()
        let understood = settings.apply(["language": value])
        #expect(understood)
        #expect(settings.language == nil)
        #expect(settings.options().language == nil)
    }

    @Test func realLanguagesAreKept() {
        var settings = VoiceSettings()
        _ = settings.apply(["language": "en-GB"])
        #expect(settings.language == "en-GB")
        _ = settings.apply(["language": "ca"])
        #expect(settings.language == "ca")
    }
}
