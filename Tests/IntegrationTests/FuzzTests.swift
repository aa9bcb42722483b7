import GLibKit
import Foundation
import Testing

extension Integration {
    /// The engine fed what real texts contain at their worst: punctuation runs, endless words, mixed scripts,
    /// numbers written the ways many languages write them. eSpeak NG aborts on some of it; the daemon must not
    /// care beyond the one sentence.
    @Suite(.privateSession)
    struct EngineFuzz {
        /// A seeded generator (a 64-bit linear congruential generator), so a failure can be replayed.
        struct Generator {
            var state: UInt64
            mutating func next(_ bound: Int) -> Int {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Int(truncatingIfNeeded: state >> 33) % max(bound, 1)
            }
            mutating func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
        }

        static let punctuation = Array("'\".,;:!?-()[]{}…—–/\\*&%$#@^~`|<>«»„“”‘’¡¿·•")
        static let words = [
            "hello", "Straße", "naïve", "résumé", "привет", "мир", "καλημέρα", "שלום", "مرحبا", "नमस्ते", "สวัสดี",
            "你好", "世界", "こんにちは", "안녕하세요", "ሰላም", "გამარჯობა", "Ελλάδα", "😀", "👩‍👩‍👧‍👦", "🇫🇷", "x²", "½", "ﬁ",
            "e\u{301}", "a\u{300}\u{301}\u{302}", "\u{200B}", "\u{FEFF}", "\u{202E}text", "I'm", "rock'n'roll",
        ]
        static let numbers = [
            "1,234,567.89", "1.234.567,89", "1 234 567,89", "12e45", "-0.0001", "3/4", "10^100", "٠١٢٣٤٥٦٧٨٩",
            "०१२३४५६७८९", "〇一二三", "๑๒๓", "MMXXVI", "99999999999999999999999999999999", "1st", "2nd", "3.", "№5",
            "1:30", "12:45:59", "2026-12-01", "+49 30 123456", "0x1F", "1e-9", "∞", "π", "$1,000", "€5", "50%",
        ]
        static let languages = ["en", "de", "fr", "es", "ru", "ar", "hi", "zh", "el", "he", "th", "pt-BR", "pl", "tr", "vi", "ja", "ko", "fi"]

        static func text(_ g: inout Generator) -> String {
            switch g.next(5) {
            case 0:
                return String((0..<(1 + g.next(400))).map { _ in g.pick(punctuation) })
            case 1:
                let letter = g.pick(Array("abcdefghijklmnopqrstuvwxyzäöüßжщ字"))
                return String(repeating: String(letter), count: 20 + g.next(3000))
            case 2:
                return (0..<(1 + g.next(30))).map { _ in g.pick(words) }.joined(separator: g.pick([" ", "", "-", ", ", ". "]))
            case 3:
                return (0..<(1 + g.next(20))).map { _ in g.pick(numbers) }.joined(separator: g.pick([" ", ", ", "; ", ""]))
            default:
                // All of it at once, with the apostrophe run that aborts libespeak-ng 1.51 now and then.
                var parts: [String] = []
                for _ in 0..<(1 + g.next(8)) {
                    switch g.next(4) {
                    case 0: parts.append(String(repeating: "s'", count: 50 + g.next(300)))
                    case 1: parts.append(g.pick(numbers))
                    case 2: parts.append(g.pick(words))
                    default: parts.append(String((0..<(1 + g.next(40))).map { _ in g.pick(punctuation) }))
                    }
                }
                return parts.joined(separator: " ")
            }
        }

        @Test("1,000 generated texts: the daemon never dies, every crash is one log line naming its sentence, the sentence after a crash is read")
        func generatedTexts() async throws {
            let session = try await world()
            let bus = try BusConnection(address: session.busAddress)
            let owner = try #require(bus.owner(Abuse.lectorDest))
            var g = Generator(state: 0xF022_2026)
            var refused = 0, sandwiches = 0
            var problems: [String] = []
            for i in 0..<1_000 {
                // Every 40th text sits between two plain sentences: the one after it must still be read. It is
                // a short one (a 3,000-letter word is spelled out for minutes; those are in the other texts).
                let sandwich = i % 40 == 0
                var body = Self.text(&g)
                while sandwich && body.unicodeScalars.count > 200 { body = Self.text(&g) }
                let language = g.pick(Self.languages)
                let text = sandwich ? "Before it comes this. \(body)\n\nAfter it, the end." : body
                let options = Variant.vardict(["language": .string(language), "rate": .int32(450)])
                let reply = bus.call(Abuse.lectorDest, Abuse.lectorPath, Abuse.lectorInterface, "Speak",
                                     arguments: [.string(text), options], timeoutMs: 10_000)
                if reply.value == nil {
                    if !Abuse.isProperError(reply) { problems.append("#\(i) Speak → \(reply)") }
                    refused += 1
                    continue
                }
                // A sandwich: wait until it is heard, or over (finished, or its only sentence lost). Another
                // text: only until the daemon answers Position, so that the next text replaces it at once.
                let deadline = ContinuousClock.now + .seconds(sandwich ? 30 : 5)
                var heardLast = false
                while ContinuousClock.now < deadline {
                    guard let state = bus.lectorState else {
                        problems.append("#\(i) the daemon does not answer")
                        break
                    }
                    if sandwich {
                        // The sentence being heard, as text: has the one after the fuzz come?
                        if state == "reading", let s = bus.lectorSentence, let whole = bus.lectorText {
                            let scalars = Array(whole.unicodeScalars)
                            let lo = min(s.start, scalars.count), hi = min(s.start + s.length, scalars.count)
                            if String(String.UnicodeScalarView(scalars[lo..<hi])).hasPrefix("After it") { heardLast = true }
                        }
                        if state == "stopped" { break }
                    } else if state == "stopped" || bus.lectorPosition != nil {
                        break
                    }
                    try await Task.sleep(for: .milliseconds(sandwich ? 20 : 5))  // the watch's sampling period
                }
                if sandwich {
                    sandwiches += 1
                    if bus.lectorState != "stopped" { problems.append("#\(i) never ended: \(text.prefix(80))") }
                    if !heardLast { problems.append("#\(i) the sentence after the fuzz was not read: \(text.prefix(120).debugDescription)") }
                }
                if bus.owner(Abuse.lectorDest) != owner {
                    problems.append("#\(i) the daemon lost its name on: \(text.prefix(120).debugDescription)")
                    break
                }
                if problems.count > 5 { break }
            }
            #expect(problems.isEmpty, "\(problems)\n\(session.daemonLogs())")
            #expect(refused < 500, "\(refused) of 1,000 refused")
            #expect(sandwiches >= 20, "only \(sandwiches) texts between plain sentences were read")

            // Every engine crash was one line that names its sentence.
            let log = session.daemonLogs(limit: 2_000_000)
            let crashLines = log.split(separator: "\n").filter { $0.contains("synthesis") && $0.contains("skipped it") }
            for line in crashLines {
                #expect(line.contains("on sentence "), "\(line)")
            }
            _ = bus.lector("Stop")
            try await session.quiesce()
            let (read, audio) = try await session.readAndRecord(["hello"])
            #expect(read.status == 0 && audio.audibleDuration > 0.2, "\(read) \(audio.summary)")
        }

