import GLibKit
import LectorCommon
import LanguageDetection
import Segmentation
import SpeechCore
import Synthesis

/// Why a text cannot be read, with the D-Bus error name it travels as.
struct PrepareError: Error, CustomStringConvertible {
    var name: String
    var message: String
    var description: String { message }

    static func emptyText() -> PrepareError {
        PrepareError(name: Lector1.ErrorName.emptyText.rawValue, message: "nothing to read: the text is empty or only white space and control characters")
    }
    static func malformedSSML(_ error: MarkupError) -> PrepareError {
        PrepareError(name: Lector1.ErrorName.malformedSSML.rawValue, message: "malformed SSML: \(error)")
    }
    static func invalid(_ message: String) -> PrepareError {
        PrepareError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }
}

/// Turns text and options into an `Utterance`: cleans the text, detects the language of each paragraph when
/// none is given, matches languages to eSpeak NG voices, cuts the text into sentences. Shared by the daemon and the offline renderer so that both read alike.
final class UtterancePreparer {
    /// The installed voices, listed when first needed (the first request, or a configuration that names
    /// languages or voices): listing them opens eSpeak NG, which an idle daemon does not map. eSpeak NG's are
    /// listed once; Piper's are found again when a name is not found, or ListVoices is called, and a folder
    /// they are found in changed since (`Piper.Scan`: a few stat(2) calls), so that a voice installed while the
    /// daemon runs is used without a restart, and nothing is watched while the daemon is idle.
    var voices: [Voice] { matcher.voices }
    /// Matches BCP 47 tags to `voices`.
    var matcher: LanguageMatcher {
        if let built { return built }
        if findsPiperVoices, piperScan == nil { piperScan = Piper.Scan() }
        let matcher = LanguageMatcher(voices: fixedVoices + (piperScan?.voices ?? []))
        built = matcher
        return matcher
    }
    private lazy var fixedVoices: [Voice] = listVoices()
    private var piperScan: Piper.Scan?
    private var built: LanguageMatcher?
    private let findsPiperVoices: Bool
    private let listVoices: () -> [Voice]
    private let detector = LanguageDetector()
    private var nextID: UInt64 = 1

    /// The user's settings (default language, voice per language, rate, pitch); see `Configuration`.
    private(set) var configuration = Configuration()

    /// A preparer for the installed voices: eSpeak NG's (`VoiceCatalog.load()`), then Piper's (`Piper.Scan`),
    /// listed when first needed.
    init() {
        listVoices = { VoiceCatalog.load() }
        findsPiperVoices = true
    }

    /// A preparer for `voices` only (evaluated when first needed), never found again.
    init(voices: @escaping @autoclosure () -> [Voice]) {
        listVoices = voices
        findsPiperVoices = false
    }

    /// Finds Piper's voices again if a folder they are found in changed since they were last found; returns
    /// whether they changed.
    @discardableResult
    func refreshPiperVoices() -> Bool {
        guard findsPiperVoices, let scan = piperScan, !scan.isCurrent else { return false }
        let found = Piper.Scan()
        piperScan = found
        guard found.voices != scan.voices else { return false }
        built = nil
        return true
    }

    /// The voice with this name or identifier (`LanguageMatcher.voice(named:)`), looked for again among the
    /// Piper voices found now when it is not known (see `voices`).
    func voice(named name: String) -> Voice? {
        if let voice = matcher.voice(named: name) { return voice }
        return refreshPiperVoices() ? matcher.voice(named: name) : nil
    }

