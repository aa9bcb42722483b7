import GLibKit
import LectorCommon
import SpeechCore

/// Tells the person, not only the log, when reading fails: a desktop notification through
/// `org.freedesktop.Notifications` (Desktop Notifications Specification 1.2, `Notify`), because whoever pressed
/// a media key has no terminal to read an error in.
///
/// One notification per utterance, at its first error (a lost sentence or the end of reading), never one per
/// sentence; a later failure replaces the earlier notification on screen (`replaces_id`). Without a
/// notification server on the bus, nothing happens but one debug line.
///
/// `Notify` is called asynchronously: a notification server that answers late or never holds up nothing. The
/// id to replace comes with its answer, so a notification waits for the previous one's answer (at most
/// `notifyTimeoutMilliseconds`) before it is sent; only the latest one waits.
final class FailureNotifier {
    private let connection: DBusConnection
    private var notifiedUtterance: UInt64?
    private var lastID: UInt32 = 0
    private var pending: Source?
    private var queued: (summary: String, body: String)?
    /// Whether a `Notify` call has not been answered yet.
    private var inFlight = false

    /// How long, in ms, a `Notify` call may stay unanswered; a notification queued meanwhile is sent after it,
    /// then without replacing anything.
    static let notifyTimeoutMilliseconds: Int32 = 5_000

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Looks at every event; notifies on the first error of each utterance.
    func observe(_ event: SpeechEvent) {
        guard case .error(let utterance, let message, let fatal) = event else { return }
        if message.hasPrefix(ReadingEngine.noOutputPrefix) {
            // Each time reading is asked for and cannot be heard (replacing the last notification on screen).
            let reason = String(message.dropFirst(ReadingEngine.noOutputPrefix.count))
            queued = ("No sound output", "Lector reads on when the sound server is back (\(reason)).")
        } else {
            guard notifiedUtterance != utterance else { return }
            queued = (fatal ? "Lector stopped reading" : "Lector skipped part of the text", message)
        }
        notifiedUtterance = utterance
        // Sent from an idle callback: never in the middle of an engine transition.
        guard pending == nil else { return }
        pending = MainContext.idle { [unowned self] in
            self.pending = nil
            self.sendQueued()
        }
    }

    /// Sends the queued notification, unless one is waiting for its answer (then it follows that answer).
    private func sendQueued() {
        guard !inFlight, let (summary, body) = queued else { return }
        queued = nil
        let arguments: [Variant] = [
            .string("Lector"),                       // app_name
            .uint32(lastID),                         // replaces_id
            .string(Names.applicationID),            // app_icon
            .string(summary),
            .string(body),
            .array(elementType: "s", []),            // actions
            .vardict(["desktop-entry": .string(Names.applicationID), "urgency": .byte(1)]),
            .int32(-1),                              // expire_timeout: the server's default
        ]
        inFlight = true
        connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                        interface: "org.freedesktop.Notifications", method: "Notify", arguments: arguments,
                        timeoutMilliseconds: Self.notifyTimeoutMilliseconds) { [weak self] reply in
            guard let self else { return }
            self.inFlight = false
            switch reply {
            case .success(let values): if case .uint32(let id)? = values.first { self.lastID = id }
            case .failure(let error): Log.debug("no desktop notification: \(error)")
            }
            self.sendQueued()
        }
    }
}
