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
final class FailureNotifier {
    private let connection: DBusConnection
    private var notifiedUtterance: UInt64?
    private var lastID: UInt32 = 0
    private var pending: Source?
    private var queued: (summary: String, body: String)?

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Looks at every event; notifies on the first error of each utterance.
    func observe(_ event: SpeechEvent) {
        guard case .error(let utterance, let message, let fatal) = event, notifiedUtterance != utterance else { return }
        notifiedUtterance = utterance
        queued = (fatal ? "Lector stopped reading" : "Lector skipped part of the text", message)
        // Sent from an idle callback: never in the middle of an engine transition.
        guard pending == nil else { return }
        pending = MainContext.idle { [unowned self] in
            self.pending = nil
            if let (summary, body) = self.queued {
                self.queued = nil
                self.send(summary: summary, body: body)
            }
        }
    }

    private func send(summary: String, body: String) {
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
        do {
            let reply = try connection.call(destination: "org.freedesktop.Notifications",
                                            path: "/org/freedesktop/Notifications",
                                            interface: "org.freedesktop.Notifications", method: "Notify",
                                            arguments: arguments, timeoutMilliseconds: 1_000)
            if case .uint32(let id)? = reply.first { lastID = id }
        } catch {
            Log.debug("no desktop notification: \(error)")
        }
    }
}