    /// The language `name` names, for a voice option that is no voice's name: a tag as a voice lists it
    /// ("en-GB-x-rp"), or a language alone or with its region ("de", "en-US", "pt_br", "zh-HK"), matched as
    /// `--lang` is; nil for anything else, so that a misspelt voice name is not taken for a language whose
    /// code it starts with ("no-such-voice" is not Norwegian).
    func voiceTag(_ name: String) -> LanguageMatch? {
        guard let m = try? matcher.match(name) else { return nil }
        let subtags = name.replacing("_", with: "-").lowercased().split(separator: "-", omittingEmptySubsequences: false)
        if m.tag.lowercased() == subtags.joined(separator: "-") { return m }
        func isLanguage(_ s: Substring) -> Bool { (2...3).contains(s.count) && s.allSatisfy { $0.isASCII && $0.isLetter } }
        func isRegion(_ s: Substring) -> Bool {
            (s.count == 2 && s.allSatisfy { $0.isASCII && $0.isLetter }) || (s.count == 3 && s.allSatisfy(\.isASCII) && s.allSatisfy(\.isNumber))
        }
        guard let first = subtags.first, isLanguage(first), subtags.count <= 2, subtags.dropFirst().allSatisfy(isRegion) else { return nil }
        return m
    }

    /// Reads the configuration file at `path` (by default `$XDG_CONFIG_HOME/lector/config`) and uses it from
    /// now on. Returns one line per problem found in it (each was ignored).
    func loadConfiguration(path: String = Configuration.defaultPath) -> [String] {
        let (config, problems) = Configuration.load(path: path, matcher: matcher)
        configuration = config
        defaultLanguageCache = nil
        return problems
    }

    private var defaultLanguageCache: LanguageMatch??

    /// The language to use when a request names none and detection is unsure: the configured one, else the
    /// locale's (LC_ALL, LC_MESSAGES, LANG), else English.
    var defaultLanguage: LanguageMatch? {
        if let cached = defaultLanguageCache { return cached }
        let found = findDefaultLanguage()
        defaultLanguageCache = .some(found)
        return found
    }

