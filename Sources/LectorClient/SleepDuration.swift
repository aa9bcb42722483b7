/// The durations of `lector sleep`.
enum SleepDuration {
    /// Parses a duration as `lector sleep` takes it: "20m", "90s", "1h30m", "1h 30m", "2.5m", or a bare number
    /// of minutes ("20"). Returns µs, nil when it is not one.
    static func parse(_ text: String) -> Int64? {
        let compact = text.lowercased().filter { !$0.isWhitespace }
        // Beyond what an `x` holds is simply too long (the daemon refuses more than a day), never a trap.
        func µs(_ seconds: Double) -> Int64 { seconds * 1_000_000 >= 9.2e18 ? .max : Int64(seconds * 1_000_000) }
        if let minutes = Double(compact), minutes.isFinite, minutes > 0 { return µs(minutes * 60) }
        var total = 0.0
        var number = ""
        var sawUnit = false
        for c in compact {
            if c.isNumber || c == "." {
                number.append(c)
                continue
            }
            guard let value = Double(number), value.isFinite else { return nil }
            switch c {
            case "h": total += value * 3_600
            case "m": total += value * 60
            case "s": total += value
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        guard sawUnit, number.isEmpty, total > 0, total.isFinite else { return nil }
        return µs(total)
    }
}
