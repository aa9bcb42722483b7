import LectorCommon

/// What the module asks of Lector's daemon (org.lector.Lector1).
public enum DaemonRequest: Equatable, Sendable {
    /// Speak `document` (SSML) with `options`; the driver answers with `ModuleCore.spoke`.
    case speak(document: String, options: SpeakOptions)
    /// Stop, when `utterance` is the one being read.
    case stop(UInt64)
    /// Pause, when `utterance` is the one being read.
    case pause(UInt64)
    /// Resume the paused `utterance`.
    case resume(UInt64)
    /// ListVoices; the driver answers with `ModuleCore.listed`.
    case listVoices
}

/// What the daemon told about an utterance (its signals, by the utterance's id).
public enum DaemonEvent: Equatable, Sendable {
    /// Started: the first sound was heard.
    case started
    /// Paused: the stream was corked.
    case paused
    /// Resumed: the stream plays again.
    case resumed
    /// Stopped: Stop, or another text replaced it.
    case stopped
    /// Finished: its end was heard.
    case finished
    /// An SSML mark was heard.
    case mark(String)
    /// Reading ended on a failure (a fatal Error signal).
    case failed(String)
}

/// What the driver does for the core: write lines to Speech Dispatcher, call the daemon, log, arm a time-out,
/// or end.
public enum ModuleAction: Equatable, Sendable {
    /// Lines for standard output, in order (each ends with `\n` when written).
    case send([String])
    /// A call to the daemon.
    case request(DaemonRequest)
    /// One line for standard error (the server's log of the module).
    case log(String)
    /// Call `ModuleCore.timedOut` with this deadline after `ModuleCore.answerMilliseconds`.
    case deadline(ModuleDeadline)
    /// End the module (after QUIT's reply).
    case quit
}

/// A command whose answer (an event) the daemon owes: STOP's 703 or PAUSE's 704 for the message with that serial
/// (`ModuleCore.messageSerial`).
public enum ModuleDeadline: Hashable, Sendable {
    case stop(UInt64)
    case pause(UInt64)
}

/// The output module's state machine: Speech Dispatcher's commands and the daemon's events in, replies,
/// events and daemon calls out. Pure: no I/O.
///
/// One message at a time (the server sends a new one only after END, STOP or PAUSE). Events go out in the
/// order the protocol requires: BEGIN (701) first, INDEX MARK (700) as marks are heard, then exactly one of
/// END (702), STOP (703) or PAUSE (704). STOP and PAUSE map to Lector's Stop and Pause (exact, at once);
/// speech-dispatcher resumes a paused message by sending its text again from the last `__spd_` mark
/// heard: when Lector still holds the paused utterance and the new text is the end of it, the module resumes
/// it (Resume: from the exact sample) instead of reading it again. A pause from elsewhere (a media key)
/// is not reported: the server would otherwise think the message ended.
public struct ModuleCore: Sendable {
    private struct Message: Sendable {
        var serial: UInt64
        var id: UInt64?
        var content: String
        var kind: MessageKind
        var begun = false
        var stopAsked = false
        var pauseAsked = false
        var resuming = false
        var triedWithoutLanguage = false
    }
    private var settings = VoiceSettings()
    private var message: Message?
    /// A message paused at speech-dispatcher's request, still held (paused) by the daemon. A resent message
    /// resumes it when its words end the held one's (`SSML.resumeWords`): speech-dispatcher 0.11.4 resends a
    /// message paused before its first mark with its markup escaped as text (`&lt;speak&gt;…`), and its
    /// symbols preprocessing then turns that markup and the punctuation into words and spaces.
    private var paused: (id: UInt64, content: String)?
    /// Events of utterances whose id is not known yet (the Speak reply comes after them), at most 64.
    private var early: [(UInt64, DaemonEvent)] = []
    /// The serial of the last message sent to the daemon (one per SPEAK, CHAR, KEY or SOUND_ICON).
    public private(set) var messageSerial: UInt64 = 0

    /// How long the daemon has to answer STOP or PAUSE with its Stopped or Paused signal, and Speak with its
    /// reply (`speakMilliseconds`), before the module answers speech-dispatcher itself: a daemon that hangs
    /// (SIGSTOP, a deadlock) must not leave the server waiting for ever for an event it waits for.
    public static let answerMilliseconds = 1000
    /// How long Speak's reply may take (a message of 128 KiB is prepared in well under a second).
    public static let speakMilliseconds: Int32 = 5000

    /// A core with the default settings and no message.
    public init() {}

    /// Whether a message is being spoken (BEGIN sent or about to be, no END/STOP/PAUSE yet).
    public var isSpeaking: Bool { message != nil }

