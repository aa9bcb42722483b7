import Foundation
import Testing

/// Asks the daemon for its State over D-Bus again and again from a thread of its own (a call, then
/// `intervalMilliseconds` of rest), and keeps how long each answer took.
final class ResponsivenessProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var times: [Double] = []
    private var failures: [String] = []
    /// Calls slower than 50 ms: seconds from the start of the probe, and how long the call took.
    private var slow: [(at: Double, took: Double)] = []
    private let finished = DispatchSemaphore(value: 0)

    /// Starts asking at once.
    /// - Throws: `HarnessError` when the bus cannot be reached.
    init(busAddress: String, intervalMilliseconds: UInt32 = 10) throws {
        let connection = try BusConnection(address: busAddress)
        let origin = ContinuousClock.now
        Thread { [self] in
            while lock.withLock({ running }) {
                let start = ContinuousClock.now
                let reply = connection.call(Lector.busName, Lector.objectPath, "org.freedesktop.DBus.Properties",
                                            "Get", "('\(Lector.interface)', 'State')")
                let took = seconds(ContinuousClock.now - start)
                lock.withLock {
                    times.append(took)
                    if took > 0.05 { slow.append((seconds(start - origin), took)) }
                    if reply.value == nil { failures.append(reply.description) }
                }
                usleep(intervalMilliseconds * 1_000)
            }
            finished.signal()
        }.start()
    }

    /// Stops asking; returns how many calls were made, the slowest answer in seconds, and the errors.
    func stop() -> (count: Int, worst: Double, failures: [String]) {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { (times.count, times.max() ?? 0, failures) }
    }

    /// The calls slower than 50 ms, as "took s at s" for messages.
    var slowCalls: String {
        lock.withLock { slow.map { String(format: "%.3f s at %.3f s", $0.took, $0.at) }.joined(separator: ", ") }
    }
}

extension Integration {
    /// Peers on the bus that answer late or never (an MPRIS player, a notification server) hold up nothing: the
    /// daemon keeps answering (its slowest answer printed; 100 ms is the target), reads on, and still pauses and resumes the players that answer.
    @Suite(.privateSession)
    struct UnresponsivePeers {
        /// `org.freedesktop.Notifications` with its `Notify` method (Desktop Notifications Specification 1.2).
        static let notificationsXML = """
            <node><interface name="org.freedesktop.Notifications">
              <method name="Notify">
                <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
                <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
                <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
              </method>
            </interface></node>
            """

        /// A notification server that owns `org.freedesktop.Notifications` and never answers `Notify`.
        static func deafNotificationServer(_ session: PrivateSession) throws -> FakeBusPeer {
            try FakeBusPeer(busAddress: session.busAddress, name: "org.freedesktop.Notifications",
                            path: "/org/freedesktop/Notifications", introspection: notificationsXML) { _ in .never }
        }

