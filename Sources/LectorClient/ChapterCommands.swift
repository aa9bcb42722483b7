import GLibKit
import LectorCommon

extension Command {
    /// `lector chapters`: the text's chapters, one a line: number, start time (H:MM:SS), title indented by level.
    static func chapters(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "", summary: "Lists the chapters of the text being read (a document's headings, EPUB navigation, PDF outline): number, start time, title.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.isEmpty else { printError("chapters takes no arguments"); return 2 }
        guard let client = runningClient() else { return 1 }
        return client.printChapters()
    }

    /// `lector chapter N`: moves to chapter N (1-based, as `lector chapters` numbers them).
    static func chapter(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "N", summary: "Goes to chapter N of the text being read (numbered as `lector chapters` lists them); paused stays paused.")
        guard let rest = parse(parser, args) else { return 2 }
        guard rest.count == 1, let n = UInt32(rest[0]), n >= 1 else { printError("chapter takes a chapter number, from 1"); return 2 }
        guard let client = runningClient() else { return 1 }
        return client.call(.jumpToChapter, [.uint32(n - 1)])
    }

    private static func runningClient() -> Client? {
        do { return try Client.connect(startingDaemon: false) } catch {
            printError(error.description)
            return nil
        }
    }
}

extension Client {
    /// Lector1 `Move` by `count` units; prints one line when there is none there. Returns the exit status.
    func move(_ unit: String, by count: Int32) -> Int32 {
        do {
            let reply = try daemonCall(destination: Names.bus, path: Names.path, interface: Names.interface,
                                            method: Lector1.Method.move.rawValue, arguments: [.string(unit), .int32(count)], autoStart: false)
            if reply.first?.bool == false {
                printError("no \(count > 0 ? "next" : "previous") \(unit)")
                return 1
            }
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// Prints the `Chapters` property, one chapter a line. Returns the exit status (1 for a text without
    /// chapters, with one line).
    func printChapters() -> Int32 {
        do {
            let reply = try daemonCall(destination: Names.bus, path: Names.path, interface: "org.freedesktop.DBus.Properties",
                                            method: "Get", arguments: [.string(Names.interface), .string(Lector1.Property.chapters.rawValue)],
                                            autoStart: false)
            guard case .array(_, let items)? = reply.first?.unboxed else { printError("unexpected reply from the daemon"); return 1 }
            guard !items.isEmpty else { printError("the text has no chapters"); return 1 }
            for (n, item) in items.enumerated() {
                guard case .tuple(let t) = item, t.count == 3, let title = t[0].string, let start = t[1].int64,
                      let level = t[2].int64 else { continue }
                print("\(n + 1)\t\(Self.clock(start))\t" + String(repeating: "  ", count: max(0, Int(level) - 1)) + title)
            }
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// `microseconds` as H:MM:SS.
    static func clock(_ microseconds: Int64) -> String {
        let s = max(0, microseconds) / 1_000_000
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))"
    }
}
