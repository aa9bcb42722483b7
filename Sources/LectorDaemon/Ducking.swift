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
            // Only the session's daemon loads the server's ducking module (and unloads it at exit): a separate
            // instance would unload it under the daemon's feet.
            let ducker = Ducker(server: server, attenuationDecibels: decibels, serverSide: persistent)
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
        let restorer = ducker ?? Ducker(server: server, serverSide: false)
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

    /// Restores everything before the daemon exits, without waiting: `completion` runs on the main loop once
    /// the sound server has acknowledged every volume put back and every player Lector paused has been sent
    /// Play (when its PlaybackStatus, awaited, is still Paused). The daemon lets its loop run until then, at
    /// most `exitWaitMilliseconds`.
    func finish(_ completion: @escaping () -> Void) {
        active = false
        var waiting = 2
        let one = { waiting -= 1; if waiting == 0 { completion() } }
        if let players { players.resume(then: one) } else { one() }
        if let ducker { ducker.shutDown(completion: one) } else { one() }
    }

    /// How long, in ms, the exiting daemon keeps its main loop running for `finish` to complete: a stuck
    /// sound server or player delays the exit by at most this.
    static let exitWaitMilliseconds: UInt32 = 1_000

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
///
/// Every call is asynchronous: a player that answers late or never holds up nothing but itself. `pause()` and
/// `resume()` each start a new round; an answer that comes after a newer round began is ignored, so a player
/// is paused only while Lector reads.
final class OtherPlayers {
    private let connection: DBusConnection
    /// Unique bus names of the players Lector paused, or sent Pause to in this round.
    private var paused: [String] = []
    /// Counts rounds; answers to an older round are ignored.
    private var round = 0
    /// Players asked their PlaybackStatus by `resume` that have not answered yet, and what runs when none is.
    private var resuming = 0
    private var whenResumed: [() -> Void] = []

    /// How long, in ms, a call to the bus or to a player (name lookups, PlaybackStatus, Pause, Play) may stay
    /// unanswered before that player is left alone for this round.
    static let callTimeoutMilliseconds: Int32 = 5_000

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Pauses every other player whose PlaybackStatus is Playing.
    func pause() {
        round += 1
        let round = round
        players { [weak self] owner in
            self?.status(of: owner) { status in
                guard let self, self.round == round, status == MPRIS.PlaybackStatus.playing.rawValue, !self.paused.contains(owner) else { return }
                // Counted as paused from now on: a resume() before the answer asks this player too, and its
                // PlaybackStatus, answered after the Pause, tells whether it did pause.
                self.paused.append(owner)
                self.control(owner, .pause) { ok in
                    if !ok, self.round == round { self.paused.removeAll { $0 == owner } }
                }
            }
        }
    }

    /// Resumes the players `pause()` paused that are still Paused; `completion` runs once every player being
    /// resumed (by this call or an earlier one) has answered its PlaybackStatus (or failed to) and been sent
    /// Play if it is still Paused.
    func resume(then completion: @escaping () -> Void = {}) {
        round += 1
        let owners = paused
        paused = []
        resuming += owners.count
        whenResumed.append(completion)
        if resuming == 0 { return resumed() }
        for owner in owners {
            status(of: owner) { [weak self] status in
                guard let self else { return }
                // Done once Play is sent: its answer changes nothing, and an exiting daemon flushes it out.
                if status == MPRIS.PlaybackStatus.paused.rawValue { self.control(owner, .play) { _ in } }
                self.resumed(one: true)
            }
        }
    }

    /// Counts one player answered (or failed) after `resume`; runs the completions once none is left.
    private func resumed(one: Bool = false) {
        if one { resuming -= 1 }
        guard resuming == 0 else { return }
        let waiting = whenResumed
        whenResumed = []
        for body in waiting { body() }
    }

    /// Calls `found` with the unique bus name of each owner of an org.mpris.MediaPlayer2.* name, this daemon's
    /// own excepted, once per owner (it is also what Pause and Play are sent to).
    private func players(_ found: @escaping (String) -> Void) {
        let bus = "org.freedesktop.DBus", path = "/org/freedesktop/DBus"
        connection.call(destination: bus, path: path, interface: bus, method: "ListNames",
                        timeoutMilliseconds: Self.callTimeoutMilliseconds) { [weak self] reply in
            guard let self, case .success(let values) = reply, case .array(_, let items)? = values.first else { return }
            var seen: Set<String> = [self.connection.uniqueName]
            for name in items.compactMap(\.string) where name.hasPrefix(MPRIS.busNamePrefix) {
                self.connection.call(destination: bus, path: path, interface: bus, method: "GetNameOwner",
                                     arguments: [.string(name)], timeoutMilliseconds: Self.callTimeoutMilliseconds) { reply in
                    guard case .success(let values) = reply, let owner = values.first?.string,
                          seen.insert(owner).inserted else { return }
                    found(owner)
                }
            }
        }
    }

    /// Calls `answer` with the player's PlaybackStatus, nil when it cannot tell.
    private func status(of owner: String, _ answer: @escaping (String?) -> Void) {
        connection.call(destination: owner, path: MPRIS.path, interface: "org.freedesktop.DBus.Properties",
                        method: "Get", arguments: [.string(MPRIS.playerInterface), .string(MPRIS.PlayerProperty.playbackStatus.rawValue)],
                        timeoutMilliseconds: Self.callTimeoutMilliseconds, autoStart: false) { reply in
            guard case .success(let values) = reply else { return answer(nil) }
            if case .variant(let inner)? = values.first { return answer(inner.string) }
            answer(values.first?.string)
        }
    }

    /// Sends Pause or Play; `answer` tells whether the player acknowledged it.
    private func control(_ owner: String, _ method: MPRIS.PlayerMethod, _ answer: @escaping (Bool) -> Void) {
        connection.call(destination: owner, path: MPRIS.path, interface: MPRIS.playerInterface,
                        method: method.rawValue, timeoutMilliseconds: Self.callTimeoutMilliseconds, autoStart: false) { reply in
            if case .failure(let error) = reply { Log.debug("\(method.rawValue) of the player \(owner): \(error.message)") }
            answer((try? reply.get()) != nil)
        }
    }
}
