@preconcurrency import Glibc
import Audio
import GLibKit
import LectorCommon
import SpeechCore

/// What Lector does to other audio while it reads.
enum DuckingMode: Equatable {
    /// Nothing.
    case off
    /// Lowers other streams on Lector's sink by this many dB (negative), as the original iOS reader did.
    case lower(decibels: Double)
    /// Pauses the other MPRIS players that are playing, and resumes those (only those) when Lector stops.
    case pauseOtherPlayers

    /// The default: -15 dB.
    static let standard = DuckingMode.lower(decibels: -15)
}

/// Follows the reading state and ducks other audio while Lector reads: `reading` ducks; `paused`, `stopped`
/// and the daemon's exit restore.
///
/// Lowered streams are written to `$XDG_STATE_HOME/lector/ducked` while they are lowered, so that after a crash
/// the next daemon puts them back (only those whose volume is still the one Lector set).
final class Ducking {
    private let mode: DuckingMode
    private let ducker: Ducker?
    private let players: OtherPlayers?
    private var active = false
    private let server: SoundServer
    /// The ducker that puts a crashed daemon's leftovers back when ducking is off (`ducker` otherwise).
    private var leftoverRestorer: Ducker?

    /// Where lowered streams are kept while lowered: one line per sink input,
    /// "INDEX ORIGINAL,… DUCKED,…" (software volumes per channel). Read back with `readRegularFile`.
    static var recordPath: String { SavedReading.directory + "/ducked" }
    /// Most lowered streams recorded (those after are put back by this daemon, not by the next one).
    static let maximumRecordedStreams = 1024
    /// Largest `ducked` file read back, in bytes: `maximumRecordedStreams` lines of up to 32 channels (a
    /// PulseAudio limit, `PA_CHANNELS_MAX`) of two 10-digit volumes each.
    static let maximumRecordBytes = maximumRecordedStreams * (11 + 2 * 32 * 11 + 1)

    /// - Parameter persistent: keep the lowered streams on disk (the session's daemon; not a separate instance,
    ///   whose records would mix with the daemon's).
    init(mode: DuckingMode, server: SoundServer, connection: DBusConnection, persistent: Bool) {
        self.mode = mode
        switch mode {
        case .off:
            ducker = nil
            players = nil
        case .lower(let decibels):
            let ducker = Ducker(server: server, attenuationDecibels: decibels)
            if persistent { ducker.onChange = { streams in Self.save(streams) } }
            self.ducker = ducker
            players = nil
        case .pauseOtherPlayers:
            ducker = nil
            players = OtherPlayers(connection: connection)
        }
        self.server = server
    }

    /// Puts back whatever a crashed daemon left lowered, whatever the mode is now. Only for the daemon that
    /// owns Lector's bus name: a second one that is about to exit must not touch the first one's streams.
    func restoreLeftovers() {
        let leftovers = Self.load()
        guard !leftovers.isEmpty else { return }
        Log.message("putting back the volume of \(leftovers.count) stream(s) a previous Lector lowered")
        // Kept: the server may not be ready yet, and the leftovers are put back once it is.
        let restorer = ducker ?? Ducker(server: server)
        leftoverRestorer = restorer
        restorer.restore(leftovers: leftovers)
        removeFile(Self.recordPath)
    }

    /// Ducks while `state` is reading, restores otherwise.
    func follow(_ state: SpeechState) {
        let reading = state == .reading
        guard reading != active else { return }
        active = reading
        if reading {
            ducker?.duck()
            players?.pause()
        } else {
            ducker?.restore()
            players?.resume()
        }
    }

    /// Restores everything before the daemon exits: waits (iterating the main loop) until the server has
    /// acknowledged, at most `timeoutMilliseconds`.
    func finish(timeoutMilliseconds: Int64 = 1_000) {
        active = false
        players?.resume()
        guard let ducker else { return }
        var done = false
        ducker.restore { done = true }
        let deadline = MainContext.monotonicMicroseconds + timeoutMilliseconds * 1_000
        while !done && MainContext.monotonicMicroseconds < deadline { _ = MainContext.iterate(mayBlock: false); usleep(1_000) }
    }

