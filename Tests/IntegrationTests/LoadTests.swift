import GLibKit
import Foundation
import Testing

extension Integration {
    /// Many clients at once, and a long day's use: no deadlock, one stream at a time, nothing leaked, memory flat.
    @Suite(.privateSession)
    struct Load {
        /// The daemon's process id (org.freedesktop.DBus.GetConnectionUnixProcessID of its bus name).
        static func daemonPID(_ bus: BusConnection) throws -> Int32 {
            let reply = bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                 "GetConnectionUnixProcessID", "('org.lector.Lector',)")
            // "(uint32 1234,)"
            let digits = reply.value?.split(separator: " ").last?.filter(\.isNumber) ?? ""
            return try #require(Int32(digits), "no daemon pid: \(reply)")
        }

        /// VmRSS of `pid` in KiB.
        static func residentKiB(_ pid: Int32) -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Int(line.filter(\.isNumber)) ?? 0
        }

        /// Open file descriptors of `pid`.
        static func descriptors(_ pid: Int32) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        }

        /// The pids of `pid`'s children still running (zombies left out unless `includingZombies`).
        static func children(_ pid: Int32, includingZombies: Bool = false) -> [Int32] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            var pids: [Int32] = []
            for task in tasks {
                let list = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
                pids += list.split(separator: " ").compactMap { Int32($0) }.filter { includingZombies || processExists($0) }
            }
            return pids
        }

        static func sinkInputs(_ session: PrivateSession) async throws -> Int {
            try await sinkInputIndexes(session).count
        }

        static func sinkInputIndexes(_ session: PrivateSession) async throws -> Set<Substring> {
            let listing = try await session.run("pactl", ["list", "short", "sink-inputs"]).stdout
            return Set(listing.split(separator: "\n").compactMap { $0.split(separator: "\t").first })
        }

        @Test("8 clients speaking and toggling at once: every call answered, one stream at a time, nothing leaked")
        func eightClients() async throws {
            let session = try await world()
            let control = try BusConnection(address: session.busAddress)
            let pid = try Self.daemonPID(control)
            let seconds = ProcessInfo.processInfo.environment["LECTOR_LOAD_SECONDS"].flatMap(Double.init) ?? 60
            let deadline = Date().addingTimeInterval(seconds)
            let address = session.busAddress

            // Each client on a thread of its own: the calls block, and eight must be in flight at once.
            let problems = ProblemList()
            let group = DispatchGroup()
            for client in 0..<8 {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    guard let bus = try? BusConnection(address: address) else {
                        problems.add("client \(client) cannot connect")
                        return
                    }
                    var random = EngineFuzz.Generator(state: UInt64(client + 1) * 0x9E37_79B9)
                    var n = 0
                    while Date() < deadline {
                        let reply: BusConnection.Reply
                        switch random.next(10) {
                        case 0..<4:
                            n += 1
                            reply = bus.lector("Speak", "('Client \(client) reads its text number \(n). It has two sentences.', @a{sv} {'rate': <int32 300>})")
                        case 4..<7: reply = bus.lector("Toggle")
                        case 7: reply = bus.lector("Pause")
                        case 8: reply = bus.lector("Resume")
                        default: reply = bus.call("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2",
                                                  "org.freedesktop.DBus.Properties", "GetAll", "('org.mpris.MediaPlayer2.Player',)")
                        }
                        if let name = reply.errorName, !Abuse.isProperError(reply) {
                            problems.add("client \(client): \(name): \(reply)")
                        }
                        usleep(UInt32(random.next(100_000)))
                    }
                }
            }
            // Meanwhile: never more than one stream. A stream replaced while the server was still creating it
            // can only be removed once created (libpulse disconnects READY streams only), so two may coexist
            // for the few ms that takes, the old one silent; two that are still both there 100 ms later are
            // two streams at once.
            var mostStreams = 0
            while Date() < deadline {
                let first = try await Self.sinkInputIndexes(session)
                if first.count > 1 {
                    try await Task.sleep(for: .milliseconds(100))  // two streams 100 ms apart are two at once
                    let lasting = first.intersection(try await Self.sinkInputIndexes(session))
                    mostStreams = max(mostStreams, lasting.count)
                } else {
                    mostStreams = max(mostStreams, first.count)
                }
                try await Task.sleep(for: .milliseconds(200))  // the watch's sampling period
            }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                group.notify(queue: .global()) { done.resume() }
            }
            #expect(problems.items.isEmpty, "\(problems.items.prefix(5))\n\(session.daemonLogs())")
            #expect(mostStreams <= 1, "\(mostStreams) streams at once")

            // Afterwards: the metadata is the text being read, and a stop leaves no stream and one worker at most.
            _ = control.lector("Speak", "('The last words of the test.', @a{sv} {})")
            let metadata = control.call("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2",
                                        "org.freedesktop.DBus.Properties", "Get", "('org.mpris.MediaPlayer2.Player', 'Metadata')")
            #expect(metadata.value?.contains("The last words of the test.") == true, "\(metadata)")
            _ = control.lector("Stop")
            _ = try await eventually(timeout: 0.5) { try await Self.sinkInputs(session) == 0 }
            #expect(try await Self.sinkInputs(session) == 0, "a stream was left after Stop")
            #expect(Self.children(pid).count <= 1, "workers: \(Self.children(pid))")
            try await session.quiesce()
            let (read, audio) = try await session.readAndRecord(["hello"])
            #expect(read.status == 0 && audio.audibleDuration > 0.2, "\(read) \(audio.summary)")
        }

        @Test("soak: 10,000 short texts in a row and a 1 MB text at the highest rate keep memory flat and leak no descriptor")
        func soak() async throws {
            let session = try await world()
            let bus = try BusConnection(address: session.busAddress)
            let pid = try Self.daemonPID(bus)
            let count = ProcessInfo.processInfo.environment["LECTOR_SOAK_COUNT"].flatMap(Int.init) ?? 10_000

            var failures = 0
            func speak(_ i: Int) {
                let reply = bus.lector("Speak", "('Short text number \(i).', @a{sv} {})")
                if reply.value == nil && failures < 3 {
                    failures += 1
                    Issue.record("Speak \(i): \(reply)\n\(session.daemonLogs())")
                }
            }
            for i in 0..<1_000 { speak(i) }
            let rssBefore = Self.residentKiB(pid), fdsBefore = Self.descriptors(pid)
            for i in 1_000..<count { speak(i) }
            _ = bus.lector("Stop")
            try await Task.sleep(for: .milliseconds(500))  // Stop closes what it closes; then the measure
            let rssAfter = Self.residentKiB(pid), fdsAfter = Self.descriptors(pid)
            print("soak: \(count) texts: RSS \(rssBefore) → \(rssAfter) KiB (\(rssAfter - rssBefore) KiB), descriptors \(fdsBefore) → \(fdsAfter)")
            #expect(rssAfter - rssBefore < 5 * 1024, "RSS grew \(rssAfter - rssBefore) KiB over \(count - 1_000) texts")
            #expect(fdsAfter <= fdsBefore + 2, "descriptors \(fdsBefore) → \(fdsAfter)")

            // 1 MB at 450 wpm, jumping ahead every 200 ms so that synthesis runs through much of it.
            let paragraph = "Lector reads a long book at its highest rate, and the reader jumps ahead now and then. "
            let megabyte = String(repeating: paragraph, count: 1_048_576 / paragraph.utf8.count)
            let speakBig = bus.call("org.lector.Lector", "/org/lector/Lector", "org.lector.Lector1", "Speak",
                                    arguments: [.string(megabyte), .vardict(["rate": .int32(450)])], timeoutMs: 60_000)
            #expect(speakBig.value != nil, "\(speakBig)")
            try await Task.sleep(for: .seconds(2))  // reads for 2 s before the first measure
            let rssReading = Self.residentKiB(pid), fdsReading = Self.descriptors(pid)
            let until = ContinuousClock.now + .seconds(20)
            var jumps = 0
            while ContinuousClock.now < until {
                _ = bus.player("Seek", "(int64 20000000,)")
                jumps += 1
                try await Task.sleep(for: .milliseconds(200))  // one jump every 0.2 s, for 20 s
            }
            let rssLater = Self.residentKiB(pid), fdsLater = Self.descriptors(pid)
            print("soak: 1 MB text, \(jumps) jumps of 20 s: RSS \(rssReading) → \(rssLater) KiB (\(rssLater - rssReading) KiB), descriptors \(fdsReading) → \(fdsLater)")
            #expect(rssLater - rssReading < 5 * 1024, "RSS grew \(rssLater - rssReading) KiB while reading 1 MB")
            #expect(fdsLater <= fdsReading + 2, "descriptors \(fdsReading) → \(fdsLater)")
            #expect(bus.lectorState == "reading", "state: \(bus.lectorState ?? "no answer")")
            _ = bus.lector("Stop")
        }
    }
}

/// Problems found on several threads at once.
final class ProblemList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ problem: String) { lock.withLock { list.append(problem) } }
    var items: [String] { lock.withLock { list } }
}
