import GLibKit
import GtkKit
import LectorCommon

/// The reader window: the text being read with the sentence and word heard highlighted, the controls of a
/// player, and the reading-comfort settings. A client of the daemon (`DaemonLink`): it owns no speech, and
/// closing it never stops the reading.
final class ReaderWindow {
    let window: Window
    let link: DaemonLink
    var model = ReadingModel()
    var settings = ComfortSettings.load()

    // The text
    let text = TextView()
    let scroller: ScrolledWindow
    let clamp: ClampScrollable
    let backButton = Button(text: "_Back to the reading")

    let sentenceTag: TextTag
    let wordTag: TextTag
    /// The ranges the tags are on now.
    var highlighted = ReadingModel.Highlight()
    /// Pieces of the text still to show, and the idle source showing them.
    var pendingPieces: [Substring] = []
    var pieceSource: Source?
    /// The range of the utterance's text being fetched (a new Text is fetched once even if announced twice).
    var fetching: UInt64 = 0

    // The controls
    let playButton = Button(iconName: "media-playback-start-symbolic", label: "Play")
    let previousButton = Button(iconName: "media-skip-backward-symbolic", label: "Previous sentence")
    let nextButton = Button(iconName: "media-skip-forward-symbolic", label: "Next sentence")
    let openButton = Button(iconName: "document-open-symbolic", label: "Open a file")
    let pasteButton = Button(iconName: "edit-paste-symbolic", label: "Read the clipboard")
    let repeatButton = ToggleButton(iconName: "media-playlist-repeat-symbolic", label: "Repeat")
    let seekBar = Scale(lower: 0, upper: 1, step: 1)
    let timeLabel = Label("0:00 / 0:00")
    let rate = SpinButton(lower: Double(SpeakOptions.rates.lowerBound), upper: Double(SpeakOptions.rates.upperBound), step: 5)
    let voices = DropDown([])
    let status = Label("")
    /// The sleep timer's menu button (its name says when reading pauses).
    var sleepButton: MenuButton!

    // The chapters (`ReaderWindow+Chapters.swift`)
    /// The chapter list's menu button, and the list of chapter buttons in its popover.
    var chapterButton: MenuButton!
    let chapterList = Box(vertical: true, spacing: 2)
    /// The heading styles by level (1, 2, 3 and deeper).
    var headingTags: [TextTag] = []
    /// The chapters of the text shown: title, start (µs), level, and start in the text (scalars).
    var chapters: [ChapterEntry] = []
    /// How many of `chapters` have their heading styled (the text is shown in pieces).
    var headingsStyled = 0

    // State from the daemon
    var state = "stopped"
    var positionMicroseconds: Int64 = 0
    var lengthMicroseconds: Int64 = 0
    var voiceList: [(name: String, identifier: String)] = []
    /// The voice being heard (the daemon's Voice), shown in the list once it is there.
    var voiceHeard: String?
    var positionTimer: Source?
    /// Set while the program moves the view, so that only the person's scrolling stops the following.
    var scrollingByProgram = false
    /// Ends the program's scrolling once a comfort change's reflow has settled (`applySettings`).
    var reflowSettled: Source?
    /// Set while controls show values read from the daemon, so that showing them does not send them back.
    var showingDaemonValues = false
    /// Whether the daemon left the bus since the window last saw it (said when the next one appears).
    var daemonWasLost = false

    init(application: Application, link: DaemonLink) {
        self.link = link
        window = Window(application: application, title: "Lector", width: 900, height: 680)
        sentenceTag = text.buffer.makeTag("lector-sentence")
        wordTag = text.buffer.makeTag("lector-word")
        let buffer = text.buffer
        headingTags = (1...3).map { buffer.makeTag("lector-heading-\($0)") }
        clamp = ClampScrollable(text, maximumWidth: settings.width)
        scroller = ScrolledWindow(clamp)
        window.setContent(layout())
        wire()
        styleHeadingTags()
        applySettings()
        StyleManager.onChange { [weak self] in self?.applyColours() }
    }

