import Testing
@testable import LectorClient

@Suite struct SpeechdConfigTests {
    @Test func enableThenDisableGivesBackTheFileExactly() {
        let original = "LogLevel 3\n  DefaultModule espeak-ng\nAddModule \"festival\" \"sd_festival\" \"festival.conf\"\n"
        let enabled = SpeechdConfig.enable(original, module: "/m/sd_lector", system: "/etc/sd.conf")
        #expect(enabled.contains("AddModule \"lector\" \"/m/sd_lector\" \"lector.conf\"\nAddModule \"espeak-ng\""))
        #expect(enabled.contains("#lector-disabled#   DefaultModule espeak-ng"))
        #expect(enabled.contains("BeginClient \"*:orca:*\"\nDefaultModule espeak-ng\nEndClient"))
        #expect(!enabled.contains("Include"), "a user file already replaces the system one")
        #expect(SpeechdConfig.isEnabled(enabled))
        #expect(SpeechdConfig.enable(enabled, module: "/m/sd_lector", system: nil) == enabled)
        #expect(SpeechdConfig.disable(enabled) == original)
    }

    @Test func aCreatedFileIsRemovedAgain() {
        let enabled = SpeechdConfig.enable(nil, module: "/m/sd_lector", system: "/etc/speech-dispatcher/speechd.conf")
        #expect(enabled.contains("Include \"/etc/speech-dispatcher/speechd.conf\""))
        #expect(SpeechdConfig.disable(enabled) == nil)
        #expect(!SpeechdConfig.isEnabled(nil))
    }
}
