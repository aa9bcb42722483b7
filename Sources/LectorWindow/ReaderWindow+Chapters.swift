import GLibKit
import GtkKit
import LectorCommon

/// One chapter of the text shown, from the daemon's `Chapters` and `ChapterOffsets` properties.
struct ChapterEntry: Equatable {
    /// Its title, as the document gives it.
    var title: String
    /// Where it starts in the audio, µs (estimated until synthesis reaches it).
    var start: Int64
    /// Its level, from 1 (a top-level heading).
    var level: Int
    /// Where its heading starts in the text, Unicode scalars (the text buffer's character offsets).
    var offset: Int
}

/// The text's structure in the window: headings styled by level, chapter marks on the seek bar, and the
/// chapter list that moves the reading with `JumpToChapter`.
extension ReaderWindow {
    /// Bold headings, larger the higher their level (scales as Pango's x-large, large, medium-large).
    func styleHeadingTags() {
        for (tag, scale) in zip(headingTags, [1.6, 1.35, 1.15]) {
            tag.setWeight(700) // PANGO_WEIGHT_BOLD
            tag.setScale(scale)
        }
    }

    /// Reads the chapters of the text being read (`Chapters`, `ChapterOffsets`) and shows them.
    func fetchChapters() {
        link.property(.chapters) { [weak self] titles in
            self?.link.property(.chapterOffsets) { [weak self] offsets in
                self?.showChapters(titles: titles, offsets: offsets)
            }
        }
    }

    /// Shows the chapters from the values of `Chapters` (a(sxu)) and `ChapterOffsets` (au), which have the
    /// same length for one text; anything else (a text replaced in between) shows no chapters until the next.
    func showChapters(titles: Variant?, offsets: Variant?) {
        let list = titles?.array ?? [], starts = offsets?.array ?? []
        var new: [ChapterEntry] = []
        if list.count == starts.count {
            for (entry, offset) in zip(list, starts) {
                guard let t = entry.tuple, t.count == 3, let title = t[0].string, let start = t[1].int64,
                      let offset = offset.int64 else { continue }
                new.append(ChapterEntry(title: title, start: start, level: Int(t[2].int64 ?? 1), offset: Int(offset)))
            }
        }
        let sameList = new.map(\.title) == chapters.map(\.title) && new.map(\.offset) == chapters.map(\.offset)
        chapters = new
        showChapterMarks()
        guard !sameList else { return }
        clearHeadings()
        chapterList.removeAll()
        for (index, chapter) in new.enumerated() {
            let button = Button(title: String(repeating: "    ", count: max(0, chapter.level - 1)) + chapter.title)
            button.addCSSClass("flat")
            button.onClicked { [weak self] in
                guard let self else { return }
                chapterButton.popdown()
                link.call(.jumpToChapter, [.uint32(UInt32(index))])
            }
            chapterList.append(button)
        }
        chapterButton.isSensitive = !new.isEmpty
        styleHeadings()
    }

    /// A mark on the seek bar at each chapter's start.
    func showChapterMarks() {
        seekBar.clearMarks()
        for chapter in chapters { seekBar.addMark(at: Double(chapter.start) / 1e6) }
    }

    /// Removes the heading styles (a new text, or new chapters).
    func clearHeadings() {
        let all = 0..<text.buffer.count
        for tag in headingTags { text.buffer.remove(tag, from: all) }
        headingsStyled = 0
    }

    /// Styles the headings whose line is on screen already (the text is shown in pieces): from a chapter's
    /// start to the end of its line, at most 500 characters.
    func styleHeadings() {
        let shown = text.buffer.count
        while headingsStyled < chapters.count {
            let chapter = chapters[headingsStyled]
            let end = min(chapter.offset + 500, shown)
            guard chapter.offset < shown else { return }
            let line = text.buffer.text(in: chapter.offset..<end)
            guard let newline = line.unicodeScalars.firstIndex(of: "\n") else {
                if end < chapter.offset + 500, !pendingPieces.isEmpty { return } // the rest is not shown yet
                text.buffer.apply(headingTags[max(1, min(chapter.level, 3)) - 1], to: chapter.offset..<end)
                headingsStyled += 1
                continue
            }
            let length = line.unicodeScalars.distance(from: line.unicodeScalars.startIndex, to: newline)
            text.buffer.apply(headingTags[max(1, min(chapter.level, 3)) - 1], to: chapter.offset..<chapter.offset + length)
            headingsStyled += 1
        }
    }
}