    private func findDefaultLanguage() -> LanguageMatch? {
        if let tag = configuration.language, let m = try? matcher.match(tag) { return m }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment(name), !value.isEmpty else { continue }
            let tag = String(value.prefix { $0 != "." && $0 != "@" })
            if tag == "C" || tag == "POSIX" { break }
            if let m = try? matcher.match(tag) { return m }
            break
        }
        return try? matcher.match("en")
    }

    /// The voice for `match` (found for the tag `requested`): the configured one for the requested tag or the
    /// matched one (`[voices]`), else the matcher's.
    private func voice(for match: LanguageMatch, requested: String?) -> Voice {
        let configured = requested.flatMap { configuration.voice(for: $0) } ?? configuration.voice(for: match.tag)
        return configured.flatMap { voice(named: $0) } ?? match.voice
    }

    /// Makes the utterance for `text` (already decoded; it is cleaned here), every sentence cut, with the
    /// languages its source declares (`declared`: `TextStructure.languages` and `.language`, see `prepareStart`).
    /// - Throws: `PrepareError` for empty text, an unknown language or voice, or a rate/pitch out of range.
    func prepare(_ text: String, options: SpeakOptions, declared: TextStructure? = nil) throws(PrepareError) -> Utterance {
        let (start, rest) = try prepareStart(text, options: options, firstSlice: Int.max, declared: declared)
        var utterance = start
        if let rest {
            while !rest.isDone { utterance.sentences += rest.next(approximately: Int.max) }
            utterance.voices += rest.takeNewVoices()
            utterance.pendingText = 0
        }
        return utterance
    }

    /// Makes the utterance for `text` (already decoded; it is cleaned here) with its first sentences only:
    /// about `firstSlice` scalars of it (to the next paragraph break), at least one sentence. The rest, if any,
    /// is returned to be cut later (`SentenceCutter.next`, then `SpeechManager.extend`); the utterance's
    /// `pendingText` says how much of it is left. SSML documents are always prepared whole. The utterance gets
    /// the next id, or `id` (the whole text of a file whose start was prepared under that id).
    ///
    /// The voice of each sentence, first rule that applies: the voice or language the request names (for the
    /// whole text; SSML's `xml:lang` comes next, then the default language); the language span of
    /// `declared.languages` (a document's `lang` marks, scalar ranges into the cleaned text) that holds it, when
    /// a voice speaks that language; the language detected for its paragraph; where detection is unsure, the
    /// document's language (`declared.language`), else the default language. A span boundary ends a sentence, so
    /// a sentence is read in one voice, and a phrase marked in another language inside a sentence is read as
    /// a piece of its own in that language.
    /// - Throws: `PrepareError` for empty text, an unknown language or voice, or a rate/pitch out of range.
    func prepareStart(_ text: String, options: SpeakOptions, firstSlice: Int, id: UInt64? = nil,
                      declared: TextStructure? = nil) throws(PrepareError) -> (Utterance, SentenceCutter?) {
        let (rate, pitch) = try prosody(options)
        let reading: ReadingSettings
        do { reading = try configuration.reading.changed(by: options.reading ?? "") } catch { throw .invalid(error.message) }
        var document: SSMLDocument?
        if options.ssml {
            do { document = try SSMLDocument.parse(TextCleaner.clean(text)) } catch { throw .malformedSSML(error) }
        }
        var cleaned = TextCleaner.clean(text)
        var sentences: [Sentence] = []
        var voices: [UtteranceVoice] = []
        var runs: [SentenceCutter.Run] = []
        var marks: [IndexMark] = []
        var detection: SentenceCutter.Detection?
        if document == nil && options.voice == nil && options.language == nil {
            // Each paragraph in its own (detected) language, unless its source marks one.
            detection = try detectingLanguages(of: cleaned, marked: declared?.languages ?? [], document: declared?.language)
        } else {
            let voice = try chosenVoice(options, requested: options.language ?? document?.language)
            voices = [voice]
            // SSML: one sentence per top-level <p>/<s> (see SSMLDocument); no detection, xml:lang says it.
            if let document { (cleaned, sentences, marks) = document.sentences } else {
                runs = [.init(range: 0..<Int.max, language: voice.language, voice: 0)] // to the end of the text
            }
        }
        var rest: SentenceCutter?
        if !runs.isEmpty || detection != nil {
            let total = SentenceCutter.scalarCount(of: cleaned)
            for i in runs.indices { runs[i].range = runs[i].range.clamped(to: 0..<total) }
            let cutter = SentenceCutter(text: cleaned, scalarCount: total, runs: runs, detecting: detection,
                                        segmenter: Segmenter(reading: reading))
            while sentences.isEmpty && !cutter.isDone { sentences = cutter.next(approximately: firstSlice) }
            if detection != nil { voices = cutter.takeNewVoices() }
            if !cutter.isDone { rest = cutter }
        }
        guard !sentences.isEmpty else { throw .emptyText() }
        // The first voice is the first sentence's (Utterance.language and voiceName report it).
        if sentences[0].voice != 0 {
            let first = sentences[0].voice
            voices.swapAt(0, first)
            for i in sentences.indices { sentences[i].voice = SentenceCutter.voice(sentences[i].voice, swappedWith: first) }
            rest?.swappedVoice = first
        }
        let assigned = id ?? nextID
        if id == nil { nextID += 1 }
        var utterance = Utterance(id: assigned, text: cleaned, sentences: sentences, voices: voices,
                                  rate: rate, pitch: pitch,
                                  title: options.title ?? TextCleaner.title(of: cleaned), url: options.url,
                                  pendingText: rest?.pendingText ?? 0)
        utterance.marks = marks
        return (utterance, rest)
    }

    /// The rate (wpm) and pitch of `options`, else the configuration's, else the defaults, checked.
    private func prosody(_ options: SpeakOptions) throws(PrepareError) -> (rate: Int, pitch: Int) {
        let rate = options.rate ?? configuration.rate ?? SpeakOptions.defaultRate
        do { try SpeakOptions.checkRate(rate) } catch { throw .invalid(error.description) }
        let pitch = options.pitch ?? configuration.pitch ?? SpeakOptions.defaultPitch
        do { try SpeakOptions.checkPitch(pitch) } catch { throw .invalid(error.description) }
        return (rate, pitch)
    }

    /// Language detection as `text` is cut: a 1 MB text is not detected whole (~0.2 s) before it is heard;
    /// unsure paragraphs take the `document` language when a voice speaks it, else the default language; the
    /// spans of `marked` take their own language when a voice speaks it (one log line per language that none
    /// does; detection decides there).
    private func detectingLanguages(of text: String, marked: [LanguageSpan],
                                    document: String?) throws(PrepareError) -> SentenceCutter.Detection {
        guard let fallback = document.flatMap({ try? matcher.match($0) }) ?? defaultLanguage else {
            throw PrepareError(name: Lector1.ErrorName.unknownLanguage.rawValue, message: "no eSpeak NG voice is installed")
        }
        return SentenceCutter.Detection(runs: LanguageRunReader(text: text, detector: detector), voice: { [unowned self] language in
            let m = language.flatMap { try? self.matcher.match($0) } ?? fallback
            let v = self.voice(for: m, requested: language)
            return UtteranceVoice(language: m.tag, name: v.name, engineVoice: v.identifier)
        }, marked: marked, markedVoice: { [unowned self] tag in
            guard let m = try? self.matcher.match(tag) else {
                if self.unvoicedLanguages.insert(tag).inserted {
                    Log.message("no voice speaks '\(tag)', marked in the text: its sentences are read in the language detected")
                }
                return nil
            }
            let v = self.voice(for: m, requested: tag)
            return UtteranceVoice(language: m.tag, name: v.name, engineVoice: v.identifier)
        })
    }

    /// Marked languages no voice speaks, each logged once.
    private var unvoicedLanguages: Set<String> = []

    /// The one voice of a text read in one language: `options.voice` (in `requested`'s language when given),
    /// else the voice for `requested`, else for the default language.
    private func chosenVoice(_ options: SpeakOptions, requested: String?) throws(PrepareError) -> UtteranceVoice {
        if let name = options.voice {
            guard let v = voice(named: name) else {
                // A language tag, as `lector voice` (SetVoice) takes one: that language's voice.
                if let m = voiceTag(name) {
                    let voice = self.voice(for: m, requested: name)
                    return UtteranceVoice(language: m.tag, name: voice.name, engineVoice: voice.identifier)
                }
                throw PrepareError(name: Lector1.ErrorName.unknownVoice.rawValue, message: "unknown voice '\(name)'; `lector voices` lists them")
            }
            let language = try requested.map { tag throws(PrepareError) in try match(tag).tag } ?? (v.languages.first ?? "und")
            return UtteranceVoice(language: language, name: v.name, engineVoice: v.identifier)
        }
        let m: LanguageMatch
        if let tag = requested { m = try match(tag) } else {
            guard let d = defaultLanguage else {
                throw PrepareError(name: Lector1.ErrorName.unknownLanguage.rawValue, message: "no eSpeak NG voice is installed")
            }
            m = d
        }
        let voice = self.voice(for: m, requested: requested)
        return UtteranceVoice(language: m.tag, name: voice.name, engineVoice: voice.identifier)
    }

    private func match(_ tag: String) throws(PrepareError) -> LanguageMatch {
        do { return try matcher.match(tag) } catch {
            throw PrepareError(name: Lector1.ErrorName.unknownLanguage.rawValue, message: error.description)
        }
    }
}

