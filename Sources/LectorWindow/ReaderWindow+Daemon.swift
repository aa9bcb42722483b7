@preconcurrency import Glibc
import GLibKit
import GtkKit
import LectorCommon

/// The daemon's side: its properties and events shown in the window.
extension ReaderWindow {
    func wireDaemon() {
        link.onAppeared = { [weak self] in self?.daemonAppeared() }
        link.onVanished = { [weak self] in
            guard let self else { return }
            daemonWasLost = true
            say("Lector's daemon stopped; starting it again…")
            showState("stopped")
        }
        link.onProblem = { [weak self] line in self?.say(line) }
        link.onSignal = { [weak self] signal, args in self?.heard(signal, args) }
        link.onProperties = { [weak self] changed, invalidated in self?.propertiesChanged(changed, invalidated: invalidated) }
    }

    /// The daemon is on the bus: show what it reads, and its voices.
    private func daemonAppeared() {
        say(daemonWasLost ? "Lector's daemon stopped; reading goes on with a new one" : "")
        daemonWasLost = false
        link.call(.watchWords, [.bool(true)]) // the daemon sends Word signals only to the clients that ask
        link.properties { [weak self] all in
            guard let self else { return }
            let id = all[Lector1.Property.utterance.rawValue]?.uint64 ?? 0
            if id != model.utterance, let text = all[Lector1.Property.text.rawValue]?.string {
                show(text, utterance: id, sentence: all[Lector1.Property.sentence.rawValue])
            }
            propertiesChanged(all, invalidated: [])
        }
        // The rate and repeat the daemon has (MPRIS Rate: 1.0 is the default rate, 175 words per minute).
        link.playerProperty("Rate") { [weak self] value in
            guard let self, let ratio = value.double else { return }
            showingDaemonValues = true
            rate.value = (ratio * Double(SpeakOptions.defaultRate)).rounded()
            showingDaemonValues = false
        }
        link.playerProperty("LoopStatus") { [weak self] value in
            guard let self, let loop = value.string else { return }
            showingDaemonValues = true
            repeatButton.isActive = loop != "None"
            showingDaemonValues = false
        }
        link.call(.listVoices) { [weak self] out in
            guard let self, let list = out.first?.array else { return }
            voiceList = list.compactMap { v in
                guard let t = v.tuple, t.count == 4, let name = t[0].string, let id = t[1].string else { return nil }
                return (name, id)
            }
            showingDaemonValues = true
            voices.setItems(voiceList.map(\.name))
            // The Voice property may have come first: the list shows the voice heard, not nothing.
            voices.selected = voiceHeard.flatMap { v in voiceList.firstIndex { $0.name == v } }
            showingDaemonValues = false
        }
    }

    /// Properties that changed (or all of them, at start).
    func propertiesChanged(_ changed: [String: Variant], invalidated: [String]) {
        let p = changed.named(Lector1.Property.self)
        if let s = p[.state]?.string { showState(s) }
        if let l = p[.length]?.int64 {
            lengthMicroseconds = l
            showTime()
            if !chapters.isEmpty { fetchChapters() } // their start times are refined with the length
        }
        if let v = p[.voice]?.string { voiceHeard = v }
        if let v = p[.voice]?.string, let i = voiceList.firstIndex(where: { $0.name == v }), voices.selected != i {
            showingDaemonValues = true
            voices.selected = i
            showingDaemonValues = false
        }
        if let timer = p[.sleepTimer]?.tuple, timer.count == 2, let mode = timer[0].string {
            showSleepTimer(mode: mode, at: timer[1].int64 ?? 0)
        }
        if let id = p[.utterance]?.uint64, id != model.utterance { fetchText(id) }
        if invalidated.contains(Lector1.Property.text.rawValue) { fetchText(p[.utterance]?.uint64 ?? model.utterance, again: true) }
    }

    /// Gets the text of utterance `id` (once per id, unless `again`: a file whose whole text came later).
    private func fetchText(_ id: UInt64, again: Bool = false) {
        guard again || fetching != id else { return }
        fetching = id
        link.property(.text) { [weak self] value in
            guard let self, let text = value.string else { return }
            link.property(.utterance) { [weak self] current in
                guard let self, current.uint64 == id || again else { return }
                link.property(.sentence) { [weak self] sentence in
                    self?.show(text, utterance: current.uint64 ?? id, sentence: sentence)
                }
            }
        }
    }

    /// Shows `text` of utterance `id` from its beginning, in pieces (`TextPieces`), each in its own idle
    /// step, so that a book does not freeze the window; `sentence` is the Sentence property (index, start,
    /// length), highlighted once its text is on screen.
    func show(_ text: String, utterance id: UInt64, sentence: Variant?) {
        pieceSource?.cancel()
        apply(model.showText(id))
        self.text.buffer.clear()
        highlighted = ReadingModel.Highlight()
        pendingPieces = TextPieces.cut(text)
        chapters = []  // the last text's, until this one's arrive
        headingsStyled = 0
        seekBar.clearMarks()
        fetchChapters()
        if let t = sentence?.tuple, t.count == 3, let start = t[1].int64, let length = t[2].int64, state != "stopped" {
            apply(model.sentenceHeard(id, Int(start)..<Int(start + length)))
        }
        pieceSource = MainContext.idle { [weak self] in self?.showNextPiece() }
    }

