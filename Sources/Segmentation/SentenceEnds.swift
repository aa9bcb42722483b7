/// Which of ICU's sentence breaks end a sentence. ICU (UAX #29) breaks after every full stop followed by
/// white space and a capital or a digit: after "Dr.", "Mr.", "e.g.", "No." before a number, initials
/// ("J. R. R. Tolkien") and the number of a heading or list item ("1." of "1. Background"). ICU's own remedy,
/// the `@ss=standard` locale keyword (CLDR's suppression lists), is not used: in ICU 72 it knows few
/// abbreviations ("Dr." is not one in English), it takes words for abbreviations ("the Patriot Act. It" is one
/// sentence: "Act." is listed), and in German it loses real ends after any word in "-er." ("Wir sahen Herrn
/// Meier. Es war da." is one sentence). So the breaks are ICU's, and this drops those that follow:
/// - an abbreviation of the language that does not end sentences (titles, "e.g.", "cf.", "vgl.", "M.", …),
///   or one that stands before a number ("No. 5", "p. 12", "Fig. 3", "Nr. 5", "art. 7");
/// - an initial: one capital letter (not English "I"), or one small letter ("z. B.", "p. ex.");
/// - an acronym with inner full stops ("U.S.", "Ph.D."), except in English before a word that starts
///   sentences ("in the U.S. How about you?");
/// - the enumerator that opens a line ("1.", "2.3.", "iv.", "a."): a numbered heading or list item is one
///   sentence with its text;
/// - in German, an ordinal number before a month ("am 3. Oktober").
/// A break where a line ends that is meant (a line feed left in the text, see `LineBreaks`) is always kept, and
/// so is one after a closing quotation mark or bracket.
enum SentenceEnds {
    /// `ends` (ascending scalar offsets of ICU's breaks in `s`, the last one `s.count`) without the breaks that
    /// do not end a sentence in `language` (BCP 47). `s` has its soft line feeds turned into spaces.
    static func filter(_ ends: [Int], in s: [Unicode.Scalar], language: String) -> [Int] {
        let rules = Rules(language: language)
        var kept: [Int] = []
        var start = 0
        for (i, end) in ends.enumerated() {
            if i == ends.count - 1 || rules.ends(at: end, from: start, in: s) {
                kept.append(end)
                start = end
            }
        }
        return kept
    }

    /// The rules of one language.
    struct Rules {
        var primary: String
        var abbreviations: Set<String>
        var beforeNumbers: Set<String>

        init(language: String) {
            primary = String(language.lowercased().prefix { $0 != "-" && $0 != "_" && $0 != "@" })
            abbreviations = Self.abbreviations[primary] ?? []
            beforeNumbers = (Self.beforeNumbers[primary] ?? []).union(Self.beforeNumbers["*"]!)
        }

        /// Whether ICU's break at `end` (the sentence began at `start`) ends a sentence.
        func ends(at end: Int, from start: Int, in s: [Unicode.Scalar]) -> Bool {
            var k = end - 1
            while k >= start && s[k].properties.isWhitespace {
                if s[k] == "\n" || s[k] == "\u{2029}" || s[k] == "\u{85}" || s[k] == "\u{2028}" { return true }
                k -= 1
            }
            guard k > start, s[k] == "." else { return true }
            var w = k
            while w > start && !s[w - 1].properties.isWhitespace { w -= 1 }
            while w < k && "(\"'“‘«[¿¡".unicodeScalars.contains(s[w]) { w += 1 }
            let word = String(String.UnicodeScalarView(s[w..<k]))
            guard !word.isEmpty, !word.hasSuffix(".") else { return true }
            var n = end
            while n < s.count && s[n].properties.isWhitespace { n += 1 }
            var m = n
            while m < s.count && !s[m].properties.isWhitespace { m += 1 }
            let next = String(String.UnicodeScalarView(s[n..<m])).filter { $0.isLetter || $0.isNumber || $0 == "'" || $0 == "’" }
            return !continues(word: word, next: next, enumerator: opensLine(w, start, s))
        }

        /// Whether the sentence goes on after `word` + "." before `next`.
        func continues(word: String, next: String, enumerator: Bool) -> Bool {
            let lower = word.lowercased()
            if enumerator && Self.isEnumerator(word) { return true }
            if abbreviations.contains(lower) { return true }
            if let first = next.unicodeScalars.first, ("0"..."9").contains(first), beforeNumbers.contains(lower) { return true }
            let scalars = Array(word.unicodeScalars)
            if scalars.count == 1 && scalars[0].properties.isAlphabetic {
                if scalars[0].properties.isLowercase { return true }
                return !(primary == "en" && word == "I")
            }
            if Self.isDottedAcronym(word) {
                return !(primary == "en" && Self.englishStarters.contains(next))
            }
            if primary == "de", scalars.count <= 2, scalars.allSatisfy({ ("0"..."9").contains($0) }),
               Self.germanAfterOrdinals.contains(next) {
                return true
            }
            return false
        }

        /// Whether the word starting at `w` is the first thing on its line (the sentence started at `start`).
        private func opensLine(_ w: Int, _ start: Int, _ s: [Unicode.Scalar]) -> Bool {
            var i = w
            while i > 0 && (s[i - 1] == " " || s[i - 1] == "\t") { i -= 1 }
            if i == 0 || s[i - 1] == "\n" { return true }
            // After a bullet ("• 9. The first item").
            return i > 1 && "•◦‣▪-*+".unicodeScalars.contains(s[i - 1]) && (i == 1 || s[i - 2].properties.isWhitespace)
        }