    /// The actions for a command from Speech Dispatcher.
    public mutating func handle(_ command: ModuleCommand) -> [ModuleAction] {
        switch command {
        case .initialize:
            return [.send(["299-Lector: speech through Lector's daemon (org.lector.Lector)", "299 OK LOADED SUCCESSFULLY"])]
        case .speak(let kind, let data): return speak(kind, data)
        case .set(let values):
            return [.send([settings.apply(values) ? "203 OK SETTINGS RECEIVED" : "303 ERROR INVALID PARAMETER OR VALUE"])]
        case .audio(let values):
            // speech-dispatcher first offers to play the audio itself ("server"); Lector's daemon plays it, so
            // the module refuses, and the server then leaves playback and its events to the module.
            if values["audio_output_method"] == "server" { return [.send(["303 ERROR INVALID PARAMETER OR VALUE"])] }
            return [.send(["203 OK AUDIO INITIALIZED"])]
        case .logLevel: return [.send(["203 OK LOGLEVEL SET"])]
        case .debug(let on): return [.send(["200 OK DEBUGGING \(on ? "ON" : "OFF")"])]
        case .listVoices: return [.request(.listVoices)]
        case .stop:
            guard var m = message else { return [] }
            m.stopAsked = true
            message = m
            return (m.id.map { [.request(.stop($0))] } ?? []) + [.deadline(.stop(m.serial))]
        case .pause:
            guard var m = message else { return [] }
            m.pauseAsked = true
            message = m
            return (m.id.map { [.request(.pause($0))] } ?? []) + [.deadline(.pause(m.serial))]
        case .quit: return [.send(["210 OK QUIT"]), .quit]
        case .unknown(let line): return [.send(["300 ERR UNKNOWN COMMAND"]), .log("unknown command: \(line.prefix(80))")]
        case .invalid(let reply): return [.send([reply])]
        }
    }

    private mutating func speak(_ kind: MessageKind, _ data: String) -> [ModuleAction] {
        let document = settings.document(kind, data)
        let content = SSML.content(document)
        guard !content.isEmpty else { return [.send(["301 ERROR CANT SPEAK"])] }
        var note: [ModuleAction] = []
        if kind == .text, let held = paused {
            let heldWords = SSML.resumeWords(held.content), newWords = SSML.resumeWords(content)
            if heldWords.ends(with: newWords) {
                paused = nil
                messageSerial += 1
                message = Message(serial: messageSerial, id: held.id, content: held.content, kind: kind, resuming: true)
                return [.send(["200 OK SPEAKING"]), .request(.resume(held.id))]
            }
            note = [.log("a new message, not the paused one resent: \(newWords.prefix(8).joined(separator: " "))… (\(newWords.count) words; the paused one ends …\(heldWords.suffix(4).joined(separator: " ")))")]
        }
        paused = nil
        early = []
        messageSerial += 1
        message = Message(serial: messageSerial, id: nil, content: content, kind: kind)
        return note + [.send(["200 OK SPEAKING"]), .request(.speak(document: document, options: settings.options()))]
    }

    /// The daemon's answer to Speak for the message `serial` (`messageSerial` when it was asked): the new
    /// utterance's id, or the D-Bus error (name, message). A Speak that got no reply in time
    /// (org.freedesktop.DBus.Error.NoReply) ends its message and stops whatever the daemon reads once it answers
    /// again; so does a late reply to the last message sent after that message was given up.
    public mutating func spoke(_ result: Result<UInt64, SpeakFailure>, document: String,
                               serial: UInt64? = nil) -> [ModuleAction] {
        guard var m = message, m.id == nil, serial == nil || serial == m.serial else {
            if case .success(let id) = result, serial == messageSerial, message == nil { return [.request(.stop(id))] }
            return []
        }
        switch result {
        case .success(let id):
            m.id = id
            message = m
            var actions: [ModuleAction] = []
            if m.stopAsked { actions.append(.request(.stop(id))) } else if m.pauseAsked { actions.append(.request(.pause(id))) }
            let waiting = early.filter { $0.0 == id }
            early = []
            for (_, event) in waiting { actions += receive(event, utterance: id) }
            return actions
        case .failure(let failure):
            let refusedVoice = failure.name.hasSuffix(".UnknownLanguage") || failure.name.hasSuffix(".UnknownVoice")
            if refusedVoice && !m.triedWithoutLanguage && !m.stopAsked {
                m.triedWithoutLanguage = true
                message = m
                return [.log("Lector refused the voice or language (\(failure.message)); reading with its own choice"),
                        .request(.speak(document: document, options: settings.options(withLanguage: false)))]
            }
            message = nil
            let unanswered: [ModuleAction] = failure.name == "org.freedesktop.DBus.Error.NoReply" ? [.request(.stop(0))] : []
            return unanswered + [.log("Lector did not read the message: \(failure.message)"),
                                 .send(["701 BEGIN", m.stopAsked ? "703 STOP" : "702 END"])]
        }
    }

