import Testing
@testable import LectorClient

@Suite struct SleepDurationTests {
    @Test(arguments: [
        ("20m", 1_200_000_000), ("90s", 90_000_000), ("1h30m", 5_400_000_000), ("1h 30m", 5_400_000_000),
        ("2.5m", 150_000_000), ("20", 1_200_000_000), ("1H", 3_600_000_000), ("0.5", 30_000_000),
    ] as [(String, Int64)])
    func durations(text: String, microseconds: Int64) {
        #expect(SleepDuration.parse(text) == microseconds)
    }

    @Test(arguments: ["", "soon", "m", "20x", "-5m", "0", "0s", "5m3", "1..5m", "nan", "inf"])
    func notDurations(text: String) {
        #expect(SleepDuration.parse(text) == nil)
    }
}

@Suite struct CommandNumberTests {
    @Test func hugeDurationsAndSecondsDoNotTrap() {
        #expect(SleepDuration.parse("1e30") == .max)
        #expect(SleepDuration.parse("99999999999999999999h") == .max)
        #expect(Command.microseconds(1e300) == .max)
        #expect(Command.microseconds(-1e300) == .min)
        #expect(Command.microseconds(-2.5) == -2_500_000)
    }
}