/// The part of a text not cut into sentences yet: its language runs, cut a slice at a time in order
/// (`Segmenter.sentences(of:from:offset:upTo:approximately:language:)`), so that a long text is read while
/// the rest is being prepared.
final class SentenceCutter {
    /// For a text whose languages are detected as it is cut: where the next runs come from, the voice each
    /// detected language (nil: unsure) is read with, the spans its source marks in a language (sorted, not
    /// overlapping), and the voice of a marked language (nil: none speaks it, detection decides).
    struct Detection {
        var runs: LanguageRunReader
        var voice: (String?) -> UtteranceVoice
        var marked: [LanguageSpan] = []
        var markedVoice: (String) -> UtteranceVoice? = { _ in nil }
    }

    /// A stretch of the text read in one language: its range in scalars, its BCP 47 tag, and its voice (an
    /// index into the utterance's voices).
    struct Run {
        var range: Range<Int>
        var language: String
        var voice: Int
        /// For a detected run, the language detection gave (`.some(nil)`: unsure); nil for a run given at the start.
        var detected: String?? = nil
        /// For a run its source marks in a language that a voice speaks: that language as marked.
        var marked: String? = nil
    }

    /// The whole text (cleaned), shared with the utterance (not copied).
    let text: String
    private let segmenter: Segmenter
    /// The runs known and not cut yet, in order.
    private var runs: [Run]
    /// Detection as the text is cut (nil: the runs are known at the start).
    private let detection: Detection?
    /// The voices of the detected runs so far (`Run.voice` indexes it), and how many of them the utterance has.
    private var voices: [UtteranceVoice] = []
    private var voicesTaken = 0
    /// The first marked span that may still hold text not cut into runs.
    private var nextMark = 0
    /// The voices of the marked languages seen so far (nil: none speaks it).
    private var markedVoices: [String: UtteranceVoice?] = [:]
    private let total: Int
    /// The next slice starts here: an index of `text.unicodeScalars` and its offset in scalars.
    private var index: String.Index
    private var offset = 0
    /// When the utterance's first voice was swapped with this one (see `UtterancePreparer.prepareStart`), the
    /// sentences cut later are mapped the same way.
    var swappedVoice: Int?

