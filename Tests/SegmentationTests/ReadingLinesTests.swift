import Testing
import Segmentation
import SpeechCore

/// The sentences of `text` as a listener hears them: the spoken form, white space collapsed (without the full
/// stop the engine is given after a line that ends unpunctuated: `LineEndStopTests` covers that).
private func heard(_ text: String, _ language: String = "en") -> [String] {
    Segmenter().sentences(of: text, language: language).map {
        ($0.spoken?.text ?? $0.text).split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// `paragraphs` (separated by a blank line) wrapped greedily at `width` columns.
private func wrapped(_ paragraphs: [String], width: Int) -> String {
    paragraphs.map { paragraph in
        var lines: [String] = []
        var line = ""
        for word in paragraph.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width { lines.append(line); line = "" }
            line += line.isEmpty ? String(word) : " " + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }.joined(separator: "\n\n")
}

private let preamble = [
    "The GNU General Public License is a free, copyleft license for software and other kinds of works.",
    "The licenses for most software and other practical works are designed to take away your freedom to share and change the works. By contrast, the GNU General Public License is intended to guarantee your freedom to share and change all versions of a program--to make sure it remains free software for all its users. We, the Free Software Foundation, use the GNU General Public License for most of our software; it applies also to any other work released this way by its authors. You can apply it to your programs, too.",
    "When we speak of free software, we are referring to freedom, not price. Our General Public Licenses are designed to make sure that you have the freedom to distribute copies of free software (and charge for them if you wish), that you receive source code or can get it if you want it, that you can change the software or use pieces of it in new free programs, and that you know you can do these things.",
]

@Suite("Segmenter: hard-wrapped lines")
struct HardWrapTests {
    @Test(arguments: [72, 60, 40])
    func aParagraphReadsTheSameAtAnyWidth(width: Int) {
        let one = heard(preamble.joined(separator: "\n\n"))
        #expect(one.count == 7)
        #expect(heard(wrapped(preamble, width: width)) == one)
    }

    @Test(arguments: [72, 40])
    func indentedFirstLinesReadTheSameAsFmtRewrapsThem(width: Int) throws {
        // The GPL indents each paragraph's first line; `fmt` keeps that indentation on the first two lines.
        let source = preamble.map { "  " + $0 }.joined(separator: "\n\n")
        let one = heard(source)
        #expect(one.count == 7)
        let fmt = wrapped(preamble, width: width - 2).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        var text: [String] = [], lineInParagraph = 0
        for line in fmt {
            text.append(line.isEmpty ? "" : (lineInParagraph < 2 ? "  " : "") + line)
            lineInParagraph = line.isEmpty ? 0 : lineInParagraph + 1
        }
        #expect(heard(text.joined(separator: "\n")) == one)
    }

    @Test func anEnumeratorInBracketsAFullLineRunsIntoGoesOnItsSentence() {
        let gpl = "Developers that use the GNU GPL protect your rights with two steps:\n(1) assert copyright on the software, and (2) offer you this License\ngiving you legal permission to copy, distribute and/or modify it."
        #expect(heard(gpl) == ["Developers that use the GNU GPL protect your rights with two steps: (1) assert copyright on the software, and (2) offer you this License giving you legal permission to copy, distribute and/or modify it."])
        // After a short line, "(a)" starts an item of a list.
        #expect(heard("You need:\n(a) a computer\n(b) time") == ["You need:", "(a) a computer", "(b) time"])
    }

    @Test func aCopyrightNoticeIsALineOfItsOwn() {
        let header = " Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>\n Everyone is permitted to copy and distribute verbatim copies\n of this license document, but changing it is not allowed."
        #expect(heard(header).count == 2)
        #expect(heard("© 2024 Jane Doe and the contributors to the project, who wrote it\nall over the years.").count == 1)
    }

    @Test func linesMeantAsLinesStayApart() {
        let address = "Free Software Foundation, Inc.\n51 Franklin Street, Fifth Floor\nBoston, MA 02110-1301 USA"
        #expect(heard(address).count == 3)
        let list = "You need:\n- a computer\n- a licence that lets you share it\n* and time\n1. First step\n2) Second step"
        #expect(heard(list) == ["You need:", "a computer", "a licence that lets you share it", "and time",
                                "1. First step", "2) Second step"])
        let verse = "Shall I compare thee to a summer's day\nThou art more lovely and more temperate\nRough winds do shake"
        #expect(heard(verse).count == 3)
    }

    @Test func aListItemWrapsUnderItsText() {
        let text = "  * The first item is long enough to be wrapped onto a second line by\n    the writer's editor, who left it so.\n  * Second."
        #expect(heard(text) == ["The first item is long enough to be wrapped onto a second line by the writer's editor, who left it so.",
                                "Second."])
    }

    @Test func quotedLinesJoinWithoutTheirMarkers() {
        let text = "Jane wrote:\n> I think we should meet on Tuesday, if the room is still free by\n> then. Do you agree?\nYes.\n\n-- \nJane Doe\nExample Ltd."
        #expect(heard(text) == ["Jane wrote:", "I think we should meet on Tuesday, if the room is still free by then.",
                                "Do you agree?", "Yes.", "Jane Doe", "Example Ltd."])
    }

    @Test func headingsTablesAndRulesStayApart() {
        let text = "Introduction\n============\n\nThis text has a heading that is underlined with a row of signs, as\nplain text often does.\n\nFile    Lines   Words\nmain.c  120     400"
        #expect(heard(text) == ["Introduction", "This text has a heading that is underlined with a row of signs, as plain text often does.",
                                "File Lines Words", "main.c 120 400"])
    }

    @Test func manPageIndentation() {
        let text = "NAME\n       ls - list directory contents\n\nDESCRIPTION\n       List  information  about the FILEs (the current directory by default).\n       Sort entries alphabetically if none of -cftuvSUX nor --sort is speci‐\n       fied.\n\n       -a, --all\n              do not ignore entries starting with ."
        let sentences = heard(text)
        #expect(sentences.contains("List information about the FILEs (the current directory by default)."))
        #expect(sentences.contains("-a, --all"))
        #expect(sentences.contains("do not ignore entries starting with ."))
        #expect(sentences.first == "NAME")
    }

    @Test func offsetsStayThoseOfTheText() {
        let text = "One sentence that is wrapped by its writer\nover two lines. And another one."
        let sentences = Segmenter().sentences(of: text, language: "en")
        #expect(sentences.map(\.range) == [0..<58, 59..<75])
        #expect(sentences[0].text == "One sentence that is wrapped by its writer\nover two lines.")
    }

    @Test func slicesCutAtBlankLinesGiveTheWholeTextsSentences() {
        let text = String(repeating: wrapped(preamble, width: 72) + "\n\n", count: 6)
        let whole = Segmenter().sentences(of: text, language: "en")
        var sliced: [Sentence] = []
        var index = text.unicodeScalars.startIndex
        var offset = 0
        let total = text.unicodeScalars.count
        while offset < total {
            let slice = Segmenter().sentences(of: text, from: index, offset: offset, upTo: total, approximately: 300, language: "en")
            sliced += slice.sentences
            index = slice.next
            offset = slice.nextOffset
        }
        #expect(sliced.map(\.range) == whole.map(\.range))
    }
}

