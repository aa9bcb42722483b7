import SpeechCore

/// An utterance `id` of `count` sentences "Sentence 0." … "Sentence n.", one space apart, ranges in scalars.
func makeUtterance(_ id: UInt64, sentences count: Int = 3) -> Utterance {
    var text = ""
    var sentences: [Sentence] = []
    for i in 0..<count {
        if i > 0 { text += " " }
        let piece = "Sentence \(i) of utterance \(id)."
        let start = text.unicodeScalars.count
        text += piece
        sentences.append(Sentence(range: start..<text.unicodeScalars.count, text: piece))
    }
    return Utterance(id: id, text: text, sentences: sentences, language: "en-US",
                     voiceName: "English (America)", engineVoice: "en-us", rate: 175, pitch: 50,
                     title: TextCleaner.title(of: text))
}
