@preconcurrency import Glibc
import GLibKit
import GtkKit
import LectorCommon

/// What the person does: play, move, open, paste, drop, click a word, keys, scrolling.
extension ReaderWindow {
    func togglePlay() {
        link.call(.toggle)
    }

    /// The seek bar moved to `seconds`: MPRIS Seek by the difference from the position last known.
    func seek(toSeconds seconds: Double) {
        let target = Int64(seconds * 1e6)
        link.player(.seek, [.int64(target - positionMicroseconds)])
        positionMicroseconds = target
        showTime()
    }

    /// Reads from the word at (`x`, `y`) in the text view (ReadFrom: the sentence that holds it).
    func clicked(x: Double, y: Double) {
        guard model.utterance != 0, let offset = text.offset(atX: x, y: y) else { return }
        link.call(.readFrom, [.uint32(UInt32(offset))])
        apply(model.backToReading())
    }

    func chooseFile() {
        FileChooser.open(title: "Open a text to read", parent: window) { [weak self] path in
            guard let self, let path else { return }
            open(path)
        }
    }

    /// Reads the file at `path`: opened and checked here, read by the daemon from the descriptor (SpeakFile),
    /// as `lector read --file` does. A file that cannot be read says so in one line.
    func open(_ path: String) {
        switch Input.source(arguments: [], file: path) {
        case .failure(let failure):
            say(failure.message)
        case .success(.text(let input)):
            speak(input.text, title: input.title, url: input.url, ssml: input.ssml)
        case .success(.file(let file)):
            var options = SpeakOptions()
            options.title = file.title
            options.url = file.url
            options.ssml = file.isSSML
            options.reading = settings.readingOption
            say("")
            link.call(.speakFile, [.handle(0), .dictionary(valueType: "v", options.dbusOptions)],
                      fileDescriptors: [file.descriptor]) { _ in _ = file } // the descriptor stays open until the reply
        }
    }

    /// Reads `text` (pasted or dropped).
    func speak(_ text: String, title: String? = nil, url: String? = nil, ssml: Bool = false) {
        var options = SpeakOptions()
        options.title = title
        options.url = url
        options.ssml = ssml
        options.reading = settings.readingOption
        say("")
        link.call(.speak, [.string(text), .dictionary(valueType: "v", options.dbusOptions)])
    }

    /// Reads the clipboard's text.
    func paste() {
        Clipboard.readText { [weak self] text in
            guard let self else { return }
            guard let text, !text.allSatisfy(\.isWhitespace) else { return say("The clipboard holds no text") }
            speak(text)
        }
    }

    /// A file (the first) or text dropped on the window is read.
    func dropped(_ what: Dropped) -> Bool {
        switch what {
        case .files(let paths):
            guard let first = paths.first else { return false }
            open(first)
        case .text(let text):
            speak(text)
        }
        return true
    }

    /// Space plays or pauses, Left/Up the previous sentence, Right/Down the next one, Ctrl+O opens a file,
    /// Ctrl+V reads the clipboard; unless the focus is in a control that uses those keys itself.
    func key(_ key: UInt32, modifiers: KeyModifiers) -> Bool {
        if modifiers == .control {
            switch key {
            case Key.o: chooseFile()
            case Key.v where !window.focusTakesKeys: paste()
            default: return false
            }
            return true
        }
        guard modifiers.isEmpty, !window.focusTakesKeys else { return false }
        switch key {
        case Key.space: togglePlay()
        case Key.left, Key.up: link.player(.previous)
        case Key.right, Key.down: link.player(.next)
        default: return false
        }
        return true
    }

    func personScrolled() {
        apply(model.personScrolled())
    }

    func backToReading() {
        apply(model.backToReading())
    }
}
