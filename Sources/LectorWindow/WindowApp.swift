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
    /// the program name when started through `lector window`), then files to read (paths or `file://` URIs:
    /// the first is read), and GApplication's options (`--gapplication-service` for D-Bus activation).
    public static func main(_ arguments: [String]) -> Int32 {
        let connection: DBusConnection
        do { connection = try DBusConnection.session() } catch {
            printError("cannot reach the session bus: \(error.message)")
            return 1
        }
        let app = Application(id: applicationID)
        var reader: ReaderWindow?
        func show() -> ReaderWindow {
            if let reader { return reader }
            let link = DaemonLink(connection: connection)
            let made = ReaderWindow(application: app, link: link)
            reader = made
            link.start()
            return made
        }
        app.onActivate { show().present() }
        app.onOpen { paths in
            let window = show()
            window.present()
            if let first = paths.first { window.open(first) }
        }
        var args = arguments
        if args.count > 1, args[1] == "window" { args.remove(at: 1) }
        return app.run(args)
    }
}