        /// "1", "2.3", "iv", "a": the number of a heading or list item.
        static func isEnumerator(_ word: String) -> Bool {
            let s = word.unicodeScalars
            if s.allSatisfy({ ("0"..."9").contains($0) || $0 == "." }) && s.first != "." { return s.count <= 8 }
            if s.count == 1, let c = s.first, c.properties.isAlphabetic { return true }
            return s.count <= 5 && s.allSatisfy { "ivxlcIVXLC".unicodeScalars.contains($0) }
        }

        /// "U.S", "Ph.D", "e.g": letters in groups of one to three, joined by full stops.
        static func isDottedAcronym(_ word: String) -> Bool {
            let parts = word.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count >= 2 && parts.allSatisfy { $0.count >= 1 && $0.count <= 3 && $0.allSatisfy(\.isLetter) }
        }

        /// Words that start English sentences, after which an acronym's full stop ends one.
        static let englishStarters: Set<String> = [
            "The", "This", "That", "These", "Those", "It", "Its", "It's", "I", "We", "You", "He", "She", "They",
            "There", "Here", "How", "What", "When", "Where", "Why", "Who", "Which", "But", "And", "So", "If", "In",
            "On", "At", "As", "A", "An", "My", "Our", "Their", "His", "Her", "Yet", "Then", "Now", "Also", "However",
            "Today", "Many", "Most", "Some", "All", "No", "Not", "Please", "Do", "Does", "Did", "Is", "Are", "Was",
            "For", "After", "Before", "One", "Each", "Every", "Such",
        ]

        static let germanAfterOrdinals: Set<String> = [
            "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
            "November", "Dezember", "Jahrhundert", "Jh", "Jahrestag", "Geburtstag", "Platz", "Stock", "Auflage",
            "Kapitel", "Klasse", "Mal",
        ]

        /// Abbreviations that do not end sentences, by language (lower case, without the full stop). Words that
        /// often end one ("etc.", "Inc.", "usw.") are not listed: ICU's break before a capital stands there.
        static let abbreviations: [String: Set<String>] = [
            "en": ["mr", "mrs", "ms", "mx", "dr", "prof", "rev", "hon", "st", "mt", "gen", "col", "capt", "lt", "sgt",
                   "gov", "sen", "rep", "pres", "supt", "cf", "vs", "viz", "approx", "e.g", "i.e", "fig", "figs",
                   "eq", "ref", "dept", "univ", "assn", "bros", "ft", "ave", "blvd"],
            "de": ["dr", "prof", "hr", "hrn", "fr", "frl", "bzw", "ca", "vgl", "ggf", "evtl", "inkl", "exkl", "bspw",
                   "z.b", "d.h", "u.a", "o.ä", "s.o", "s.u", "abb", "abs", "bd", "str", "tel", "sog", "geb", "verh",
                   "zzgl", "max", "min", "dipl", "ing", "st"],
            "fr": ["m", "mm", "mme", "mmes", "mlle", "mlles", "dr", "pr", "me", "st", "ste", "cf", "p.ex", "env",
                   "av", "bd", "fig", "éd", "vol", "chap"],
            "es": ["sr", "sra", "srta", "sres", "dr", "dra", "ud", "uds", "lic", "ing", "arq", "prof", "avda", "av",
                   "pág", "págs", "núm", "fig", "vol", "cap", "p.ej", "dña", "dª", "d"],
            "it": ["sig", "sigg", "sig.ra", "sigra", "dott", "dott.ssa", "prof", "ing", "avv", "geom", "arch", "pag",
                   "fig", "vol", "cap", "ecc"],
            "pt": ["sr", "sra", "srta", "dr", "dra", "prof", "profa", "eng", "av", "pág", "fig", "vol", "cap", "v.ex"],
            "nl": ["dhr", "mevr", "mw", "dr", "prof", "ir", "ing", "drs", "mr", "bijv", "blz", "o.a", "d.w.z",
                   "m.a.w", "t.a.v", "fig"],
            "ru": ["г", "гг", "ул", "д", "им", "проф", "акад", "т.е", "т.д", "т.п", "т.к", "см", "рис", "стр", "тыс",
                   "млн", "млрд", "руб", "коп", "др", "пр"],
            "pl": ["dr", "prof", "mgr", "inż", "hab", "np", "tzw", "tj", "ul", "al", "pl", "godz", "ok", "str"],
            "cs": ["dr", "prof", "ing", "mgr", "např", "tzv", "tj", "ul", "str", "č", "atd"],
            "sv": ["t.ex", "dvs", "bl.a", "s.k", "ca", "nr", "kl", "f.d"],
        ]

        /// Abbreviations that do not end a sentence when a number follows ("No. 5", "p. 12"), in every language
        /// ("*") and by language.
        static let beforeNumbers: [String: Set<String>] = [
            "*": ["no", "nos", "nr", "nº", "n°", "p", "pp", "vol", "vols", "fig", "figs", "ch", "chap", "sec", "art",
                  "arts", "par", "eq", "ref", "op", "tab", "ed", "pt", "v"],
            "de": ["s", "kap", "bd", "abs", "ziff", "tel", "jh"],
            "fr": ["n", "t", "chap", "éd"],
            "es": ["n", "núm", "pág", "págs", "cap", "t"],
            "it": ["n", "pag", "cap"],
            "ru": ["№", "с", "т", "гл", "ст"],
        ]
    }
}