    /// A cutter for `runs` (in order, not overlapping) of `text`, which has `scalarCount` scalars, and, with
    /// `detecting`, for the runs its reader detects as the cutter goes, each read with the voice it chooses
    /// for the run's language (nil: detection was unsure); those voices come out of `takeNewVoices()`, in the
    /// order of the indices the sentences give.
    init(text: String, scalarCount: Int, runs: [Run], detecting detection: Detection? = nil, segmenter: Segmenter) {
        self.text = text
        self.runs = runs
        self.detection = detection
        self.segmenter = segmenter
        total = scalarCount
        index = text.unicodeScalars.startIndex
    }

    /// Every run is cut.
    var isDone: Bool { runs.isEmpty && (detection?.runs.isDone ?? true) }

    /// The voices found since the last call (none for a cutter made with its runs): the utterance's next
    /// voices, which the sentences cut so far may name.
    func takeNewVoices() -> [UtteranceVoice] {
        defer { voicesTaken = voices.count }
        return Array(voices[voicesTaken...])
    }

    /// The next detected runs, at least about `length` scalars of text (to the end of a paragraph, or of a
    /// piece of at most `Paragraphs.maximumLength` scalars). The first is merged into the last known run when
    /// both are in the same detected language, as when the text is detected whole.
    private func detectRuns(_ length: Int) {
        guard let detection else { return }
        for run in detection.runs.next(approximately: length) {
            for (range, mark) in pieces(of: run.range.clamped(to: 0..<total), marks: detection.marked) {
                let markedVoice = mark.flatMap { tag in
                    markedVoices[tag] ?? { let v = detection.markedVoice(tag); markedVoices[tag] = .some(v); return v }()
                }
                let voice = markedVoice ?? detection.voice(run.language)
                let index = voices.firstIndex(of: voice) ?? voices.count
                // A run goes on in the next piece read in the same detected language; and, where either is
                // marked, in a piece read by the same engine voice (`lang="en-GB"` in English read by that voice
                // does not cut a sentence).
                if let last = runs.indices.last,
                   markedVoice == nil && runs[last].marked == nil && runs[last].detected == .some(run.language)
                    || (markedVoice != nil || runs[last].marked != nil) && voices[runs[last].voice].engineVoice == voice.engineVoice {
                    runs[last].range = runs[last].range.lowerBound..<range.upperBound
                    continue
                }
                if index == voices.count { voices.append(voice) }
                runs.append(Run(range: range, language: voice.language, voice: index, detected: .some(run.language),
                                marked: markedVoice == nil ? nil : mark))
            }
        }
    }

