import SpeechCore

/// A PDF outline's entries placed in the text: each where its title is on the page it leads to, so that
/// several entries on one page are several chapters.
enum PDFOutline {
    /// The chapters of `entries` (depth first) in `text`, whose pages start at the scalar offsets
    /// `pageStarts`. An entry starts where its title (case and white space aside) is first found on its
    /// page, after the entries before it on that page; else at the page's start, or just after the entry
    /// before it there, so that no entry is lost. Entries past the last page are dropped.
    static func chapters(_ entries: [(title: String, page: Int, level: Int)], text: String, pageStarts: [Int]) -> [Chapter] {
        let pages = Set(entries.map(\.page).filter { $0 >= 0 && $0 < pageStarts.count })
        let texts = pageTexts(text, pageStarts: pageStarts, wanted: pages)
        var after: [Int: Int] = [:] // page → the offset past the last entry placed on it
        var chapters: [Chapter] = []
        for entry in entries where pages.contains(entry.page) {
            let pageStart = pageStarts[entry.page]
            let from = after[entry.page] ?? pageStart
            let found = texts[entry.page].flatMap { find(entry.title, in: $0, from: from - pageStart) }.map { $0 + pageStart }
            let start = found ?? (after[entry.page] ?? pageStart)
            after[entry.page] = start + 1
            chapters.append(Chapter(title: entry.title, start: start, level: entry.level))
        }
        return chapters
    }

    /// The scalars of each page in `wanted`, by page.
    static func pageTexts(_ text: String, pageStarts: [Int], wanted: Set<Int>) -> [Int: [Unicode.Scalar]] {
        var texts: [Int: [Unicode.Scalar]] = [:]
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        var offset = 0
        for page in wanted.sorted() {
            let start = pageStarts[page]
            let end = page + 1 < pageStarts.count ? pageStarts[page + 1] : Int.max
            while offset < start, index < scalars.endIndex { scalars.formIndex(after: &index); offset += 1 }
            var pageScalars: [Unicode.Scalar] = []
            var i = index
            var o = offset
            while o < end, i < scalars.endIndex { pageScalars.append(scalars[i]); scalars.formIndex(after: &i); o += 1 }
            texts[page] = pageScalars
        }
        return texts
    }

    /// The offset in `page` where `title` starts, white space and case aside, at `from` or after; nil when
    /// it is not there.
    static func find(_ title: String, in page: [Unicode.Scalar], from: Int) -> Int? {
        let wanted = title.lowercased().unicodeScalars.filter { !$0.properties.isWhitespace }
        guard let first = wanted.first else { return nil }
        var kept: [(Unicode.Scalar, Int)] = []
        for (offset, s) in page.enumerated() where offset >= max(0, from) && !s.properties.isWhitespace {
            kept.append(contentsOf: String(s).lowercased().unicodeScalars.map { ($0, offset) })
        }
        guard kept.count >= wanted.count else { return nil }
        for start in 0...(kept.count - wanted.count) where kept[start].0 == first {
            if zip(wanted, kept[start...]).allSatisfy({ $0 == $1.0 }) { return kept[start].1 }
        }
        return nil
    }
}
