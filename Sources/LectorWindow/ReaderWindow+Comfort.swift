import GLibKit
import GtkKit
import LectorCommon
import SpeechCore

/// Reading comfort (font, size, spacing, width, contrast, light or dark) and the sleep timer's panel.
extension ReaderWindow {
    /// The panel of the "Reading comfort" menu button.
    func comfortPanel() -> Widget {
        let panel = Box(vertical: true, spacing: 8)
        panel.setMargins(12)

        let family = DropDown(ComfortSettings.families)
        family.selected = ComfortSettings.families.firstIndex(of: settings.family)
        family.onSelected { [weak self] in
            guard let self, let i = family.selected else { return }
            change { $0.family = ComfortSettings.families[i] }
        }
        let size = SpinButton(lower: Double(ComfortSettings.sizes.lowerBound), upper: Double(ComfortSettings.sizes.upperBound), step: 1)
        size.value = Double(settings.size)
        size.onChanged { [weak self] in self?.change { $0.size = Int(size.value) } }
        let spacing = SpinButton(lower: ComfortSettings.spacings.lowerBound, upper: ComfortSettings.spacings.upperBound, step: 0.1, digits: 1)
        spacing.value = settings.spacing
        spacing.onChanged { [weak self] in self?.change { $0.spacing = (spacing.value * 10).rounded() / 10 } }
        let width = SpinButton(lower: Double(ComfortSettings.widths.lowerBound), upper: Double(ComfortSettings.widths.upperBound), step: 20)
        width.value = Double(settings.width)
        width.onChanged { [weak self] in self?.change { $0.width = Int(width.value) } }
        let style = DropDown(["Follow the desktop", "Light", "Dark"])
        style.selected = ComfortSettings.styles.firstIndex(of: settings.style)
        style.onSelected { [weak self] in
            guard let self, let i = style.selected else { return }
            change { $0.style = ComfortSettings.styles[i] }
        }
        let contrast = CheckButton(label: "_High contrast")
        contrast.isActive = settings.highContrast
        contrast.onToggled { [weak self] in self?.change { $0.highContrast = contrast.isActive } }

        for (title, control) in [("Font", family as Widget), ("Size (points)", size), ("Line spacing", spacing),
                                 ("Text width (pixels)", width), ("Style", style)] {
            let row = Box(vertical: false, spacing: 12)
            let label = Label(title)
            label.setXAlign(0)
            label.expand(horizontally: true)
            control.accessibleLabel = title
            row.append(label)
            row.append(control)
            panel.append(row)
        }
        panel.append(contrast)
        panel.append(readingRows())
        return panel
    }

    /// What is read of web addresses, symbols, emoji, … in the next texts the window reads: for each
    /// `ReadingSettings` name, "As configured" (the daemon's `[reading]`) or one of its values.
    private func readingRows() -> Widget {
        let box = Box(vertical: true, spacing: 8)
        let heading = Label("What is read (from the next text)")
        heading.setXAlign(0)
        box.append(heading)
        let titles = ["links": "Web addresses", "emails": "E-mail addresses", "citations": "Citation markers [12]",
                      "numbers": "Long numbers and hashes", "symbols": "Runs of symbols (=====)", "emoji": "Emoji"]
        let words = ["host": "Their host", "full": "In full", "skip": "Skip", "read": "Read", "once": "Once each", "all": "Every one"]
        for name in ReadingSettings.names {
            let values = ReadingSettings.values(of: name) ?? []
            let choice = DropDown(["As configured"] + values.map { words[$0] ?? $0 })
            choice.selected = settings.reading[name].flatMap { values.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            choice.onSelected { [weak self] in
                guard let self, let i = choice.selected else { return }
                change { $0.reading[name] = i == 0 ? nil : values[i - 1] }
            }
            let row = Box(vertical: false, spacing: 12)
            let label = Label(titles[name] ?? name)
            label.setXAlign(0)
            label.expand(horizontally: true)
            choice.accessibleLabel = titles[name] ?? name
            row.append(label)
            row.append(choice)
            box.append(row)
        }
        return box
    }

    /// The panel of the "Sleep timer" menu button: pause after a time, at the end of the paragraph, or never.
    func sleepPanel() -> Widget {
        let panel = Box(vertical: true, spacing: 4)
        panel.setMargins(8)
        let choices: [(String, Lector1.Method, [Variant])] = [
            ("In 15 minutes", .sleepAfter, [.int64(15 * 60_000_000)]),
            ("In 30 minutes", .sleepAfter, [.int64(30 * 60_000_000)]),
            ("In 60 minutes", .sleepAfter, [.int64(60 * 60_000_000)]),
            ("At the end of this paragraph", .sleepAtParagraphEnd, []),
            ("Off", .cancelSleep, []),
        ]
        for (title, method, args) in choices {
            let button = Button(text: title)
            button.addCSSClass("flat")
            button.onClicked { [weak self] in
                self?.link.call(method, args)
                self?.say(method == .cancelSleep ? "Sleep timer off" : "Reading pauses " + title.lowercased())
            }
            panel.append(button)
        }
        return panel
    }

    /// Changes the settings, shows and keeps them.
    private func change(_ body: (inout ComfortSettings) -> Void) {
        var new = settings
        body(&new)
        guard new != settings else { return }
        settings = new
        applySettings()
        if let problem = settings.save() { say(problem) }
    }

    /// Shows the text as the settings say. The text reflows: the view's moves until it settles are the
    /// program's, not the person's (the view keeps following), and a following view then goes back to the
    /// word heard.
    func applySettings() {
        scrollingByProgram = true
        reflowSettled?.cancel()  // a size spun key by key: one wait, from the last change
        reflowSettled = MainContext.timeout(milliseconds: 400) { [weak self] in
            guard let self else { return false }
            reflowSettled = nil
            scrollingByProgram = false
            if model.following { apply(model.backToReading()) }
            return false
        }
        clamp.setMaximumWidth(settings.width)
        let between = settings.pixelsBetweenLines
        text.setSpacing(insideWrap: between, belowLines: between)
        StyleManager.setDark(settings.style == "system" ? nil : settings.style == "dark")
        applyColours()
    }

    /// The colours of the highlights (and of the text in high contrast), for the style in use: backgrounds
    /// only, never a text colour on a tag (`HighlightColours`).
    func applyColours() {
        setApplicationCSS(settings.css)
        let colours = HighlightColours.forStyle(contrast: settings.highContrast || StyleManager.isHighContrast,
                                                dark: StyleManager.isDark || settings.highContrast)
        sentenceTag.setBackground(colours.sentence)
        wordTag.setBackground(colours.word)
        wordTag.setUnderlined(true)
    }
}
