import Foundation
import Testing

extension Integration {
    /// MPRIS OpenUri's policy (README, "Who may open what"), on the real daemon: a caller on the bus cannot
    /// make Lector read and publish a key from a hidden folder or a binary file, while a text is read and
    /// `lector read --file` by the user reads anything regular; a caller whose root holds `/.flatpak-info`
    /// (Flatpak's marker, made here with a private mount namespace and chroot: no Flatpak installed) names no
    /// file. Snaps need AppArmor: that branch is unit-tested in LectorDaemonTests/OpenPolicyTests.
    @Suite(.privateSession)
    struct OpenUriPolicy {
        static let marker = "SECRETMARKER"
        static let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ \(marker)\n"
            + "-----END OPENSSH PRIVATE KEY-----\n"

        /// A home in the session folder with `.ssh/id_rsa` (a fake key), a link to it, a copy of an
        /// executable, a PNG, and a text.
        static func makeHome(_ session: PrivateSession) throws -> URL {
            let home = session.directory.appendingPathComponent("home")
            try? FileManager.default.removeItem(at: home)
            try FileManager.default.createDirectory(at: home.appendingPathComponent(".ssh"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: home.appendingPathComponent("docs"), withIntermediateDirectories: true)
            try Data(key.utf8).write(to: home.appendingPathComponent(".ssh/id_rsa"))
            try FileManager.default.createSymbolicLink(atPath: home.appendingPathComponent("docs/notes-link.txt").path,
                                                       withDestinationPath: home.appendingPathComponent(".ssh/id_rsa").path)
            try Data(contentsOf: URL(fileURLWithPath: "/bin/true")).write(to: home.appendingPathComponent("docs/program"))
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52,
                                0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89]
            try Data(png).write(to: home.appendingPathComponent("docs/picture.txt"))
            try Data("One sentence here. Another sentence there. A third one at the end.\n".utf8)
                .write(to: home.appendingPathComponent("docs/notes.txt"))
            return home
        }

