@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore

/// The sleep timer: reading pauses at a deadline, or at the end of the paragraph being read, after fading out
/// over the last 5 s. It pauses rather than stops, so that Play continues where the listener fell asleep.
///
/// A deadline counts wall-clock time from when it was set, whether reading or not; at the end of a paragraph
/// means the end of the paragraph (text up to the next blank line) being read when the timer was set. The
/// timer ends (and is off) once it has paused reading, when a new text replaces the one it was set on, and on
/// Stop.
final class SleepTimer {
    /// How long the fade-out lasts before the timer pauses, in µs.
    static let fadeMicroseconds: Int64 = 5_000_000
    /// Steps of the fade, in ms.
    static let fadeStepMilliseconds: UInt32 = 100

    enum Mode: Equatable {
        case off
        /// Pauses at `deadline` (monotonic µs); `wallClock` is the same moment in µs since the Unix epoch.
        case at(deadline: Int64, wallClock: Int64)
        /// Pauses once sentence `lastSentence` of utterance `utterance` has been heard.
        case paragraphEnd(utterance: UInt64, lastSentence: Int)
    }

    private(set) var mode: Mode = .off
    /// Something clients show changed (the mode).
    var onChange: (() -> Void)?

    private let engine: ReadingEngine
    private var timer: Source?
    private var fadeFrom: (start: Int64, end: Int64)?

    init(engine: ReadingEngine) {
        self.engine = engine
    }

    /// Pauses reading `microseconds` from now (a new timer replaces the old one).
    /// - Throws: `DBusError.invalidArgs` for a duration that is not positive or longer than a day.
    func pause(after microseconds: Int64) throws(DBusError) {
        guard microseconds > 0, microseconds <= 86_400_000_000 else {
            throw .invalidArgs("the sleep timer takes a duration from 1 s to 24 h")
        }
        reset()
        let now = MainContext.monotonicMicroseconds
        mode = .at(deadline: now + microseconds, wallClock: Self.wallClock() + microseconds)
        schedule()
        onChange?()
    }

    /// Pauses reading at the end of the paragraph being read.
    /// - Throws: `DBusError` org.lector.Lector1.Error.NothingToPlay when nothing is being read or paused.
    func pauseAtParagraphEnd() throws(DBusError) {
        if engine.manager.current?.isComplete == false { engine.prepareRest?() } // the paragraph's end may not be cut yet
        let m = engine.manager
        guard let u = m.current, m.state != .stopped, !u.sentences.isEmpty else {
            throw DBusError(name: Lector1.ErrorName.nothingToPlay.rawValue, message: "nothing is being read")
        }
        reset()
        mode = .paragraphEnd(utterance: u.id, lastSentence: Self.lastSentenceOfParagraph(in: u, from: m.sentenceIndex))
        schedule()
        onChange?()
    }

    /// Turns the timer off (the volume comes back if it was fading).
    func cancel() {
        guard mode != .off else { return }
        reset()
        onChange?()
    }

    /// Follows reading: the paragraph end is reached when a later sentence is heard; a new text or Stop ends a
    /// paragraph timer; every sentence refines when the fade starts.
    func observe(_ event: SpeechEvent) {
        guard case .paragraphEnd(let utterance, let last) = mode else { return }
        switch event {
        case .sentence(let u, let index, _) where u == utterance && index > last:
            finish()
        case .sentence(let u, _, _) where u == utterance:
            schedule()
        case .stopped(let u), .finished(let u), .error(let u, _, true):
            if u == utterance { cancel() }
        case .started(let u) where u != utterance:
            cancel()
        default:
            break
        }
    }

    /// What `lector status` and the MPRIS metadata show: nil when off, else "until 23:40" or
    /// "at the end of this paragraph".
    var description: String? {
        switch mode {
        case .off: return nil
        case .paragraphEnd: return SleepTimerText.describe(mode: "paragraph", wallClock: 0)
        case .at(_, let wallClock): return SleepTimerText.describe(mode: "time", wallClock: wallClock)
        }
    }

