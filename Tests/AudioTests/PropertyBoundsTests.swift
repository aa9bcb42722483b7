import Testing
@testable import Audio

/// Stream properties are cut before they reach the server (a 70 KB `media.name` made PulseAudio drop the
/// connection).
struct PropertyBoundsTests {
    @Test func shortValuesAreUnchanged() {
        #expect(PlaybackStream.bounded("Brief an Anna") == "Brief an Anna")
        let exact = String(repeating: "a", count: PlaybackStream.maximumPropertyBytes)
        #expect(PlaybackStream.bounded(exact) == exact)
    }

    @Test func longValuesAreCutAtACharacterWithinTheLimit() {
        for unit in ["a", "ä", "你", "👩‍👩‍👧‍👦", "e\u{301}"] {
            let long = String(repeating: unit, count: 70_000)
            let cut = PlaybackStream.bounded(long)
            #expect(cut.utf8.count <= PlaybackStream.maximumPropertyBytes, "\(unit): \(cut.utf8.count) bytes")
            #expect(cut.hasSuffix("…") && cut.dropLast().allSatisfy { String($0) == unit }, "\(unit)")
            #expect(cut.utf8.count > PlaybackStream.maximumPropertyBytes - 40, "\(unit): \(cut.utf8.count) bytes")
        }
    }
}