    /// `deadline` passed: when the daemon still owes that answer, the module gives it (703 STOP; 704 PAUSE, and
    /// the message is not held, so speech-dispatcher's resend reads it anew) and says so in one log line.
    public mutating func timedOut(_ deadline: ModuleDeadline) -> [ModuleAction] {
        guard let m = message else { return [] }
        let begin = m.begun ? [] : ["701 BEGIN"]
        switch deadline {
        case .stop(let serial):
            guard serial == m.serial else { return [] }
            message = nil
            return [.log("Lector's daemon did not answer STOP within \(Self.answerMilliseconds) ms; the message is stopped"),
                    .send(begin + ["703 STOP"])]
        case .pause(let serial):
            guard serial == m.serial, m.pauseAsked, !m.stopAsked else { return [] }
            message = nil
            return [.log("Lector's daemon did not answer PAUSE within \(Self.answerMilliseconds) ms; the message is paused"),
                    .send(begin + ["704 PAUSE"])]
        }
    }

    /// The actions for an event the daemon announced about `utterance`.
    public mutating func receive(_ event: DaemonEvent, utterance: UInt64) -> [ModuleAction] {
        if let held = paused, held.id == utterance, event != .paused {
            paused = nil // resumed, stopped or replaced from elsewhere: speech-dispatcher's resume reads anew
        }
        guard var m = message else { return [] }
        guard let id = m.id else {
            if early.count < 64 { early.append((utterance, event)) }
            return []
        }
        guard id == utterance else { return [] }
        var lines: [String] = []
        func begin() {
            if !m.begun { lines.append("701 BEGIN"); m.begun = true }
        }
        switch event {
        case .started: begin()
        case .resumed: if m.resuming { begin() }
        case .mark(let name):
            begin()
            // speech-dispatcher's own marks (`__spd_N`) only tell it where to resend a paused message from;
            // 0.11.4 loses the message when it resends from one a second time (its reload of an already
            // reloaded text finds no mark). Without them it resends the whole message, which the module
            // recognizes and resumes exactly. Clients' own marks go through.
            if !name.hasPrefix("__spd_") { lines += ["700-\(name)", "700 INDEX MARK"] }
        case .paused:
            guard m.pauseAsked else { return [] }
            begin()
            lines.append("704 PAUSE")
            paused = (id, m.content)
            message = nil
            return [.send(lines)]
        case .finished:
            begin()
            lines.append("702 END")
            message = nil
            return [.send(lines)]
        case .stopped, .failed:
            begin()
            lines.append("703 STOP")
            message = nil
            var actions: [ModuleAction] = [.send(lines)]
            if case .failed(let why) = event { actions.insert(.log("reading failed: \(why)"), at: 0) }
            return actions
        }
        message = m
        return lines.isEmpty ? [] : [.send(lines)]
    }

    /// The daemon left the bus (it ended or crashed): the message being spoken is stopped.
    public mutating func daemonVanished() -> [ModuleAction] {
        paused = nil
        guard let m = message else { return [] }
        message = nil
        return [.log("Lector's daemon left the session bus"), .send((m.begun ? [] : ["701 BEGIN"]) + ["703 STOP"])]
    }

    /// The reply to LIST VOICES: one line per voice and language (`200-NAME<TAB>LANGUAGE<TAB>none`).
    public func listed(_ voices: [(name: String, languages: [String])]) -> [ModuleAction] {
        var lines: [String] = []
        for v in voices {
            for language in v.languages.prefix(1) { lines.append("200-\(v.name)\t\(language)\tnone") }
        }
        return [.send(lines.isEmpty ? ["304 CANT LIST VOICES"] : lines + ["200 OK VOICE LIST SENT"])]
    }
}

/// A D-Bus error returned by Speak.
public struct SpeakFailure: Error, Equatable, Sendable {
    /// The error's name, e.g. org.lector.Lector1.Error.UnknownLanguage.
    public var name: String
    /// Its one-line message.
    public var message: String

    /// Makes a failure from a D-Bus error's name and message.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }
}

extension Array where Element: Equatable {
    /// Whether the array is not empty and ends with `suffix` (not empty either).
    func ends(with suffix: [Element]) -> Bool {
        !suffix.isEmpty && suffix.count <= count && Array(self[(count - suffix.count)...]) == suffix
    }
}
