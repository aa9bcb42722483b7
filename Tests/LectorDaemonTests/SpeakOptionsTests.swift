import GLibKit
import LectorCommon
import Testing
@testable import LectorDaemon

/// Speak's options travel as `a{sv}`: the command line encodes them and the daemon decodes them with the same
/// code (`SpeakOptions.dbusOptions`, `SpeakOptions(dbusOptions:)`); the messages are the ones clients see.
@Suite struct SpeakOptionsTests {
    static var everything: SpeakOptions {
        var o = SpeakOptions(language: "pt-BR", voice: "roa/pt-BR", rate: 220, pitch: 60, queue: true)
        o.title = "Título"
        o.url = "file:///tmp/a%20b.txt"
        o.fromStart = true
        o.ssml = true
        return o
    }

    @Test func encodesOnlyWhatIsSet() {
        #expect(SpeakOptions().dbusOptions.isEmpty)
        #expect(SpeakOptions(rate: 220).dbusOptions == ["rate": .int32(220)])
        #expect(SpeakOptions(rate: .max, pitch: .min).dbusOptions == ["rate": .int32(.max), "pitch": .int32(.min)])
        #expect(Self.everything.dbusOptions == [
            "language": .string("pt-BR"), "voice": .string("roa/pt-BR"), "rate": .int32(220), "pitch": .int32(60),
            "queue": .bool(true), "ssml": .bool(true), "title": .string("Título"), "url": .string("file:///tmp/a%20b.txt"),
            "from-start": .bool(true),
        ])
    }

    @Test func decodesWhatItEncodes() throws {
        for options in [SpeakOptions(), SpeakOptions(language: "de"), Self.everything] {
            // As the bus delivers an a{sv}: every value boxed.
            let boxed = options.dbusOptions.mapValues { Variant.variant($0) }
            #expect(try SpeakOptions(dbusOptions: boxed) == options)
        }
    }

    @Test func takesAnyIntegerTypeAndFalseFlags() throws {
        let o = try SpeakOptions(dbusOptions: ["rate": .int64(300), "pitch": .byte(7), "queue": .bool(false)])
        #expect(o == SpeakOptions(rate: 300, pitch: 7))
    }

    @Test(arguments: [
        (["language": .int32(1)], "option 'language' must be a string (s)"),
        (["voice": .bool(true)], "option 'voice' must be a string (s)"),
        (["title": .double(1)], "option 'title' must be a string (s)"),
        (["url": .strings([])], "option 'url' must be a string (s)"),
        (["rate": .string("fast")], "option 'rate' must be an integer (i)"),
        (["pitch": .uint64(.max)], "option 'pitch' must be an integer (i)"),
        (["queue": .int32(1)], "option 'queue' must be a boolean (b)"),
        (["ssml": .string("yes")], "option 'ssml' must be a boolean (b)"),
        (["from-start": .variant(.int32(0))], "option 'from-start' must be a boolean (b)"),
        (["speed": .int32(1)], "unknown option 'speed'; known: language, voice, rate, pitch, queue, ssml, title, url, from-start, format, password, reading"),
    ] as [([String: Variant], String)])
    func refusesBadOptionsWithTheirMessage(options: [String: Variant], message: String) {
        #expect(throws: SpeakOptions.OptionError.self) { try SpeakOptions(dbusOptions: options) }
        do { _ = try SpeakOptions(dbusOptions: options) } catch { #expect(error.description == message) }
        do { _ = try LectorService.speakOptions(options) } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(error.message == message)
        }
    }

    @Test func rangesAndTheirMessages() throws {
        for wpm in [80, 175, 450] { try SpeakOptions.checkRate(wpm) }
        for pitch in [0, 50, 99] { try SpeakOptions.checkPitch(pitch) }
        #expect(throws: SpeakOptions.OptionError.rateOutOfRange(79)) { try SpeakOptions.checkRate(79) }
        #expect(throws: SpeakOptions.OptionError.pitchOutOfRange(-1)) { try SpeakOptions.checkPitch(-1) }
        #expect(SpeakOptions.OptionError.rateOutOfRange(451).description == "rate 451 is out of range: eSpeak NG speaks 80–450 words per minute")
        #expect(SpeakOptions.OptionError.pitchOutOfRange(100).description == "pitch 100 is out of range 0–99")
    }
}
