@preconcurrency import Glibc
import Audio
import GLibKit
import LectorCommon
import SpeechCore

/// `lector daemon`: the one shared instance per desktop session. Owns `org.lector.Lector` (and, with the MPRIS
/// adaptor, `org.mpris.MediaPlayer2.lector`), runs everything on one GLib main loop, and ends cleanly on
/// SIGTERM/SIGINT.
public final class Daemon {
    private let loop = MainLoop()
    private let server: SoundServer
    private let synthesis: EngineRouter
    private let engine: ReadingEngine
    private let reader: Reader
    private let preparer = UtterancePreparer()
    /// The pronunciation lexicon, read again whenever its file changes.
    private var lexicon: LexiconWatch?
    private let lector: LectorService
    private var mpris: MPRISService!
    private let instance: Bool
    private var ownership: NameOwnership?
    private var mprisOwnership: NameOwnership?
    private var exitCode: Int32 = 0
    private var changePending: Source?
    private var duckingMode: DuckingMode
    private var ducking: Ducking?
    /// Keeps the reading across restarts (not for a separate instance).
    private let keeper: StateKeeper?
    /// Seconds stopped after which the daemon exits (0: never; a separate instance never does).
    private var idleExitSeconds: Double = 0
    /// "Read selection" through the GlobalShortcuts portal (`[daemon] portal-shortcut`), once the name is owned.
    private var portalShortcut: PortalShortcut?
    /// Armed while stopped: ends the daemon after `idleExitSeconds`.
    private let idleExit = OneShotTimer()
    /// The default of `idleExitSeconds`: 10 minutes, after which an idle daemon leaves the widgets.
    static let defaultIdleExitSeconds = 600.0
    /// Lector's connection and the MPRIS one, once connected.
    private var connections: [DBusConnection] = []
    /// Leaving the bus before the loop ends (`leave()`).
    private let departure = Departure()

    /// Sets up (nothing is connected yet). With `instance`, the daemon is a deliberately separate player: it
    /// owns only `org.mpris.MediaPlayer2.lector.instance<pid>` and never Lector's own name. `ducking` is what
    /// happens to other audio while Lector reads.
    init(instance: Bool = false, ducking: DuckingMode? = nil, idleExitSeconds: Double? = nil) {
        self.instance = instance
        duckingMode = ducking ?? .standard
        server = SoundServer(applicationName: "Lector", properties: [
            "application.name": "Lector",
            "application.id": Names.applicationID,
            "application.icon_name": Names.applicationID,
        ])
        synthesis = EngineRouter.standard(preparer: preparer)
        engine = ReadingEngine(server: server, synthesis: synthesis)
        reader = Reader(engine: engine, preparer: preparer)
        lector = LectorService(reader: reader)
        keeper = instance ? nil : StateKeeper(engine: engine, preparer: preparer, pending: reader.pending)
        mpris = MPRISService(reader: reader, quit: { [unowned self] in self.leave() })
        for problem in preparer.loadConfiguration() { Log.warning(problem) }
        lexicon = LexiconWatch { [unowned engine] in engine.setLexicon($0) }
        if let volume = preparer.configuration.volume { engine.playback.setVolume(volume) }
        if ducking == nil, let configured = preparer.configuration.ducking { duckingMode = configured }
        self.idleExitSeconds = instance ? 0 : idleExitSeconds ?? preparer.configuration.idleExitSeconds ?? Self.defaultIdleExitSeconds
        // The portal forgets its shortcut when the daemon leaves: a daemon that holds one stays.
        if preparer.configuration.portalShortcut && !instance { self.idleExitSeconds = 0 }
    }

    /// Arms the idle exit while stopped, cancels it otherwise. On time, the daemon ends as on SIGTERM: state
    /// saved, volumes put back; a command (or D-Bus activation) starts it again with that state.
    private func followIdleness() {
        guard idleExitSeconds > 0 else { return }
        guard reader.state == .stopped else { return idleExit.cancel() }
        guard !idleExit.isArmed else { return }
        idleExit.arm(milliseconds: UInt32(min(idleExitSeconds * 1000, Double(UInt32.max)))) { [unowned self] in
            guard self.reader.state == .stopped else { return }
            Log.message("stopped for \(Int(self.idleExitSeconds)) s: exiting (the state is saved)")
            self.leave()
        }
    }

    /// The MPRIS bus name: `org.mpris.MediaPlayer2.lector`, or `….lector.instance<pid>` for a separate instance.
    private var mprisName: String {
        instance ? MPRIS.lectorBusName + ".instance\(getpid())" : MPRIS.lectorBusName
    }

