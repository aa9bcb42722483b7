@preconcurrency import Glibc
import Testing
@testable import GLibKit
import SystemKit

/// Everything that runs the shared default main context, one test at a time.
@Suite(.serialized) struct MainLoopTests {
    @Test func timeoutRepeatsUntilFalseAndCancelIsIdempotent() {
        var ticks = 0
        let source = MainContext.timeout(milliseconds: 1) {
            ticks += 1
            return ticks < 3
        }
        #expect(spin { !source.isActive })
        #expect(ticks == 3)
        source.cancel()
        source.cancel()

        var cancelledTicks = 0
        let cancelled = MainContext.timeout(milliseconds: 1) { cancelledTicks += 1; return true }
        cancelled.cancel()
        spin(milliseconds: 20) { false }
        #expect(cancelledTicks == 0)
        #expect(!cancelled.isActive)
    }

    @Test func idleRunsOnceAndCanCancelItselfFromInside() {
        var runs = 0
        let idle = MainContext.idle { runs += 1 }
        #expect(spin { runs > 0 })
        spin(milliseconds: 20) { false }
        #expect(runs == 1)
        #expect(!idle.isActive)

        var selfCancelled = 0
        var handle: Source?
        handle = MainContext.timeout(milliseconds: 1) {
            selfCancelled += 1
            handle?.cancel()
            return true
        }
        spin(milliseconds: 30) { false }
        #expect(selfCancelled == 1)
    }

    @Test func releasesClosuresWhenSourcesEnd() {
        final class Token {}
        weak var weakToken: Token?
        do {
            let token = Token()
            weakToken = token
            MainContext.timeout(milliseconds: 1) { _ = token; return false }
        }
        #expect(weakToken != nil)
        #expect(spin { weakToken == nil })
    }

    @Test func watchesAPipe() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        var seen: [FDCondition] = []
        var bytes: [UInt8] = []
        let watch = MainContext.watch(fd: FileDescriptor(rawValue: fds[0])) { condition in
            seen.append(condition)
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = read(fds[0], &buffer, 16)
            if n > 0 { bytes += buffer[0..<n]; return true }
            return false
        }
        _ = write(fds[1], "hi", 2)
        #expect(spin { bytes.count == 2 })
        #expect(seen.first == .readable)
        close(fds[1])
        #expect(spin { !watch.isActive })
        #expect(seen.last?.contains(.hangup) == true)
        close(fds[0])
    }

    @Test func deliversUnixSignalsOnTheLoop() {
        var got = 0
        let source = MainContext.unixSignal(SIGUSR1) { got += 1; return true }
        kill(getpid(), SIGUSR1)
        #expect(spin { got == 1 })
        source.cancel()
        #expect(!MainContext.unixSignal(SIGKILL) { true }.isActive)
    }

    @Test func runsAndQuitsAMainLoop() {
        let loop = MainLoop()
        var order: [String] = []
        MainContext.idle { order.append("idle"); loop.quit() }
        MainContext.timeout(milliseconds: 0) { order.append("timeout"); return false }
        let start = MainContext.monotonicMicroseconds
        loop.run()
        #expect(order == ["timeout", "idle"])
        #expect(MainContext.monotonicMicroseconds - start < 1_000_000)
    }

    @Test func childProcessPipesAndExitStatus() throws {
        let cat = try ChildProcess(argv: ["cat"])
        #expect(cat.pid > 0)
        _ = write(cat.stdinFD.rawValue, "to cat\n", 7)
        cat.closeStdin()
        cat.closeStdin()
        var output: [UInt8] = []
        var status: GLibKit.ExitStatus?
        MainContext.watch(fd: cat.stdoutFD) { _ in
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(cat.stdoutFD.rawValue, &buffer, 64)
            if n > 0 { output += buffer[0..<n] }
            return n > 0
        }
        cat.onExit { status = $0 }
        #expect(spin { status != nil })
        #expect(status == .exited(0))
        #expect(String(decoding: output, as: UTF8.self) == "to cat\n")
        #expect(cat.pid == 0)

        #expect(try run(["sh", "-c", "exit 3"]).status == .exited(3))

        let sleeper = try ChildProcess(argv: ["sleep", "10"])
        var killed: GLibKit.ExitStatus?
        sleeper.onExit { killed = $0 }
        sleeper.kill()
        #expect(spin { killed != nil })
        #expect(killed == .signaled(SIGKILL))
        sleeper.kill()

        #expect(throws: GLibError.self) { try ChildProcess(argv: ["/nonexistent/program"]) }
        #expect(throws: GLibError.self) { try ChildProcess(argv: []) }
    }
}

@Suite struct FileTests {
    @Test func readsFilesAndTestsPaths() throws {
        var template = Array("/tmp/glibkit-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        _ = write(fd, "a\u{0}b", 3)
        close(fd)
        #expect(try readFile(path) == [97, 0, 98])
        #expect(fileTest(path, .exists))
        #expect(fileTest(path, .isRegular))
        #expect(!fileTest(path, .isDirectory))
        #expect(!fileTest(path, .isExecutable))
        #expect(fileTest("/tmp", .isDirectory))
        #expect(fileTest("/bin/sh", .isExecutable))
        #expect(!fileTest("/nonexistent", .exists))
        let error = #expect(throws: GLibError.self) { try readFile("/nonexistent/file") }
        #expect(error?.domain == "g-file-error-quark")
        #expect(error?.message.contains("/nonexistent/file") == true)
    }

    @Test func urisEnvironmentAndDirectories() {
        #expect(pathToFileURI("/tmp/a b/é.txt") == "file:///tmp/a%20b/%C3%A9.txt")
        #expect(fileURIToPath("file:///tmp/a%20b/%C3%A9.txt") == "/tmp/a b/é.txt")
        #expect(pathToFileURI("relative") == nil)
        #expect(fileURIToPath("https://example.org/") == nil)
        #expect(environment("PATH") != nil)
        #expect(environment("LECTOR_SURELY_UNSET_VARIABLE") == nil)
        for dir in [UserDirs.runtime, UserDirs.state, UserDirs.config, UserDirs.cache] { #expect(dir.hasPrefix("/")) }
        #expect(executablePath().hasPrefix("/"))
        #expect(fileTest(executablePath(), .isExecutable))
    }

    @Test func logsWithoutAborting() {
        Log.debug("debug line")
        Log.info("info line")
        Log.message("message line")
        Log.warning("warning line")
        Log.critical("critical line")
    }
}

@Suite struct OneShotTimerTests {
    @Test func armingAgainReplacesAndCancelDisarms() {
        let loop = MainLoop()
        let timer = OneShotTimer()
        var fired: [String] = []
        timer.arm(milliseconds: 5) { fired.append("first") }
        timer.arm(milliseconds: 10) { fired.append("second"); loop.quit() }
        #expect(timer.isArmed)
        let other = OneShotTimer()
        other.arm(milliseconds: 1) { fired.append("cancelled") }
        other.cancel()
        loop.run()
        #expect(fired == ["second"])
        #expect(!timer.isArmed && !other.isArmed)
    }
}
