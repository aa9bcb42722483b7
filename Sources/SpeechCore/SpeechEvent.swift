/// What happened to an utterance, each sent at the moment it is heard (not when it is synthesized).
///
/// For one utterance the order is: `started`, then `sentence`/`word` as reading goes on (with `paused` and
/// `resumed` in between), then exactly one of `finished`, `stopped`, or a fatal `error`. Offsets are Unicode
/// scalar offsets into `Utterance.text`.
public enum SpeechEvent: Equatable, Sendable {
    /// Reading of the utterance began.
    case started(utterance: UInt64)
    /// Sentence `index` (its range in the text) started to be heard.
    case sentence(utterance: UInt64, index: Int, range: Range<Int>)
    /// A word started to be heard.
    case word(utterance: UInt64, range: Range<Int>)
    /// Reading was paused (the stream corked).
    case paused(utterance: UInt64)
    /// Reading resumed where it paused.
    case resumed(utterance: UInt64)
    /// Reading was stopped before the end (Stop, or replaced by another text).
    case stopped(utterance: UInt64)
    /// The end of the text was heard.
    case finished(utterance: UInt64)
    /// Something went wrong. `fatal` false: one sentence was lost and reading goes on; true: reading ended.
    case error(utterance: UInt64, message: String, fatal: Bool)

    /// The utterance the event is about.
    public var utterance: UInt64 {
        switch self {
        case .started(let u), .sentence(let u, _, _), .word(let u, _), .paused(let u), .resumed(let u),
             .stopped(let u), .finished(let u), .error(let u, _, _):
            return u
        }
    }
}

/// What the owner of a `SpeechManager` must do, in order, after an input.
public enum SpeechAction: Equatable, Sendable {
    /// Discard any audio of what was playing, then synthesize and play `utterance` from sentence `sentence`
    /// (index into `Utterance.sentences`). When `corked`, the new stream starts corked (paused).
    case start(Utterance, sentence: Int, corked: Bool)
    /// The rate, pitch or voice of the utterance being read or paused changed to `utterance`'s (same id and text):
    /// keep the stream, its position and its state; keep the audio up to the next word not yet played, discard
    /// the rest, and synthesize from that word on with the new settings (where no word boundary is known,
    /// from the next sentence boundary). Position never moves back, and no seek is announced.
    case changeProsody(Utterance)
    /// More sentences of the utterance being read (or loaded) were cut from its text: `utterance` is it with
    /// them appended (same id, text and settings; `pendingText` what is left). Keep the stream and its
    /// position; synthesis goes on into the new sentences.
    case extend(Utterance)
    /// Cork the stream: silence at once, nothing discarded (PulseAudio `pa_stream_cork`).
    case cork
    /// Uncork the stream: continue at the exact next sample.
    case uncork
    /// Discard all queued audio at once and end synthesis (flush, never drain).
    case discard
    /// Announce an event to clients.
    case emit(SpeechEvent)
}

extension Array where Element == SpeechAction {
    /// Whether these actions change what clients are told of besides events: anything but words heard and
    /// more sentences cut (whose lengths are taken with the next change). The length is updated with them.
    public var changeLength: Bool {
        contains {
            switch $0 {
            case .emit(.word), .extend: return false
            default: return true
            }
        }
    }

    /// Whether these actions change nothing to announce, save or duck: words alone (comparing every property
    /// for a PropertiesChanged would cost more than the Word signal itself, several times a second), or more
    /// sentences of a text not complete yet (CanGoNext may turn false only when it is).
    public var isQuiet: Bool {
        !isEmpty && allSatisfy {
            switch $0 {
            case .emit(.word): return true
            case .extend(let u): return !u.isComplete
            default: return false
            }
        }
    }
}

/// Requests `SpeechManager` refuses.
public enum SpeechError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Toggle or Play with no text ever given.
    case nothingToPlay
    /// A sentence index outside the utterance.
    case noSuchSentence(Int)
    /// `speak(_:queue: true)` of a text of `adding` bytes (UTF-8) that does not fit in the queue, which holds
    /// `texts` texts of `bytes` bytes together (limits: `SpeechManager.maximumQueuedTexts`, `.maximumQueuedBytes`).
    case queueFull(texts: Int, bytes: Int, adding: Int)

    /// One line, for people.
    public var description: String {
        switch self {
        case .nothingToPlay: return "nothing to play: no text has been given yet"
        case .noSuchSentence(let i): return "no sentence \(i == .max ? "past the end" : String(i + 1)) in this text"
        case .queueFull(let texts, let bytes, let adding):
            let limit = "at most \(SpeechManager.maximumQueuedTexts) texts and \(SpeechManager.maximumQueuedBytes >> 20) MiB"
            if texts >= SpeechManager.maximumQueuedTexts {
                return "the queue is full: \(texts) texts wait (\(limit)); `lector stop` empties it"
            }
            return "no room in the queue for a text of \(Self.mebibytes(adding)): \(texts) text\(texts == 1 ? "" : "s") of "
                + "\(Self.mebibytes(bytes)) wait (\(limit)); `lector stop` empties it"
        }
    }

    /// `bytes` in MiB with one decimal, rounded up ("0.1 MiB" for a few bytes).
    private static func mebibytes(_ bytes: Int) -> String {
        let tenths = (bytes * 10 + (1 << 20) - 1) >> 20
        return "\(tenths / 10).\(tenths % 10) MiB"
    }
}
