import Foundation
import Testing

extension Integration {
    /// What a D-Bus client (MPRIS OpenUri) or `lector read --file` may make Lector read: regular files of
    /// the user only, capped in size; never a FIFO (which would block), a device, a folder, or the kernel's
    /// files in /proc and /sys.
    @Suite(.privateSession)
    struct FileSecurity {
        /// Paths that must be refused, made in the session folder where needed.
        static func hostilePaths(_ session: PrivateSession) throws -> [String] {
            let dir = session.directory.appendingPathComponent("hostile")
            try? FileManager.default.removeItem(at: dir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let fifo = dir.appendingPathComponent("fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            let link = dir.appendingPathComponent("status-link").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/environ")
            let big = dir.appendingPathComponent("big.txt").path
            #expect(FileManager.default.createFile(atPath: big, contents: nil))
            #expect(truncate(big, 33 << 20) == 0)  // sparse: 33 MiB, over the 32 MiB cap
            return [fifo, dir.path, "/dev/zero", "/dev/urandom", "/proc/self/environ", "/proc/1/cmdline",
                    "/sys/kernel/mm/transparent_hugepage/enabled", link, big,
                    dir.path + "/../hostile/../../../../proc/self/status"]
        }

        @Test("MPRIS OpenUri refuses FIFOs, devices, folders, /proc, /sys, links into them and files over 32 MiB, at once")
        func openUriRefuses() async throws {
            let session = try await world()
            for path in try Self.hostilePaths(session) {
                let uri = "file://" + path
                let call = try await session.run(
                    "gdbus",
                    ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                     "--method", "org.mpris.MediaPlayer2.Player.OpenUri", uri], timeout: 10)
                #expect(call.status != 0 && call.stderr.contains("cannot read"), "OpenUri \(uri): \(call)")
                #expect(call.seconds < 2, "OpenUri \(uri) took \(call.seconds) s")
                let status = try await session.status()
                #expect(status.exitStatus == 0 && status.state == "stopped", "after OpenUri \(uri): \(status)")
            }
            // A regular file is read.
            let good = session.directory.appendingPathComponent("hostile/good.txt")
            try Data("A regular file is read aloud.".utf8).write(to: good)
            let ok = try await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                 "--method", "org.mpris.MediaPlayer2.Player.OpenUri", "file://" + good.path], timeout: 10)
            #expect(ok.status == 0, "\(ok)")
            #expect(try await session.status().state == "reading")
            try await session.quiesce()
            #expect(session.runningDaemon?.isRunning ?? true, "the daemon died: \(session.daemonLogs())")
        }

        @Test("D-Bus SpeakFile refuses descriptors of the same, pipes included, at once, and reads a regular file")
        func speakFileRefuses() async throws {
            let session = try await world()
            // gdbus sends its own descriptor N for a handle argument N: here its standard input, opened by the
            // shell (a FIFO read-write, so that opening it does not wait for a writer).
            let call = #"exec gdbus call --session --dest org.lector.Lector --object-path /org/lector/Lector --method org.lector.Lector1.SpeakFile 0 "{}""#
            var scripts = try Self.hostilePaths(session).map { path in
                (path, (path.hasSuffix("/fifo") ? call + #" 0<>"$1""# : call + #" <"$1""#), path)
            }
            scripts.append(("a pipe", "echo A pipe is not read. | " + call, ""))
            for (what, script, path) in scripts {
                let result = try await session.run("/bin/sh", ["-c", script, "sh", path], timeout: 10)
                #expect(result.status != 0 && result.stderr.contains("InvalidArgs: cannot read"), "SpeakFile \(what): \(result)")
                #expect(result.seconds < 2, "SpeakFile \(what) took \(result.seconds) s")
                let status = try await session.status()
                #expect(status.exitStatus == 0 && status.state == "stopped", "after SpeakFile \(what): \(status)")
            }
            let good = session.directory.appendingPathComponent("hostile/good.txt")
            try Data("A regular file is read aloud.".utf8).write(to: good)
            let mark = session.recorder.mark()
            let ok = try await session.run("/bin/sh", ["-c", call + #" <"$1""#, "sh", good.path], timeout: 10)
            #expect(ok.status == 0 && ok.stdout.hasPrefix("(uint64 "), "\(ok)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "SpeakFile of a regular file: nothing heard")
            try await session.quiesce()
            #expect(session.runningDaemon?.isRunning ?? true, "the daemon died: \(session.daemonLogs())")
        }

        @Test("lector read --file refuses the same, with one line and exit 1, without hanging on a FIFO")
        func readFileRefuses() async throws {
            let session = try await world(.bare)
            for path in try Self.hostilePaths(session) {
                let read = try await session.lector(["read", "--file", path], timeout: 10)
                #expect(read.status == 1 && read.stderrLines.count == 1 && read.stderr.hasPrefix("lector: cannot read"),
                        "read --file \(path): \(read)")
                #expect(read.seconds < 2, "read --file \(path) took \(read.seconds) s")
            }
        }
    }
}
