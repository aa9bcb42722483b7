/// Where a run that starts inside a sentence (a seek, or resuming after the stream was released or the sound
/// server lost) must begin in the sentence's new synthesis, found by its words.
///
/// eSpeak NG keeps state from one synthesis to the next: the same sentence synthesized after other sentences
/// differs in its samples, and its pauses (at commas, between clauses) by tens of ms. A sample offset taken
/// from one synthesis therefore points elsewhere in the next one, up to ~60 ms later in a sentence of a few
/// seconds, and that audio would never be heard. The anchor keeps the word that holds the offset and how far
/// into it the offset lies; the new synthesis's word events place that word, and the run begins that far into
/// it, never past the start of the following word. Words are as the worker reports them
/// (`WorkerFrame.word`, from eSpeak NG's `espeakEVENT_WORD`).
struct SeekAnchor: Equatable {
    /// The word holding the offset (0-based, in the order the worker reports them), or -1 before the first word.
    let word: Int
    /// Samples from the start of that word (of the sentence when `word` is -1) to the offset.
    let into: Int64

    /// The anchor of `offset` samples into a sentence whose words start at `wordStarts` (samples from the
    /// sentence's start, ascending), both from the same synthesis.
    init(offset: Int64, wordStarts: [Int64]) {
        var word = -1
        while word + 1 < wordStarts.count && wordStarts[word + 1] <= offset { word += 1 }
        self.word = word
        self.into = offset - (word < 0 ? 0 : wordStarts[word])
    }

    /// Samples of the new synthesis to skip, given where its words start so far (samples from the sentence's
    /// start, in order), or nil while the anchor's word is not known yet. Once the word after the anchor's is
    /// known too, the result never lies past its start.
    func skip(newWordStarts: [Int64]) -> Int64? {
        guard word < newWordStarts.count else { return nil }
        var skip = (word < 0 ? 0 : newWordStarts[word]) + into
        if word + 1 < newWordStarts.count { skip = min(skip, newWordStarts[word + 1]) }
        return skip
    }
}
