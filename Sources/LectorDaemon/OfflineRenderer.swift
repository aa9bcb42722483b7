@preconcurrency import Glibc
import GLibKit
import LectorCommon
import SpeechCore
import Synthesis
import SystemKit

/// `lector read --output PATH.wav`: drives the same synthesis worker as the daemon, with no daemon and no
/// sound server, and writes what the daemon would play to a RIFF/WAVE file (16-bit mono, 22,050 Hz).
/// A sentence that crashes eSpeak NG is skipped with a one-line warning, as in the daemon.
struct OfflineRenderer {
    /// Renders `utterance` to `path`. Returns the number of samples written.
    /// - Throws: `RenderError` with a one-line message when the file cannot be written or the worker not started.
    static func render(_ utterance: Utterance, to path: String) throws(RenderError) -> Int {
        var samples: [Int16] = []
        var worker: ChildProcess?
        var decoder = WorkerFrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var configured: WorkerRequest?

        for (index, sentence) in utterance.sentences.enumerated() {
            if worker == nil {
                do { worker = try ChildProcess(argv: [executablePath(), "worker"]) } catch {
                    throw RenderError(message: "cannot start the synthesis worker: \(error)")
                }
                decoder = WorkerFrameDecoder()
                configured = nil
            }
            guard let child = worker else { break }
            // Each sentence with its own voice: a text given no language changes voice per paragraph.
            let configuration = WorkerRequest.configure(voice: utterance.voice(ofSentence: index).engineVoice,
                                                        rate: utterance.rate, pitch: utterance.pitch)
            if configured != configuration {
                try? child.stdinFD.writeAll(WorkerCodec.encode(configuration))
                configured = configuration
            }
            let tag = UInt32(index + 1)
            let request: WorkerRequest = sentence.markup.map { .synthesizeSSML(tag: tag, markup: $0) } ?? .synthesize(tag: tag, text: sentence.text)
            try? child.stdinFD.writeAll(WorkerCodec.encode(request))
            var done = false
            var sentenceAudio: [Int16] = []
            while !done {
                let n = (try? child.stdoutFD.read(into: &buffer)) ?? 0
                if n == 0 { // the worker died on this sentence
                    let excerpt = sentence.text.count > 60 ? String(sentence.text.prefix(57)) + "…" : sentence.text
                    printError("warning: eSpeak NG crashed on sentence \(index + 1) (“\(excerpt)”); skipped it")
                    child.kill()
                    worker = nil
                    sentenceAudio = []
                    break
                }
                decoder.append(buffer[0..<n])
                do {
                    while let frame = try decoder.next() {
                        switch frame {
                        case .audio(let t, let pcm) where t == tag: sentenceAudio.append(contentsOf: pcm)
                        case .end(let t, _) where t == tag: done = true
                        case .failed(let t, let message) where t == tag:
                            printError("warning: sentence \(index + 1) not read: \(message)")
                            done = true
                        default: break
                        }
                    }
                } catch {
                    throw RenderError(message: "the synthesis worker sent a malformed frame: \(error)")
                }
            }
            samples.append(contentsOf: sentenceAudio)
        }
        worker?.closeStdin()

        guard let file = fopen(path, "wb") else {
            throw RenderError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        let header = WAV.header(sampleRate: ReadingEngine.sampleRate, samples: samples.count)
        let ok = header.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
            && samples.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) == $0.count }
        guard ok else { throw RenderError(message: "cannot write \(path): \(String(cString: strerror(errno)))") }
        return samples.count
    }
}

/// A failure of offline rendering, one line.
struct RenderError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