    /// The D-Bus form (property SleepTimer, `(sx)`): ("off", 0), ("time", deadline in µs since the Unix epoch),
    /// ("paragraph", 0).
    var dbusValue: Variant {
        switch mode {
        case .off: return .tuple([.string("off"), .int64(0)])
        case .at(_, let wallClock): return .tuple([.string("time"), .int64(wallClock)])
        case .paragraphEnd: return .tuple([.string("paragraph"), .int64(0)])
        }
    }

    // MARK: - Internals

    /// The index of the last sentence of the paragraph holding sentence `index`: the last one that starts
    /// before the next blank line (a line break, optional white space, another line break).
    static func lastSentenceOfParagraph(in u: Utterance, from index: Int) -> Int {
        let scalars = Array(u.text.unicodeScalars)
        let start = u.sentences[min(index, u.sentences.count - 1)].range.lowerBound
        var end = scalars.count
        var i = start
        var sawBreak = false
        while i < scalars.count {
            let c = scalars[i]
            if c == "\n" || c == "\u{2029}" {
                if sawBreak || c == "\u{2029}" { end = i; break }
                sawBreak = true
            } else if !(c == " " || c == "\t" || c == "\r") {
                sawBreak = false
            }
            i += 1
        }
        var last = index
        while last + 1 < u.sentences.count && u.sentences[last + 1].range.lowerBound < end { last += 1 }
        return last
    }

    /// µs from now until reading should pause, as far as known now.
    private func remaining() -> Int64? {
        switch mode {
        case .off: return nil
        case .at(let deadline, _): return deadline - MainContext.monotonicMicroseconds
        case .paragraphEnd(_, let last):
            let end = engine.startSample(of: last + 1) * 1_000_000 / Int64(engine.sampleRate)
            return end - engine.position
        }
    }

    /// Arms the one timer: at the start of the fade (no wake-ups before it), then every fade step.
    private func schedule() {
        timer?.cancel()
        timer = nil
        guard let left = remaining() else { return }
        if case .at = mode, left <= 0 { return finish() }
        if left > Self.fadeMicroseconds {
            fadeFrom = nil
            engine.playback.setFade(1)
            let wait = UInt32(min(Int64(UInt32.max), (left - Self.fadeMicroseconds) / 1_000 + 1))
            timer = MainContext.timeout(milliseconds: wait) { [unowned self] in
                self.timer = nil
                self.schedule()
                return false
            }
            return
        }
        let now = MainContext.monotonicMicroseconds
        if fadeFrom == nil { fadeFrom = (now, now + max(left, 1)) }
        timer = MainContext.timeout(milliseconds: Self.fadeStepMilliseconds) { [unowned self] in self.step() }
        step(rearm: false)
    }

    /// One step of the fade; true to be called again.
    @discardableResult
    private func step(rearm: Bool = true) -> Bool {
        guard let left = remaining(), let fade = fadeFrom else { return false }
        if case .at = mode, left <= 0 {
            timer = nil
            finish()
            return false
        }
        // Only while reading does the fade move; a paused listener hears nothing anyway.
        guard engine.manager.state == .reading else { return rearm }
        let now = MainContext.monotonicMicroseconds
        let total = Double(max(fade.end - fade.start, 1))
        let gain = max(0, min(1, Double(fade.end - now) / total))
        engine.playback.setFade(gain)
        return rearm
    }

    /// The moment has come: pause (if reading), put the volume back for the next Play, turn off.
    private func finish() {
        let wasReading = engine.manager.state == .reading
        if wasReading { try? engine.apply { m in m.pause() } }
        Log.message(wasReading ? "sleep timer: reading paused" : "sleep timer ended")
        reset()
        onChange?()
    }

    private func reset() {
        timer?.cancel()
        timer = nil
        fadeFrom = nil
        mode = .off
        engine.playback.setFade(1)
    }

    private static func wallClock() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000
    }
}