    private static func save(_ streams: [DuckedStream]) {
        guard !streams.isEmpty else {
            removeFile(recordPath)
            return
        }
        func list(_ values: [UInt32]) -> String { values.map(String.init).joined(separator: ",") }
        let text = streams.prefix(maximumRecordedStreams).map { "\($0.index) \(list($0.original)) \(list($0.ducked))\n" }.joined()
        do { try writeFileAtomically(recordPath, contents: Array(text.utf8)) } catch {
            Log.warning("cannot keep the list of lowered streams: \(error)")
        }
    }

    private static func load() -> [DuckedStream] {
        let read: [UInt8]?
        do { read = try StateFiles.read(recordPath, maximumBytes: maximumRecordBytes) } catch {
            Log.warning("cannot read the streams a previous Lector lowered: \(error.message); leaving them as they are")
            return []
        }
        guard let bytes = read else { return [] }
        func values(_ field: Substring) -> [UInt32]? {
            let parts = field.split(separator: ",").map { UInt32($0) }
            return parts.isEmpty || parts.contains(nil) ? nil : parts.map { $0! }
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let index = UInt32(fields[0]), let original = values(fields[1]),
                  let ducked = values(fields[2]), original.count == ducked.count else { return nil }
            return DuckedStream(index: index, original: original, ducked: ducked)
        }
    }
}

/// The other MPRIS players on the session bus (org.mpris.MediaPlayer2.*, this daemon's own name excepted): pauses
/// those that are playing, and later resumes exactly those, if they are still paused.
/// Source: the MPRIS D-Bus Interface Specification 2.2, org.mpris.MediaPlayer2.Player.
final class OtherPlayers {
    private let connection: DBusConnection
    /// Unique bus names of the players Lector paused.
    private var paused: [String] = []

    init(connection: DBusConnection) {
        self.connection = connection
    }

    func pause() {
        for owner in players() where status(of: owner) == "Playing" {
            guard (try? connection.call(destination: owner, path: "/org/mpris/MediaPlayer2",
                                        interface: "org.mpris.MediaPlayer2.Player", method: "Pause",
                                        timeoutMilliseconds: 500, autoStart: false)) != nil else { continue }
            paused.append(owner)
        }
    }

    func resume() {
        for owner in paused where status(of: owner) == "Paused" {
            _ = try? connection.call(destination: owner, path: "/org/mpris/MediaPlayer2",
                                     interface: "org.mpris.MediaPlayer2.Player", method: "Play",
                                     timeoutMilliseconds: 500, autoStart: false)
        }
        paused = []
    }

    /// The unique bus names owning an org.mpris.MediaPlayer2.* name, this daemon's own excepted (each owner
    /// asked for once: it is also what Pause and Play are sent to).
    private func players() -> [String] {
        guard let reply = try? connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                               interface: "org.freedesktop.DBus", method: "ListNames",
                                               timeoutMilliseconds: 500),
              case .array(_, let items)? = reply.first else { return [] }
        var seen: Set<String> = [connection.uniqueName]
        return items.compactMap(\.string).filter { $0.hasPrefix("org.mpris.MediaPlayer2.") }
            .compactMap(owner(of:)).filter { seen.insert($0).inserted }
    }

    private func owner(of name: String) -> String? {
        (try? connection.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                       interface: "org.freedesktop.DBus", method: "GetNameOwner", arguments: [.string(name)],
                       timeoutMilliseconds: 500))?.first?.string
    }

    private func status(of name: String) -> String? {
        guard let reply = try? connection.call(destination: name, path: "/org/mpris/MediaPlayer2",
                                        interface: "org.freedesktop.DBus.Properties", method: "Get",
                                        arguments: [.string("org.mpris.MediaPlayer2.Player"), .string("PlaybackStatus")],
                                        timeoutMilliseconds: 500, autoStart: false) else { return nil }
        if case .variant(let inner)? = reply.first { return inner.string }
        return reply.first?.string
    }
}
