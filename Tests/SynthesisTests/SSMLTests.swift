import Testing
@testable import Synthesis

@Suite struct SSMLTextTests {
    @Test func tagsAreRemovedAndReferencesDecoded() {
        let markup = #"<speak xml:lang="en">a &lt; b &amp; <prosody rate="x>y">c</prosody> &#62;&#x41;</speak>"#
        let (text, offsets) = SSMLText.content(of: markup)
        #expect(text == "a < b & c >A")
        #expect(offsets.count == markup.unicodeScalars.count + 1)
        #expect(offsets.last == text.unicodeScalars.count)
        // "a" is the 21st scalar of the markup, the first of the content.
        #expect(offsets[20] == 0)
        // Every scalar of "&lt;" maps to the "<" of the content.
        let lt = Array(markup.unicodeScalars).firstIndex(of: "&")!
        #expect((lt..<lt + 4).allSatisfy { offsets[$0] == 2 })
        #expect(offsets[lt + 4] == 3)
    }

    @Test func unknownReferencesAreLiteral() {
        #expect(SSMLText.content(of: "<speak>x &nbsp y &bogus; z</speak>").text == "x &nbsp y &bogus; z")
    }

    @Test func requestRoundTrips() throws {
        let request = WorkerRequest.synthesizeSSML(tag: 7, markup: "<speak>Hi &amp; bye</speak>")
        var decoder = WorkerRequestDecoder()
        decoder.append(WorkerCodec.encode(request)[...])
        #expect(try decoder.next() == request)
    }
}

/// The worker in eSpeak NG's SSML mode.
@Suite(.serialized) struct WorkerSSMLTests {
    @Test func wordsAreReportedInTheTextContent() throws {
        let worker = WorkerProcess.started()
        let markup = #"<speak>Hello <prosody rate="slow">big world</prosody> &amp; more.</speak>"#
        let answer = try #require(worker.synthesize(markup, ssml: true))
        #expect(answer.failure == nil && answer.end == answer.audio.count)
        let content = SSMLText.content(of: markup).text
        let words = answer.words.indices.map { answer.word($0, in: content) }
        #expect(words == ["Hello", "big", "world", "&", "more"], "\(words)")
    }

    @Test func aBreakIsSilence() throws {
        let worker = WorkerProcess.started()
        let plain = try #require(worker.synthesize("<speak>One.</speak>", ssml: true))
        let pause = try #require(worker.synthesize(#"<speak>One.<break time="1s"/></speak>"#, ssml: true))
        let gained = Double(pause.audio.count - plain.audio.count) / 22050
        #expect(gained > 0.5 && gained < 1.1, "\(gained) s")
    }

    @Test func plainTextWithMarkupCharactersSpeaksEveryWord() throws {
        let worker = WorkerProcess.started()
        let text = "a < b & c > d"
        let answer = try #require(worker.synthesize(text))
        let words = answer.words.indices.map { answer.word($0, in: text) }
        #expect(words == ["a", "b", "&", "c", "d"], "\(words)")
        // As long as the same text escaped in SSML mode: the same words and pauses.
        let escaped = try #require(worker.synthesize("<speak>a &lt; b &amp; c &gt; d</speak>", ssml: true))
        #expect(abs(answer.audio.count - escaped.audio.count) < 2205, "\(answer.audio.count) vs \(escaped.audio.count)")
    }
}