        /// A text of plain sentences, one paragraph each, with engine crashes among them (never two in a row)
        /// when `crashes`; as an SSML document of `<p>` units with character references to control characters
        /// when `ssml`. Returns the text and its number of sentences.
        static func paragraphs(_ g: inout Generator, crashes: Bool, ssml: Bool) -> (text: String, count: Int) {
            var units: [String] = []
            let count = 3 + g.next(4)
            for n in 0..<count {
                let crash = crashes && n > 0 && n < count - 1 && g.next(2) == 0 && !(units.last?.hasPrefix("s'") ?? false)
                if crash {
                    units.append(String(repeating: "s'", count: 220 + g.next(100)))
                } else {
                    units.append("Sentence \(n + 1) says \(g.pick(["hello", "good night", "twelve", "yes"])).")
                }
            }
            guard ssml else { return (units.joined(separator: "\n\n"), count) }
            let body = units.map { "<p>\($0)\(g.next(3) == 0 ? " &#1;20A &#27;[31m" : "")</p>" }.joined()
            return ("<speak>\(body)</speak>", count)
        }

        @Test("16 texts of several sentences, with crashing sentences in the middle, SSML, and the worker killed at random moments: every text read to its last sentence, one worker, every call answered")
        func crashesKillsAndSSML() async throws {
            let session = try await world()
            let bus = try BusConnection(address: session.busAddress)
            let pid = try Load.daemonPID(bus)
            var g = Generator(state: 0x17_2026)
            var problems: [String] = []
            var kills = 0, slowest = 0.0, mostWorkers = 0
            for i in 0..<16 {
                let ssml = g.next(3) == 0
                let kill = g.next(3) == 0
                let (text, count) = Self.paragraphs(&g, crashes: !kill, ssml: ssml)
                let options = Variant.vardict(["language": .string("en"), "rate": .int32(450), "ssml": .bool(ssml)])
                let reply = bus.call(Abuse.lectorDest, Abuse.lectorPath, Abuse.lectorInterface, "Speak",
                                     arguments: [.string(text), options], timeoutMs: 10_000)
                if reply.value == nil { problems.append("#\(i) Speak → \(reply)"); continue }
                let killAt = ContinuousClock.now + .milliseconds(g.next(400))
                var killed = !kill
                var last = 0
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    let asked = ContinuousClock.now
                    let state = bus.lectorState
                    slowest = max(slowest, seconds(ContinuousClock.now - asked))
                    guard let state else { problems.append("#\(i) the daemon does not answer"); break }
                    let workers = Load.children(pid)
                    mostWorkers = max(mostWorkers, workers.count)
                    if !killed && ContinuousClock.now >= killAt, let worker = workers.first {
                        _ = Foundation.kill(worker, SIGKILL)
                        killed = true
                        kills += 1
                    }
                    if state == "reading", let sentence = bus.lectorSentence, let whole = bus.lectorText {
                        let scalars = Array(whole.unicodeScalars)
                        let lo = min(sentence.start, scalars.count), hi = min(sentence.start + sentence.length, scalars.count)
                        let heard = String(String.UnicodeScalarView(scalars[lo..<hi]))
                        if let n = (1...count).last(where: { heard.contains("Sentence \($0) says") }) { last = max(last, n) }
                    }
                    if state == "stopped" { break }
                    try await Task.sleep(for: .milliseconds(10))  // the watch's sampling period
                }
                if last != count && !(kill && last == count - 1) {
                    // A kill may take the last sentence itself; nothing else may keep it from being read.
                    problems.append("#\(i) read to sentence \(last) of \(count): \(text.prefix(200).debugDescription)")
                }
                if problems.count > 3 { break }
            }
            print("crashes, kills and SSML: \(kills) kills, slowest answer \(String(format: "%.3f", slowest)) s, at most \(mostWorkers) workers")
            #expect(problems.isEmpty, "\(problems)\n\(session.daemonLogs())")
            #expect(slowest < 1 && mostWorkers <= 1, "slowest answer \(slowest) s, \(mostWorkers) workers at once")
            #expect(kills >= 3)
        }
    }
}
