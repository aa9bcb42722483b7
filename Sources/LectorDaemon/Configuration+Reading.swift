import GLibKit
import SpeechCore

extension Configuration {
    /// `[reading]`: each of `ReadingSettings.names` = one of its values; a bad one is reported and the default kept.
    mutating func readReading(_ file: KeyFile, report: (String, String?, String) -> Void) {
        let group = "reading"
        for key in file.keys(inGroup: group) {
            let raw = (file.string(key, inGroup: group) ?? "").split(separator: " ").joined()
            do { try reading.set(key, to: raw) } catch {
                let fallback = ReadingSettings().value(of: key).map { "; using \($0)" } ?? "; ignored"
                report(group, key, error.message + fallback)
            }
        }
    }
}