    /// Lays out the header bar (file, paste, settings), the text with its "back" button, and the player bar.
    private func layout() -> Widget {
        let header = HeaderBar()
        header.packStart(openButton)
        header.packStart(pasteButton)
        chapterButton = MenuButton(iconName: "view-list-symbolic", label: "Chapters", content: chapterList)
        chapterButton.isSensitive = false
        header.packStart(chapterButton)
        header.packEnd(MenuButton(iconName: "preferences-desktop-font-symbolic", label: "Reading comfort",
                                  content: comfortPanel()))
        sleepButton = MenuButton(iconName: "alarm-symbolic", label: "Sleep timer", content: sleepPanel())
        header.packEnd(sleepButton)

        text.addCSSClass("lector-text")
        text.accessibleLabel = "Text being read"
        text.setMargins(vertical: 24, horizontal: 24)
        scroller.expand(horizontally: true, vertically: true)
        let overlay = Overlay(scroller)
        // GTK 4.8 names a button with a mnemonic by its label as written and the label's text together
        // ("_Back to the reading Back to the reading"): the name is given.
        backButton.accessibleLabel = "Back to the reading"
        backButton.addCSSClass("suggested-action")
        backButton.addCSSClass("pill")
        backButton.align(horizontal: .center, vertical: .end)
        backButton.setMargins(16)
        backButton.isVisible = false
        overlay.addOverlay(backButton)

        let player = Box(vertical: false, spacing: 6)
        player.setMargins(8)
        for b in [previousButton, playButton, nextButton] { player.append(b) }
        playButton.addCSSClass("circular")
        seekBar.accessibleLabel = "Position"
        seekBar.expand(horizontally: true)
        player.append(seekBar)
        player.append(timeLabel)
        player.append(repeatButton)
        rate.accessibleLabel = "Speaking rate, words per minute"
        rate.tooltip = "Speaking rate (words per minute)"
        rate.value = Double(SpeakOptions.defaultRate)
        player.append(rate)
        voices.accessibleLabel = "Voice"
        voices.tooltip = "Voice"
        player.append(voices)

        status.setXAlign(0)
        status.setMargins(4)
        status.setAccessibleDescription("Status") // its name is its text, read by screen readers as it changes
        status.addCSSClass("dim-label")

        let page = Box(vertical: true)
        page.append(header)
        page.append(overlay)
        page.append(player)
        page.append(status)
        return page
    }

    /// Connects the controls, the person's input (keys, clicks, scrolling, drops) and the daemon's events.
    private func wire() {
        playButton.onClicked { [weak self] in self?.togglePlay() }
        previousButton.onClicked { [weak self] in self?.link.player(.previous) }
        nextButton.onClicked { [weak self] in self?.link.player(.next) }
        openButton.onClicked { [weak self] in self?.chooseFile() }
        pasteButton.onClicked { [weak self] in self?.paste() }
        backButton.onClicked { [weak self] in self?.backToReading() }
        repeatButton.onToggled { [weak self] in
            guard let self, !showingDaemonValues else { return }
            link.setPlayerProperty("LoopStatus", .string(repeatButton.isActive ? "Playlist" : "None"))
        }
        seekBar.onMoved { [weak self] seconds in self?.seek(toSeconds: seconds) }
        rate.onChanged { [weak self] in
            guard let self, !showingDaemonValues else { return }
            link.call(.setRate, [.int32(Int32(rate.value))])
        }
        voices.onSelected { [weak self] in
            guard let self, !showingDaemonValues, let i = voices.selected, voiceList.indices.contains(i) else { return }
            link.call(.setVoice, [.string(voiceList[i].identifier)])
        }
        text.add(ClickGesture { [weak self] x, y in self?.clicked(x: x, y: y) })
        scroller.add(ScrollController { [weak self] in self?.personScrolled() })
        scroller.onScrolled { [weak self] in
            guard let self, !scrollingByProgram else { return }
            personScrolled()
        }
        window.add(KeyController { [weak self] key, modifiers in self?.key(key, modifiers: modifiers) ?? false })
        window.add(DropTarget { [weak self] dropped in self?.dropped(dropped) ?? false })
        wireDaemon()
    }

    /// Shows the window (again) and brings it to the front.
    func present() {
        window.present()
    }

    /// One line at the bottom of the window (errors, the daemon's comings and goings).
    func say(_ line: String) {
        status.text = line
    }
}
