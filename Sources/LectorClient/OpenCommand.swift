@preconcurrency import Glibc
import GLibKit
import LectorCommon

extension Command {
    /// `lector open [FILE | file:// URI …]`, what the desktop entry runs (`Exec=lector open %U`): files are read
    /// (the first at once, the others queued after it); with none, what a click on Lector's entry or its media
    /// widget asks for: pause when reading, else go on (or read the last text again), and say in a desktop
    /// notification what is being read. A URI of another scheme is refused in one line (Lector reads local
    /// files only; nothing is fetched).
    static func open(_ args: [String], arguments: [String], local: (any LocalCommands)?) -> Int32 {
        let parser = OptionParser(parameterString: "[FILE | URI …]",
                                  summary: "Reads FILEs or file:// URIs (the first now, the others after it). Without one, pauses or goes on and says what is read in a notification.")
        guard let rest = parse(parser, args) else { return 2 }
        guard !rest.isEmpty else { return toggleAndTell() }
        var paths: [String] = []
        for item in rest {
            guard let path = localPath(item) else {
                printError("'\(item)' is not a local file; Lector reads files and file:// URIs only")
                return 1
            }
            paths.append(path)
        }
        for (i, path) in paths.enumerated() {
            let read = ["lector read"] + (i == 0 ? [] : ["--queue"]) + ["--file", path]
            let status = main(["lector", "read"] + read.dropFirst(), local: local)
            if status != 0 { return status }
        }
        return 0
    }

    /// A path for a plain path or a `file://` URI (`g_filename_from_uri`), nil for another scheme.
    static func localPath(_ item: String) -> String? {
        if item.hasPrefix("/") || !item.contains(":") { return item }
        return fileURIToPath(item)
    }

    /// Toggles reading and sends one notification saying what is read ("Reading", "Paused") and its title.
    private static func toggleAndTell() -> Int32 {
        let client: Client
        do { client = try Client.connect(startingDaemon: true) } catch {
            printError(error.description)
            return 1
        }
        let status = client.call(.toggle)
        client.notifyWhatIsRead()
        return status == 0 ? 0 : status
    }
}

extension Client {
    /// One desktop notification (`org.freedesktop.Notifications.Notify`, Desktop Notifications Specification 1.2)
    /// of the player's state and what is read: "Reading" / "Paused" / "Nothing to read", and `xesam:album`.
    /// Waits at most 2 s for the notification server; without one, nothing is shown and nothing fails.
    func notifyWhatIsRead() {
        let state = (try? mprisProperty(.playbackStatus).string) ?? ""
        let album = (try? mprisProperty(.metadata).dictionary?[MPRIS.MetadataKey.album.rawValue]?.string) ?? nil
        let summary: String
        switch (state, album) {
        case (_, nil): summary = "Nothing to read"
        case (MPRIS.PlaybackStatus.playing.rawValue, _): summary = "Reading"
        default: summary = "Paused"
        }
        let body = album ?? "Give Lector a file to read: lector read FILE, or Open With Lector."
        let arguments: [Variant] = [
            .string("Lector"), .uint32(0), .string(Names.applicationID), .string(summary), .string(body),
            .strings([]), .vardict(["desktop-entry": .string(Names.applicationID), "transient": .bool(true)]),
            .int32(3000),
        ]
        _ = try? connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                 interface: "org.freedesktop.Notifications", method: "Notify", arguments: arguments,
                                 timeoutMilliseconds: 2000, autoStart: true)
    }
}