@Suite("Segmenter: sentence ends")
struct SentenceEndTests {
    @Test func englishAbbreviationsInitialsAndNumbers() {
        #expect(heard("Dr. Smith met Mr. Jones. He works at No. 5 Main St. in town. See e.g. Fig. 3 for it.")
                == ["Dr. Smith met Mr. Jones.", "He works at No. 5 Main St. in town.", "See e.g. Fig. 3 for it."])
        #expect(heard("J. R. R. Tolkien wrote it. My name is Jonas E. Smith. You and I. Did you see?")
                == ["J. R. R. Tolkien wrote it.", "My name is Jonas E. Smith.", "You and I.", "Did you see?"])
        #expect(heard("Version v1.2.3 costs 3.14 dollars. Wait... Really? Please turn to p. 55. Yes.")
                == ["Version v1.2.3 costs 3.14 dollars.", "Wait...", "Really?", "Please turn to p. 55.", "Yes."])
        #expect(heard("I work for the U.S. Government in Virginia. I live in the U.S. How about you?")
                == ["I work for the U.S. Government in Virginia.", "I live in the U.S.", "How about you?"])
        #expect(heard("No. I will not. He said \"Go.\" She left.") == ["No.", "I will not.", "He said \"Go.\"", "She left."])
    }

    @Test func numberedHeadingsAndItems() {
        #expect(heard("1. Background\n\nText follows.\n\n2.3. Scope\niv. Fourth\na. First") ==
                ["1. Background", "Text follows.", "2.3. Scope", "iv. Fourth", "a. First"])
    }

    @Test func otherLanguages() {
        #expect(heard("Am 3. Oktober kam Dr. Müller. Er sagte z. B. nichts. Wir sahen Herrn Meier. Es war da.", "de")
                == ["Am 3. Oktober kam Dr. Müller.", "Er sagte z. B. nichts.", "Wir sahen Herrn Meier.", "Es war da."])
        #expect(heard("M. Dupont est venu. Il habite au n° 5. Mme Durand aussi.", "fr")
                == ["M. Dupont est venu.", "Il habite au n° 5.", "Mme Durand aussi."])
        #expect(heard("El Sr. García llegó. La Dra. López también.", "es") == ["El Sr. García llegó.", "La Dra. López también."])
    }
}