    /// `range` cut where the marked spans `marks` (sorted, not overlapping) begin and end: each piece with the
    /// language its span marks, nil outside them. Pieces come in order; so must the ranges asked about.
    private func pieces(of range: Range<Int>, marks: [LanguageSpan]) -> [(Range<Int>, String?)] {
        var found: [(Range<Int>, String?)] = []
        var at = range.lowerBound
        while at < range.upperBound {
            while nextMark < marks.count, marks[nextMark].range.upperBound <= at { nextMark += 1 }
            if nextMark < marks.count, marks[nextMark].range.lowerBound <= at {
                let end = min(marks[nextMark].range.upperBound, range.upperBound)
                found.append((at..<end, marks[nextMark].language))
                at = end
            } else {
                let end = nextMark < marks.count ? min(marks[nextMark].range.lowerBound, range.upperBound) : range.upperBound
                found.append((at..<end, nil))
                at = end
            }
        }
        return found
    }

    /// Scalars of the text not cut yet (0 when done).
    var pendingText: Int { isDone ? 0 : total - offset }

    /// The sentences of the next slice of about `length` scalars (to a paragraph break, within one run; may
    /// be none when the slice has nothing readable), with their voices; ranges in scalars of `text`.
    func next(approximately length: Int) -> [Sentence] {
        if runs.isEmpty { detectRuns(length) }
        guard var run = runs.first else { return [] }
        let scalars = text.unicodeScalars
        if offset < run.range.lowerBound {
            index = scalars.index(index, offsetBy: run.range.lowerBound - offset)
            offset = run.range.lowerBound
        }
        var slice = segmenter.sentences(of: text, from: index, offset: offset, upTo: run.range.upperBound,
                                        approximately: length, language: run.language)
        // A slice that reaches the end of the last run known may have cut a sentence there (a long paragraph
        // detected in pieces ends a run mid-line): the runs that follow are detected first, and when the
        // language goes on, the run is longer and the slice is cut again.
        while slice.nextOffset >= run.range.upperBound, slice.next != scalars.endIndex, runs.count == 1,
              detection?.runs.isDone == false {
            detectRuns(length)
            guard runs[0].range.upperBound > run.range.upperBound else { break }
            run = runs[0]
            slice = segmenter.sentences(of: text, from: index, offset: offset, upTo: run.range.upperBound,
                                        approximately: length, language: run.language)
        }
        var found = slice.sentences
        index = slice.next
        offset = slice.nextOffset
        if offset >= run.range.upperBound || index == scalars.endIndex { runs.removeFirst() }
        let voice = swappedVoice.map { Self.voice(run.voice, swappedWith: $0) } ?? run.voice
        for i in found.indices { found[i].voice = voice }
        return found
    }

    /// `voice` once the utterance's voices 0 and `first` have traded places.
    static func voice(_ voice: Int, swappedWith first: Int) -> Int {
        voice == 0 ? first : voice == first ? 0 : voice
    }

    /// The number of Unicode scalars in `text`, counted on its UTF-8 bytes: every byte but a continuation byte
    /// (0b10xxxxxx) starts a scalar. Eight bytes at a time: a tenth of the cost of walking the scalar view.
    static func scalarCount(of text: String) -> Int {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var continuations = 0
            var i = 0
            while i + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                // 1 in each byte with bit 7 set and bit 6 clear; the multiplication sums the bytes into the top one.
                let flags = (word & ~(word << 1) & 0x8080_8080_8080_8080) >> 7
                continuations += Int((flags &* 0x0101_0101_0101_0101) >> 56)
                i += 8
            }
            while i < raw.count {
                if raw[i] & 0xC0 == 0x80 { continuations += 1 }
                i += 1
            }
            return raw.count - continuations
        } ?? text.unicodeScalars.count
    }
}
