import Testing
@testable import Audio

/// What the stream sends the server and reads back from it, bounded: properties are cut (a 70 KB `media.name`
/// made PulseAudio drop the connection), and times convert to samples without overflow.
struct StreamBoundsTests {
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

    @Test func timesConvertToSamplesWithoutOverflow() {
        #expect(PlaybackStream.samples(microseconds: 1_000_000, rate: 22_050) == 22_050)
        #expect(PlaybackStream.samples(microseconds: 1_500, rate: 22_050) == 33)
        #expect(PlaybackStream.samples(microseconds: 0, rate: 48_000) == 0)
        // libpulse's timing can be far off just after a stream starts: no trap, no value.
        #expect(PlaybackStream.samples(microseconds: .max, rate: 22_050) == nil)
        #expect(PlaybackStream.samples(microseconds: UInt64(Int64.max), rate: 48_000) == nil)
    }
}