        static func openUri(_ session: PrivateSession, _ path: String) async throws -> ProcessResult {
            try await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                 "--method", "org.mpris.MediaPlayer2.Player.OpenUri", URL(fileURLWithPath: path).absoluteString], timeout: 10)
        }

        /// What the bus publishes of the text: MPRIS Metadata and Lector's Text, as any client reads them.
        static func published(_ session: PrivateSession) async throws -> (metadata: String, text: String) {
            let metadata = try await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                 "--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Metadata"], timeout: 10)
            let text = try await session.run(
                "gdbus",
                ["call", "--session", "--dest", "org.lector.Lector", "--object-path", "/org/lector/Lector",
                 "--method", "org.freedesktop.DBus.Properties.Get", "org.lector.Lector1", "Text"], timeout: 10)
            return (metadata.stdout, text.stdout)
        }

        @Test("OpenUri of a key in a hidden folder, directly or through a link, is refused: AccessDenied, nothing read or published")
        func hiddenRefused() async throws {
            let session = try await world()
            let home = try Self.makeHome(session)
            for path in [home.path + "/.ssh/id_rsa", home.path + "/docs/notes-link.txt"] {
                let mark = session.recorder.mark()
                let call = try await Self.openUri(session, path)
                #expect(call.status != 0 && call.stderr.contains("org.freedesktop.DBus.Error.AccessDenied")
                        && call.stderr.contains("hidden") && call.stderr.contains(".ssh"), "OpenUri \(path): \(call)")
                #expect(call.seconds < 2, "OpenUri \(path) took \(call.seconds) s")
                let status = try await session.status()
                #expect(status.exitStatus == 0 && status.state == "stopped", "after OpenUri \(path): \(status)")
                #expect(await session.recorder.waitForSpeech(after: mark, timeout: 1) == nil, "OpenUri \(path) was heard")
                let (metadata, text) = try await Self.published(session)
                for published in [metadata, text] {
                    #expect(!published.contains(Self.marker) && !published.contains("PRIVATE KEY"),
                            "OpenUri \(path) published the key: \(published.prefix(600))")
                }
            }
            #expect(session.runningDaemon?.isRunning ?? true, "the daemon died: \(session.daemonLogs())")
        }

        @Test("OpenUri of binary files (an executable, a PNG named .txt) is refused with AccessDenied")
        func binaryRefused() async throws {
            let session = try await world()
            let home = try Self.makeHome(session)
            for path in [home.path + "/docs/program", home.path + "/docs/picture.txt"] {
                let call = try await Self.openUri(session, path)
                #expect(call.status != 0 && call.stderr.contains("org.freedesktop.DBus.Error.AccessDenied")
                        && call.stderr.contains("not a text document"), "OpenUri \(path): \(call)")
                let status = try await session.status()
                #expect(status.exitStatus == 0 && status.state == "stopped", "after OpenUri \(path): \(status)")
            }
        }

        /// A shell script that runs `gdbus call --address BUS ARGS…` from a root of its own holding
        /// `/.flatpak-info`, as a Flatpak app's root does: a user and mount namespace (the user mapped to itself,
        /// so the bus sees the same user), a tmpfs with the system folders bound in, then chroot.
        static let sandboxed = #"""
            root=$1 bus=$2; shift 2
            mount -t tmpfs tmpfs "$root" || exit 97
            for d in usr lib lib32 lib64 bin sbin etc tmp proc; do
                [ -e "/$d" ] && [ ! -L "/$d" ] || continue
                mkdir -p "$root/$d" && mount --rbind "/$d" "$root/$d" || exit 97
            done
            for d in lib lib32 lib64 bin sbin; do [ -L "/$d" ] && ln -s "$(readlink "/$d")" "$root/$d"; done
            printf '[Application]\nname=org.example.Sandboxed\n' > "$root/.flatpak-info"
            exec chroot "$root" gdbus call --address "$bus" "$@"
            """#

        @Test("OpenUri from a caller whose root holds /.flatpak-info is refused before the file is looked at; a plain caller is not")
        func flatpakCallerRefused() async throws {
            let session = try await world()
            let home = try Self.makeHome(session)
            let root = session.directory.appendingPathComponent("sandbox-root")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let method = ["--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                          "--method", "org.mpris.MediaPlayer2.Player.OpenUri"]
            let probe = try await session.run("unshare", ["--map-current-user", "--mount", "/bin/sh", "-c", Self.sandboxed,
                                                          "sh", root.path, session.busAddress, "--dest", "org.freedesktop.DBus",
                                                          "--object-path", "/org/freedesktop/DBus", "--method",
                                                          "org.freedesktop.DBus.GetId"], timeout: 10)
            try #require(probe.status == 0, "cannot make a sandboxed caller here (user namespaces?): \(probe)")
            for path in [home.path + "/docs/notes.txt", home.path + "/.ssh/id_rsa", home.path + "/no such file.txt"] {
                let mark = session.recorder.mark()
                let call = try await session.run("unshare", ["--map-current-user", "--mount", "/bin/sh", "-c", Self.sandboxed,
                                                             "sh", root.path, session.busAddress] + method
                                                             + [URL(fileURLWithPath: path).absoluteString], timeout: 10)
                // The same refusal whatever the file: a sandboxed caller learns nothing of it.
                #expect(call.status != 0 && call.stderr.contains("org.freedesktop.DBus.Error.AccessDenied")
                        && call.stderr.contains("a Flatpak app may not open files by name"), "OpenUri \(path): \(call)")
                let status = try await session.status()
                #expect(status.exitStatus == 0 && status.state == "stopped", "after OpenUri \(path): \(status)")
                #expect(await session.recorder.waitForSpeech(after: mark, timeout: 0.5) == nil, "OpenUri \(path) was heard")
            }
            let plain = try await Self.openUri(session, home.path + "/docs/notes.txt")
            #expect(plain.status == 0, "\(plain)")
            try await session.quiesce()
        }

        @Test("OpenUri of a text file reads it, publishing the sentence, not the text; `lector read --file` of the hidden key still reads it")
        func textReadAndUserUnrestricted() async throws {
            let session = try await world()
            let home = try Self.makeHome(session)
            var mark = session.recorder.mark()
            let call = try await Self.openUri(session, home.path + "/docs/notes.txt")
            #expect(call.status == 0, "\(call)")
            #expect(try await session.status().state == "reading")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "OpenUri of a text: nothing heard")
            // MPRIS Metadata, which every client may read, carries the sentence being read, not the text.
            let (metadata, _) = try await Self.published(session)
            #expect(metadata.contains("xesam:asText") && !metadata.contains("Another sentence there. A third one"),
                    "Metadata carries more than a sentence: \(metadata)")
            try await session.quiesce()

            mark = session.recorder.mark()
            let read = try await session.lector(["read", "--file", home.path + "/.ssh/id_rsa"], timeout: 10)
            #expect(read.status == 0, "\(read)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 3) != nil, "lector read --file: nothing heard")
            try await session.quiesce()
        }

        @Test("Lector1 (its Text, Speak, SpeakFile) cannot be reached through the MPRIS name or its owner: a sandbox allowed to talk to media players sees the player only")
        func mprisNameReachesThePlayerOnly() async throws {
            let session = try await world(.mpris)
            let bus = try BusConnection(address: session.busAddress)
            _ = bus.lector("Speak", "('A private letter, read aloud.', @a{sv} {})")
            let mpris = try #require(bus.owner("org.mpris.MediaPlayer2.lector"))
            let lector = try #require(bus.owner("org.lector.Lector"))
            #expect(mpris != lector, "one connection owns both names")
            for destination in ["org.mpris.MediaPlayer2.lector", mpris] {
                let text = bus.call(destination, "/org/lector/Lector", "org.freedesktop.DBus.Properties", "Get",
                                    "('org.lector.Lector1', 'Text')")
                #expect(text.value == nil && text.errorName != nil, "Text through \(destination): \(text)")
                let speak = bus.call(destination, "/org/lector/Lector", "org.lector.Lector1", "Speak", "('x', @a{sv} {})")
                #expect(speak.value == nil, "Speak through \(destination): \(speak)")
            }
            // Both still answer on their own names.
            #expect(bus.lectorText == "A private letter, read aloud.")
            let status = bus.call("org.mpris.MediaPlayer2.lector", "/org/mpris/MediaPlayer2", "org.freedesktop.DBus.Properties",
                                  "Get", "('org.mpris.MediaPlayer2.Player', 'PlaybackStatus')")
            #expect(status.value != nil, "\(status)")
            try await session.quiesce()
        }
    }
}

extension Integration.OpenUriPolicy {
    @Test("OpenUri of a hard link to a file in a hidden folder, and of file://otherhost/…, is refused; file://localhost/ is local")
    func hardLinksAndHosts() async throws {
        let session = try await world()
        let home = try Self.makeHome(session)
        let config = home.appendingPathComponent(".ssh/config"), linked = home.appendingPathComponent("docs/config.txt")
        try Data("Host example\n  IdentityFile ~/.ssh/id_rsa \(Self.marker)\n".utf8).write(to: config)
        try FileManager.default.linkItem(at: config, to: linked)
        let call = try await Self.openUri(session, linked.path)
        #expect(call.status != 0 && call.stderr.contains("AccessDenied") && call.stderr.contains("2 hard links"), "\(call)")
        let notes = home.appendingPathComponent("docs/notes.txt").path
        for (uri, local) in [("file://otherhost" + notes, false), ("file://localhost" + notes, true)] {
            let result = try await session.run(
                "gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2",
                          "--method", "org.mpris.MediaPlayer2.Player.OpenUri", uri], timeout: 10)
            if local {
                #expect(result.status == 0, "\(uri): \(result)")
            } else {
                #expect(result.status != 0 && result.stderr.contains("another host"), "\(uri): \(result)")
            }
        }
        let (metadata, text) = try await Self.published(session)
        #expect(!metadata.contains(Self.marker) && !text.contains(Self.marker), "the linked file was published")
        _ = try await session.lector(["stop"])
    }
}
