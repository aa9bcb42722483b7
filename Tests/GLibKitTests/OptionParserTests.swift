import Testing
@testable import GLibKit

@Suite struct OptionParserTests {
    final class Options {
        let parser = OptionParser(parameterString: "[TEXT…]", summary: "Reads text aloud.", description: "More.")
        let verbose: Option<Bool>
        let voice: Option<String?>
        let rate: Option<Int?>
        let volume: Option<Double?>
        init() {
            verbose = parser.flag("verbose", short: "v", "Say more")
            voice = parser.string("voice", short: "V", "Voice to use", argument: "VOICE")
            rate = parser.integer("rate", short: "r", "Rate in words per minute", argument: "WPM")
            volume = parser.double("volume", "Volume from 0 to 1", argument: "LEVEL")
        }
    }

    @Test func parsesEveryKindAndPositionals() throws {
        let o = Options()
        let rest = try o.parser.parse(["lector", "one", "-v", "--voice=en-us", "-r", "200", "two",
                                       "--volume", "0.25", "-", "three"])
        #expect(rest == ["one", "two", "-", "three"])
        #expect(o.verbose.value)
        #expect(o.voice.value == "en-us")
        #expect(o.rate.value == 200)
        #expect(o.volume.value == 0.25)
    }

    @Test func unsetOptionsAreNilAndReparseResets() throws {
        let o = Options()
        _ = try o.parser.parse(["lector", "-v", "--rate=-5", "-V", "de"])
        #expect(o.rate.value == -5)
        #expect(o.voice.value == "de")
        #expect(try o.parser.parse(["lector"]) == [])
        #expect(!o.verbose.value)
        #expect(o.voice.value == nil)
        #expect(o.rate.value == nil)
        #expect(o.volume.value == nil)
    }

    @Test func doubleDashEndsOptions() throws {
        let o = Options()
        #expect(try o.parser.parse(["lector", "--", "-v", "--rate"]) == ["--", "-v", "--rate"])
        #expect(!o.verbose.value)
        #expect(try o.parser.parse(["lector", "a", "--", "b"]) == ["a", "b"])
    }

    @Test func reportsGLibErrors() {
        let o = Options()
        let unknown = #expect(throws: GLibError.self) { try o.parser.parse(["lector", "--foo"]) }
        #expect(unknown?.message == "Unknown option --foo")
        #expect(unknown?.domain == "g-option-context-error-quark")
        let missing = #expect(throws: GLibError.self) { try o.parser.parse(["lector", "--voice"]) }
        #expect(missing?.message == "Missing argument for --voice")
        let badInt = #expect(throws: GLibError.self) { try o.parser.parse(["lector", "-r", "fast"]) }
        #expect(badInt?.message == "Cannot parse integer value “fast” for -r")
        let bigInt = #expect(throws: GLibError.self) { try o.parser.parse(["lector", "--rate", "99999999999999999999"]) }
        #expect(bigInt?.message == "Integer value “99999999999999999999” for --rate out of range")
        let badDouble = #expect(throws: GLibError.self) { try o.parser.parse(["lector", "--volume", "1.5x"]) }
        #expect(badDouble?.message == "Cannot parse double value “1.5x” for --volume")
    }

    @Test func helpTextListsOptions() {
        OptionParser.setProgramName("lector")
        let help = Options().parser.helpText
        #expect(help.contains("lector [OPTION…] [TEXT…]"))
        #expect(help.contains("Reads text aloud."))
        #expect(help.contains("-v, --verbose"))
        #expect(help.contains("-V, --voice=VOICE"))
        #expect(help.contains("--volume=LEVEL"))
        #expect(help.contains("More."))
    }
}
