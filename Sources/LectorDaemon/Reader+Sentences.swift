import SpeechCore

extension Reader {
    /// Most sentences one `Sentences` call lists.
    static let maximumListedSentences = 4096

    /// Up to `count` (at most `maximumListedSentences`) sentences of the current text from index `first`; the
    /// rest of a long text is cut first when they lie past what is cut. Empty when there is no text.
    func sentences(from first: Int, count: Int) -> [Sentence] {
        guard var u = current, first >= 0, count > 0 else { return [] }
        let wanted = min(count, Self.maximumListedSentences)
        if !u.isComplete && first + wanted > u.sentences.count {
            pending.finish()
            u = current ?? u
        }
        guard first < u.sentences.count else { return [] }
        return Array(u.sentences[first..<min(u.sentences.count, first + wanted)])
    }
}
