import GLibKit
import GtkKit
import LectorCommon

/// `lector window`: the reader window's process. One per session: a second launch brings the first one's
/// window to the front (GApplication uniqueness under `WindowApp.applicationID`).
public enum WindowApp {
    /// The window's application id and D-Bus name; its object `/org/lector/Lector/Window` exports
    /// `org.freedesktop.Application` (Activate brings the window up: MPRIS Raise uses it).
    public static let applicationID = "org.lector.Lector.Window"

    /// Runs the window until it is closed; returns the exit status. `arguments` is argv (with "window" after
    /// the program name when started through `lector window`).
    public static func main(_ arguments: [String]) -> Int32 {
        let connection: DBusConnection
        do { connection = try DBusConnection.session() } catch {
            printError("cannot reach the session bus: \(error.message)")
            return 1
        }
        let app = Application(id: applicationID)
        var reader: ReaderWindow?
        app.onActivate {
            if reader == nil {
                let link = DaemonLink(connection: connection)
                reader = ReaderWindow(application: app, link: link)
                link.start()
            }
            reader?.present()
        }
        var args = arguments
        if args.count > 1, args[1] == "window" { args.remove(at: 1) }
        return app.run(Array(args.prefix(1)))
    }
}