    /// Runs the daemon until it is told to quit; returns the process exit status (0, or 1 when another
    /// daemon already owns the name or the bus cannot be reached).
    public func run() -> Int32 {
        // Large transient buffers (a 1 MB text as a D-Bus message, as a String, as the saved copy) go back to
        // the system when freed instead of staying in the heap (see Memory.fixLargeBlockThreshold).
        Memory.fixLargeBlockThreshold()
        // The MPRIS name on a connection of its own, which exports the player only: a sandboxed app allowed to
        // talk to media players (org.mpris.MediaPlayer2.*) reaches that connection, not Lector1 and its Text.
        // Only that connection exports and signals the player (the command line and the window call it there
        // too), so each PropertiesChanged and Seeked is sent once.
        let connection: DBusConnection, mprisConnection: DBusConnection
        do {
            connection = try DBusConnection.session()
            mprisConnection = try DBusConnection.separateSession()
        } catch {
            printError("cannot connect to the session bus: \(error)")
            return 1
        }
        connections = [connection, mprisConnection]
        let notifier = FailureNotifier(connection: connection)
        reader.onEvent = { [unowned self] event, position in
            self.lector.emit(event, position: position)
            notifier.observe(event)
        }
        // Other players are paused from the MPRIS connection, which is then the one left out as Lector's own.
        ducking = Ducking(mode: duckingMode, server: server, connection: mprisConnection, persistent: !instance)
        reader.onChange = { [unowned self] in
            self.ducking?.follow(self.reader.state)
            self.scheduleAnnouncement()
            self.keeper?.changed()
            self.followIdleness()
        }
        // Objects first, then the name: a client that reacts to the name appearing always finds them.
        do {
            try lector.export(on: connection)
            try mpris.export(on: mprisConnection)
        } catch {
            printError("cannot export Lector's D-Bus object: \(error)")
            return 1
        }
        ownNames(on: connection, mpris: mprisConnection)
        followIdleness()
        defer { portalShortcut?.stop() }
        // Reconnects by itself after a loss: 0.5 s, then up to every 5 s (see SoundServer.keepConnected).
        server.keepConnected(firstDelayMilliseconds: 500, maximumDelayMilliseconds: 5000)
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            MainContext.unixSignal(signal) { [unowned self] in
                Log.message("ending on signal \(signal)")
                self.leave()
                return false
            }
        }
        loop.run()
        finish(connections: [connection, mprisConnection])
        return exitCode
    }

    /// Ends the loop once the daemon has left the bus (`Departure`): the reading and bookmarks are saved
    /// first, for the next daemon, which may start as soon as the names are released; then every call is
    /// refused with `Error.Exiting`, the names are released, and the calls already routed here are answered so.
    private func leave() {
        guard !departure.begun else { return }
        keeper?.finish()
        reader.bookmarks.flush()
        departure.begin(connections: connections, names: [mprisOwnership, ownership].compactMap { $0 }) { [loop] in
            loop.quit()
        }
    }

    /// Ends the daemon once its loop has returned: the state saved, reading stopped, the worker ended, other
    /// players' volumes put back, the names released, the connections flushed, the sound server left.
    private func finish(connections: [DBusConnection]) {
        keeper?.finish() // before stopping: what was being read is what the next daemon resumes
        try? engine.apply { m in m.stop() }
        reader.bookmarks.flush()
        synthesis.terminate()
        finishDucking()
        mprisOwnership?.release()
        ownership?.release()
        for connection in connections { connection.flush() }
        server.disconnect()
    }

    /// Asks for Lector's bus name on `connection`, then the MPRIS one on `mpris` (a separate instance: the
    /// MPRIS one only); losing Lector's name ends the daemon.
    private func ownNames(on connection: DBusConnection, mpris: DBusConnection) {
        var acquired = false
        let ownMPRIS = { [unowned self] in
            mprisOwnership = mpris.ownName(mprisName, onAcquired: { [unowned self] in
                Log.message("media keys and desktop widgets reach Lector as \(self.mprisName)")
            }, onLost: { [unowned self] in
                Log.warning("cannot own \(self.mprisName): another program has it; media keys will not reach Lector")
            })
        }
        guard !instance else { return ownMPRIS() }
        ownership = connection.ownName(Names.bus, onAcquired: {
            acquired = true
            Log.message("reading for this session as \(Names.bus)")
            // Only the daemon that owns the name takes the saved reading up (a second one says only that
            // another runs); no call reaches the name before this.
            self.keeper?.restore()
            self.ducking?.restoreLeftovers()
            ownMPRIS()
            // Only the daemon that owns the name binds: the portal names the shortcut after a fixed token.
            if self.preparer.configuration.portalShortcut {
                self.portalShortcut = PortalShortcut(connection: connection)
                self.portalShortcut?.start()
            }
        }, onLost: { [unowned self] in
            if acquired {
                Log.warning("lost the bus name \(Names.bus); exiting")
            } else {
                printError("another Lector daemon already runs on this session bus")
            }
            self.exitCode = 1
            self.loop.quit()
        })
    }

    /// Puts other audio back before exiting: the main loop runs again (D-Bus calls are still answered) until
    /// `Ducking.finish` completes, at most `Ducking.exitWaitMilliseconds`.
    private func finishDucking() {
        guard let ducking else { return }
        var done = false
        ducking.finish { [loop] in
            done = true
            loop.quit()
        }
        guard !done else { return }
        let limit = MainContext.timeout(milliseconds: Ducking.exitWaitMilliseconds) { [loop] in
            Log.debug("exiting before every volume or player was put back")
            loop.quit()
            return false
        }
        loop.run()
        limit.cancel()
    }

    /// PropertiesChanged is coalesced: one idle callback after a burst of changes.
    private func scheduleAnnouncement() {
        guard changePending == nil else { return }
        changePending = MainContext.idle { [unowned self] in
            self.changePending = nil
            self.lector.announceChanges()
            self.mpris.announceChanges()
        }
    }
}