    private func showNextPiece() {
        guard !pendingPieces.isEmpty else { pieceSource = nil; return }
        let piece = pendingPieces.removeFirst()
        text.buffer.append(String(piece))
        apply(model.loadedUpTo(text.buffer.count))
        styleHeadings()
        pieceSource = pendingPieces.isEmpty ? nil : MainContext.idle { [weak self] in self?.showNextPiece() }
    }

    /// A signal of the daemon, as it is heard.
    private func heard(_ signal: Lector1.Signal, _ args: [Variant]) {
        guard let id = args.first?.uint64 else { return }
        switch signal {
        case .sentence:
            guard args.count >= 4, let start = args[2].int64, let length = args[3].int64 else { return }
            apply(model.sentenceHeard(id, Int(start)..<Int(start + length)))
        case .word:
            guard args.count >= 3, let start = args[1].int64, let length = args[2].int64 else { return }
            apply(model.wordHeard(id, Int(start)..<Int(start + length)))
        case .started:
            if id != model.utterance { fetchText(id) }
        case .stopped, .finished:
            apply(model.ended(id))
        case .error:
            if args.count >= 2, let message = args[1].string { say(message) }
        case .paused, .resumed, .mark:
            break
        }
    }

    /// Carries out an update of the model on the view: highlights, scrolling, the "back" button.
    func apply(_ update: ReadingModel.Update) {
        if let h = update.highlight {
            if let s = highlighted.sentence { text.buffer.remove(sentenceTag, from: s) }
            if let w = highlighted.word { text.buffer.remove(wordTag, from: w) }
            highlighted = h
            if let s = h.sentence { text.buffer.apply(sentenceTag, to: s) }
            if let w = h.word {
                text.buffer.apply(wordTag, to: w)
                text.buffer.placeCursor(at: w.lowerBound)
            } else if let s = h.sentence {
                text.buffer.placeCursor(at: s.lowerBound)
            }
        }
        if let offset = update.scrollTo, !text.isOnScreen(offset: offset) || update.backButton == false {
            scrollingByProgram = true
            text.scroll(toOffset: offset)
            _ = MainContext.timeout(milliseconds: 400) { [weak self] in
                self?.scrollingByProgram = false
                return false
            }
        }
        if let show = update.backButton { backButton.isVisible = show }
    }

    /// Shows the state: the play button's icon and name, the position timer.
    func showState(_ newState: String) {
        state = newState
        let reading = newState == "reading"
        playButton.setIconName(reading ? "media-playback-pause-symbolic" : "media-playback-start-symbolic")
        playButton.accessibleLabel = reading ? "Pause" : "Play"
        playButton.tooltip = reading ? "Pause (Space)" : "Play (Space)"
        if reading, positionTimer == nil {
            positionTimer = MainContext.timeout(milliseconds: 500) { [weak self] in
                self?.refreshPosition()
                return true
            }
        } else if !reading {
            positionTimer?.cancel()
            positionTimer = nil
            refreshPosition()
        }
    }

    private func refreshPosition() {
        link.property(.position) { [weak self] value in
            guard let self, let p = value.int64 else { return }
            positionMicroseconds = p
            showTime()
        }
    }

    /// The sleep timer on the sleep button's tooltip and name: off, at a time (µs since the Unix epoch, shown
    /// as local hours and minutes), or at the end of the paragraph.
    private func showSleepTimer(mode: String, at microseconds: Int64) {
        let what: String
        switch mode {
        case "time": what = "Sleep timer: pauses at " + Self.localTime(microseconds)
        case "paragraph": what = "Sleep timer: pauses at the end of this paragraph"
        default: what = "Sleep timer"
        }
        sleepButton.accessibleLabel = what
        sleepButton.tooltip = what
    }

    static func localTime(_ microseconds: Int64) -> String {
        var seconds = time_t(microseconds / 1_000_000)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "\(parts.tm_hour):" + (parts.tm_min < 10 ? "0" : "") + "\(parts.tm_min)"
    }

    func showTime() {
        seekBar.setRange(0, Double(lengthMicroseconds) / 1e6)
        seekBar.value = Double(positionMicroseconds) / 1e6
        timeLabel.text = Self.clock(positionMicroseconds) + " / " + Self.clock(lengthMicroseconds)
    }

    static func clock(_ microseconds: Int64) -> String {
        let s = max(0, microseconds / 1_000_000)
        let sec = s % 60
        return s >= 3600 ? "\(s / 3600):\((s / 60 % 60) < 10 ? "0" : "")\(s / 60 % 60):\(sec < 10 ? "0" : "")\(sec)"
            : "\(s / 60):\(sec < 10 ? "0" : "")\(sec)"
    }
}