        /// Replaces the session's daemon, if one runs, by one started with `arguments`.
        static func restartDaemon(_ session: PrivateSession, _ arguments: [String]) async throws -> BackgroundProcess {
            if await session.nameOwner(Lector.busName) != nil {
                _ = try await session.run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector",
                                                    "--object-path", "/org/mpris/MediaPlayer2",
                                                    "--method", "org.mpris.MediaPlayer2.Quit"])
                _ = await eventually(timeout: 5, every: .milliseconds(20)) { await session.nameOwner(Lector.busName) == nil }
            }
            return try await session.startDaemon(arguments)
        }

        /// Runs `lector status` again and again (50 ms apart) until stopped, keeping how long each run took
        /// (process start included).
        final class StatusRuns: @unchecked Sendable {
            private let lock = NSLock()
            private var running = true
            private var times: [Double] = []
            private var failures: [String] = []
            private var task: Task<Void, Never>?

            init(_ session: PrivateSession) {
                task = Task { [self] in
                    while lock.withLock({ running }) {
                        let status = try? await session.lector(["status"], timeout: 10)
                        lock.withLock {
                            guard let status else { return failures.append("lector status could not run") }
                            times.append(status.seconds)
                            if status.status != 0 { failures.append("\(status)") }
                        }
                        try? await Task.sleep(for: .milliseconds(50))  // the watch's sampling period
                    }
                }
            }

            /// Stops; returns how many runs there were, the slowest in seconds, and the failed ones.
            func stop() async -> (count: Int, worst: Double, failures: [String]) {
                lock.withLock { running = false }
                await task?.value
                return lock.withLock { (times.count, times.max() ?? 0, failures) }
            }
        }

        @Test("a notification server that never answers: State and `lector status` keep answering throughout (the slowest printed), reading goes on past a lost sentence")
        func deafNotificationServerBlocksNothing() async throws {
            let session = try await world(.bare)
            let notifications = try Self.deafNotificationServer(session)
            defer { notifications.stop() }
            _ = try await Self.restartDaemon(session, [])

            let probe = try ResponsivenessProbe(busAddress: session.busAddress)
            let statusRuns = StatusRuns(session)
            let mark = session.recorder.mark()
            // The crashing sentence makes eSpeak NG abort: the sentence is lost, an error is notified.
            let text = "First words are read. \(Integration.Listening.crashingSentence). Last words come after the lost one."
            let read = try await session.lector(["read", text])
            #expect(read.status == 0, "\(read)")
            let notified = await eventually(timeout: 30, every: .milliseconds(20)) { !notifications.calls.isEmpty }
            #expect(notified, "no notification was sent\n\(session.daemonLogs())")
            let ended = try await eventually(timeout: 60, every: .milliseconds(20)) { try await session.status().state == "stopped" }
            #expect(ended, "reading did not end\n\(session.daemonLogs())")
            let (count, worst, failures) = probe.stop()
            let (commands, command, commandFailures) = await statusRuns.stop()

            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 1) != nil, "nothing was heard")
            #expect(session.daemonLogs().contains("skipped it"), "no sentence was lost\n\(session.daemonLogs())")
            #expect(failures.isEmpty, "State calls failed: \(failures.prefix(3))")
            #expect(count >= 20, "only \(count) State calls")
            // A main loop blocked on the server would answer after the 25 s D-Bus timeout; the 100 ms target is
            // a latency figure (printed below), and the bound here is generous so that load alone never fails it.
            #expect(worst <= 0.5, "the slowest of \(count) State calls took \(secs(worst)) (slow: \(probe.slowCalls))\n\(session.daemonLogs())")
            #expect(commandFailures.isEmpty, "\(commandFailures.prefix(3))")
            #expect(commands >= 5, "only \(commands) runs of lector status")
            // A run also counts starting a process and connecting to the bus, which a machine busy with other
            // work slows down: its bound is wider, and still far below a blocked loop.
            #expect(command <= 2, "the slowest of \(commands) `lector status` took \(secs(command))")
            print("UnresponsivePeers (notifications): slowest of \(count) State calls \(secs(worst)); "
                  + "slowest of \(commands) `lector status` \(secs(command))")
        }

        @Test("a notification server that answers after 1.5 s: the next notification waits for that answer and replaces the first; State keeps answering throughout (the slowest printed)")
        func slowNotificationServerStillReplaces() async throws {
            let session = try await world(.bare)
            let notifications = try FakeBusPeer(
                busAddress: session.busAddress, name: "org.freedesktop.Notifications",
                path: "/org/freedesktop/Notifications",
                introspection: Self.notificationsXML) { _ in
                    .later(milliseconds: 1_500, "(uint32 7,)")
                }
            defer { notifications.stop() }
            _ = try await Self.restartDaemon(session, [])

            let probe = try ResponsivenessProbe(busAddress: session.busAddress)
            let crash = Integration.Listening.crashingSentence
            _ = try await session.lector(["read", "\(crash). One."])
            let first = await eventually(timeout: 30, every: .milliseconds(20)) { notifications.calls.count == 1 }
            #expect(first, "no notification was sent\n\(session.daemonLogs())")
            // A second failing text while the first Notify is still unanswered.
            _ = try await session.lector(["read", "\(crash). Two."])
            let second = await eventually(timeout: 30, every: .milliseconds(20)) { notifications.calls.count == 2 }
            #expect(second, "the second notification was not sent: \(notifications.calls)\n\(session.daemonLogs())")
            _ = try await eventually(timeout: 30, every: .milliseconds(20)) { try await session.status().state == "stopped" }
            let (count, worst, failures) = probe.stop()

            let replaces = notifications.calls.map { $0.arguments.split(separator: ",").dropFirst().first ?? "" }
            #expect(replaces.map { $0.trimmingCharacters(in: .whitespaces) } == ["0", "7"],
                    "replaces_id of each Notify: \(notifications.calls)")
            #expect(failures.isEmpty, "State calls failed: \(failures.prefix(3))")
            // Blocked on the slow server, State would wait its 1.5 s; the bound is generous so load never fails it.
            #expect(worst <= 0.5, "the slowest of \(count) State calls took \(secs(worst)) (slow: \(probe.slowCalls))")
            print("UnresponsivePeers (slow notifications): slowest of \(count) State calls \(secs(worst)); "
                  + "replaces_id \(replaces)")
        }

        @Test("--pause-others with players that never answer: State and `lector status` keep answering throughout (the slowest printed); the players that answer are paused and resumed, only those that played")
        func hungPlayersBlockNothing() async throws {
            let session = try await world(.bare)
            let hung = try FakePlayer(busAddress: session.busAddress, name: "hung", status: "Playing",
                                      behaviour: .answersNothing)
            defer { hung.stop() }
            let deaf = try FakePlayer(busAddress: session.busAddress, name: "deaf", status: "Playing",
                                      behaviour: .ignoresControls)
            defer { deaf.stop() }
            let good = try FakePlayer(busAddress: session.busAddress, name: "good", status: "Playing",
                                      behaviour: .answersAll)
            defer { good.stop() }
            let idle = try FakePlayer(busAddress: session.busAddress, name: "idle", status: "Paused",
                                      behaviour: .answersAll)
            defer { idle.stop() }
            _ = try await Self.restartDaemon(session, ["--pause-others"])

            let probe = try ResponsivenessProbe(busAddress: session.busAddress)
            let statusRuns = StatusRuns(session)
            let mark = session.recorder.mark()
            let read = try await session.lector(["read", Lector.sentences])
            #expect(read.status == 0, "\(read)")
            let paused = await eventually(timeout: 5, every: .milliseconds(20)) { good.status == "Paused" }
            #expect(paused, "the player that answers was not paused: \(good.controls)\n\(session.daemonLogs())")
            // Pause and resume again: each is a new round of calls to every player.
            _ = try await session.lector(["pause"])
            _ = await eventually(timeout: 5, every: .milliseconds(20)) { good.status == "Playing" }
            _ = try await session.lector(["resume"])
            _ = await eventually(timeout: 5, every: .milliseconds(20)) { good.status == "Paused" }
            let ended = try await eventually(timeout: 60, every: .milliseconds(20)) { try await session.status().state == "stopped" }
            #expect(ended, "reading did not end\n\(session.daemonLogs())")
            let resumed = await eventually(timeout: 5, every: .milliseconds(20)) { good.status == "Playing" }
            let (count, worst, failures) = probe.stop()
            let (commands, command, commandFailures) = await statusRuns.stop()

            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 1) != nil, "nothing was heard")
            #expect(resumed, "the player that answers was not resumed: \(good.controls)")
            #expect(good.controls == ["Pause", "Play", "Pause", "Play"], "\(good.controls)")
            #expect(idle.controls.isEmpty, "a player that was not playing was touched: \(idle.controls)")
            #expect(hung.controls.isEmpty, "\(hung.controls)")
            #expect(deaf.controls == ["Pause", "Pause"], "\(deaf.controls)")
            #expect(failures.isEmpty, "State calls failed: \(failures.prefix(3))")
            #expect(count >= 20, "only \(count) State calls")
            // Players that never answer would block a waiting loop for the 25 s D-Bus timeout.
            #expect(worst <= 0.5, "the slowest of \(count) State calls took \(secs(worst)) (slow: \(probe.slowCalls))\n\(session.daemonLogs())")
            #expect(commandFailures.isEmpty, "\(commandFailures.prefix(3))")
            #expect(commands >= 5, "only \(commands) runs of lector status")
            // A run also counts starting a process and connecting to the bus, which a machine busy with other
            // work slows down: its bound is wider, and still far below a blocked loop.
            #expect(command <= 2, "the slowest of \(commands) `lector status` took \(secs(command))")
            print("UnresponsivePeers (players): slowest of \(count) State calls \(secs(worst)); "
                  + "slowest of \(commands) `lector status` \(secs(command))")
        }

        @Test("SIGTERM while other players are paused: they are resumed, and a player that never answers Play does not hold up the exit")
        func exitResumesPlayersBounded() async throws {
            let session = try await world(.bare)
            let good = try FakePlayer(busAddress: session.busAddress, name: "good2", status: "Playing",
                                      behaviour: .answersAll)
            defer { good.stop() }
            let stubborn = try FakePlayer(busAddress: session.busAddress, name: "stubborn", status: "Playing",
                                          behaviour: .ignoresPlay)
            defer { stubborn.stop() }
            let daemon = try await Self.restartDaemon(session, ["--pause-others"])
            _ = try await session.lector(["read", Lector.veryLong])
            let paused = await eventually(timeout: 5, every: .milliseconds(20)) { good.status == "Paused" && stubborn.status == "Paused" }
            #expect(paused, "\(good.controls) \(stubborn.controls)\n\(session.daemonLogs())")
            let start = ContinuousClock.now
            daemon.signal(SIGTERM)
            let exited = await daemon.waitForExit(timeout: 10)
            let took = seconds(ContinuousClock.now - start)
            #expect(exited != nil, "the daemon did not exit")
            #expect(took < 3, "the exit took \(secs(took))")
            #expect(good.status == "Playing", "\(good.controls)")
            #expect(stubborn.controls == ["Pause", "Play"], "\(stubborn.controls)")
            print("UnresponsivePeers (exit): SIGTERM to exit \(secs(took))")
        }

        @Test("SIGTERM while ducking puts the volume back before exiting; with the sound server stopped (SIGSTOP) the exit waits at most the bounded 1 s")
        func exitRestoresVolumesBounded() async throws {
            let session = try await world(.bare)
            let daemon = try await Self.restartDaemon(session, [])
            let other = try await Integration.Ducking.OtherStream(session, name: "exit-player", tone: true)
            defer { other.process.stopNow(signal: SIGKILL, grace: 1) }
            _ = try await session.run("pactl", ["set-sink-input-volume", "\(other.index)", "80%"])
            let full = Integration.Ducking.userVolume
            let fullLevel = try await Integration.Ducking.waitForLevel(session, other.index, timeout: 2) { $0 > -20 }
            _ = try await session.lector(["read", Lector.veryLong])
            let ducked = try await Integration.Ducking.waitForLevel(session, other.index, timeout: 3) { $0 < fullLevel - 10 }
            #expect(ducked < fullLevel - 10, "not lowered\n\(session.daemonLogs())")
            var start = ContinuousClock.now
            daemon.signal(SIGTERM)
            #expect(await daemon.waitForExit(timeout: 10) != nil, "the daemon did not exit")
            let took = seconds(ContinuousClock.now - start)
            #expect(took < 3, "the exit took \(secs(took))")
            #expect(try await Integration.Ducking.volume(session, other.index) == full, "the volume was not put back at exit")
            let heard = try await Integration.Ducking.waitForLevel(session, other.index, timeout: 2) { abs($0 - fullLevel) < 1 }
            #expect(abs(heard - fullLevel) < 1, "still lowered after the exit: \(heard) dB from \(fullLevel) dB")

            // A sound server that stops answering: the exit still comes, after the bounded wait.
            let second = try await session.startDaemon()
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await Integration.Ducking.waitForLevel(session, other.index, timeout: 3) { $0 < fullLevel - 10 }
            let pulse = session.soundServerPID
            kill(pulse, SIGSTOP)
            start = ContinuousClock.now
            second.signal(SIGTERM)
            let exited = await second.waitForExit(timeout: 10)
            let stuckTook = seconds(ContinuousClock.now - start)
            kill(pulse, SIGCONT)
            #expect(exited != nil, "the daemon did not exit with the sound server stopped")
            #expect(stuckTook < 3, "the exit with the sound server stopped took \(secs(stuckTook))")
            print("UnresponsivePeers (exit while ducking): \(secs(took)); with the sound server stopped \(secs(stuckTook))")
            await other.end()
        }
    }
}
