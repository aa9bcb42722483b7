import Audio
import GLibKit

/// The reading's sound: one PulseAudio stream at a time (`PlaybackStream`) on the session's sound server, with
/// the volume clients set and a fade on top, and the server's loss and return turned into one call each.
final class Playback {
    /// Stream volume, linear 0...1, applied to every stream.
    private(set) var volume: Double = 1
    /// A gain on top of `volume` (linear, 0...1) for fades such as the sleep timer's; not a volume clients see.
    private(set) var fade: Double = 1

    /// The stream takes more samples.
    var onWritable: (() -> Void)?
    /// Everything written was played (after `drain`).
    var onDrained: (() -> Void)?
    /// The audio is gone: the stream failed or the sound server went away (one line).
    var onLost: ((String) -> Void)?
    /// The sound server is ready again after a loss (or after it was not there at the start).
    var onBack: (() -> Void)?

    private let server: SoundServer
    private let sampleRate: Int
    private var stream: PlaybackStream?
    /// The sound server was lost and has not come back yet (for the one log line when it does).
    private var serverLost = false

    /// Playback of mono audio at `sampleRate` Hz on `server`.
    init(server: SoundServer, sampleRate: Int) {
        self.server = server
        self.sampleRate = sampleRate
        server.onStateChange = { [unowned self] state in self.serverChanged(state) }
    }

    /// Whether a stream is open.
    var isOpen: Bool { stream != nil }
    /// Samples the stream has played (0 without one).
    var played: Int64 { stream?.playedSamples ?? 0 }
    /// Samples the stream takes now (0 without one).
    var writable: Int { stream?.writableSamples ?? 0 }

    /// Opens a new stream (the previous one must be closed), named `title`, in `language`, corked or playing,
    /// with the properties desktops expect of speech (`media.role=a11y`).
    func open(title: String, language: String, corked: Bool) {
        if case .failed = server.state { server.connect() }
        let stream = PlaybackStream(server: server, name: title, sampleRate: sampleRate, properties: [
            "media.role": "a11y", "media.name": title, "media.language": language,
        ], corked: corked)
        stream.setVolume(volume * fade)
        self.stream = stream
        stream.onWritable = { [unowned self, unowned stream] _ in if self.stream === stream { self.onWritable?() } }
        stream.onDrained = { [unowned self, unowned stream] in if self.stream === stream { self.onDrained?() } }
        stream.onFailed = { [unowned self, unowned stream] reason in
            if self.stream === stream { self.onLost?("playback failed: \(reason)") }
        }
    }

    func write(_ samples: [Int16]) { stream?.write(samples[...]) }
    func drain() { stream?.drain() }
    func setCorked(_ corked: Bool) { stream?.setCorked(corked) }
    func announce(language: String) { stream?.updateProperties(["media.language": language]) }

    /// Closes the stream at once (queued audio is discarded).
    func close() {
        stream?.close()
        stream = nil
    }

    /// Sets the volume (linear, clamped to 0...1).
    func setVolume(_ value: Double) {
        volume = min(1, max(0, value))
        stream?.setVolume(volume * fade)
    }

    /// Sets `fade` (clamped to 0...1) and applies it to the stream at once.
    func setFade(_ value: Double) {
        fade = min(1, max(0, value))
        stream?.setVolume(volume * fade)
    }

    private func serverChanged(_ state: SoundServer.State) {
        switch state {
        case .failed(let reason):
            serverLost = true
            if stream != nil { onLost?("sound server lost: \(reason)") }
        case .disconnected:
            if stream != nil { onLost?("disconnected from the sound server") }
        case .ready:
            let wasLost = serverLost
            serverLost = false
            if wasLost {
                Log.message("reconnected to the sound server")
                onBack?()
            }
        case .connecting:
            break
        }
    }
}
