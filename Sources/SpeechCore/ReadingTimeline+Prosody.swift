extension ReadingTimeline {
    /// The rate, pitch or voice of `u`, the utterance being read, changed (`SpeechAction.changeProsody`).
    ///
    /// The audio up to the first word not yet handed to the stream is kept, the rest is discarded, and
    /// synthesis goes on from that word with the new settings: what the stream holds already plays out, so
    /// the change is heard at the next word, and the position only ever moves forward. Where no word boundary
    /// is known past what is written (the last word of a sentence is being written, or the sentence is SSML,
    /// whose markup cannot be cut at a word), the sentence being synthesized is kept whole and the change is
    /// heard from the next sentence.
    public mutating func changeProsody(_ u: Utterance, played: Int64, writable: Int) -> [TimelineAction] {
        // Moved out, not copied, so that cutting its audio does not copy it; every return puts it back.
        guard self.run?.utterance.id == u.id, var run = self.run.take() else { return [] }
        run.anchor = nil // the first sentence's request may be dropped: its place stays the plain sample offset
        let old = run.utterance
        run.utterance = u
        // Sentences before this run keep the lengths they had, so the position counted from them does not jump.
        durations.freeze(before: run.firstSentence, of: old)
        guard !run.draining else { self.run = run; return [] } // everything is in the stream already
        let written = run.written
        let cut = run.events.firstIndex { e in
            guard e.sample >= written else { return false }
            switch e.kind {
            case .sentence: return true
            case .word(_, let index): return u.sentences[index].markup == nil && e.sample > (run.sentenceAt[index] ?? -1)
            }
        }
        guard let cut else {
            let actions = keepSentenceBeingSynthesized(&run)
            durations.forget(from: run.nextToRequest, of: u.id)
            self.run = run
            return actions + requestMore(played: played)
        }
        let event = run.events[cut]
        let sample = event.sample
        // Discard the audio and events from the cut on, and the requests in flight.
        let keep = run.pcmStart + Int(sample - (run.timeline - Int64(run.pcm.count - run.pcmStart)))
        if keep < run.pcm.count { run.pcm.removeSubrange(max(keep, run.pcmStart)..<run.pcm.count) }
        run.timeline = sample
        run.events.removeSubrange(cut...)
        var actions: [TimelineAction] = [.cancel(run.inFlight.map(\.tag))]
        run.inFlight = []
        switch event.kind {
        case .sentence(let index):
            run.nextToRequest = index
            durations.forget(from: index, of: u.id)
        case .word(let range, let index):
            durations.forget(from: index + 1, of: u.id)
            let sentence = u.sentences[index]
            let offset = range.lowerBound - sentence.range.lowerBound
            let rest = sentence.spoken?.suffix(fromWritten: offset).text
                ?? String(String.UnicodeScalarView(sentence.text.unicodeScalars.dropFirst(offset)))
            let (tag, asked) = request(rest, ssml: false, index: index, of: u)
            actions += asked
            let prefix = sample - (run.sentenceAt[index] ?? sample)
            run.inFlight.append(.init(tag: tag, index: index, textOffset: offset, prefix: prefix))
            // Until its rest is synthesized, the sentence is the part kept at the old rate plus the rest
            // estimated at the new one.
            durations.restart(index, of: u.id, prefix: prefix, scalars: sentence.range.count - offset, rate: u.rate)
            run.nextToRequest = index + 1
        }
        self.run = run
        return actions + requestMore(played: played) + feed(writable: writable)
    }

    /// No boundary is known past what is written: the request whose audio has begun is kept (at the old
    /// settings), those after it are dropped and asked again.
    private func keepSentenceBeingSynthesized(_ run: inout ReadingRun) -> [TimelineAction] {
        if let current = run.inFlight.first(where: { run.sentenceStart[$0.tag] != nil }) {
            let dropped = run.inFlight.filter { $0.tag != current.tag }.map(\.tag)
            run.inFlight = [current]
            run.nextToRequest = current.index + 1
            return [.cancel(dropped)]
        }
        guard let first = run.inFlight.first else { return [] }
        let dropped = run.inFlight.map(\.tag)
        run.inFlight = []
        run.nextToRequest = first.index
        return [.cancel(dropped)]
    }
}
