import Foundation
import Testing

extension Integration {
    /// The reader window (`lector window`) on a private X server (Xvfb), driven through AT-SPI and the X
    /// server the way a person would (Tests/window/drive.py): its accessible controls, opening a file, play
    /// and pause, the highlighted word against the words heard, a click on a word, the comfort settings, a
    /// daemon that dies while it is open, a text of 5 MB.
    @Suite(.privateSession)
    struct Window {
        static let document = """
            The first sentence is here. The second sentence follows it, with a few more words to read.

            A new paragraph starts the second part. Its words are read one by one, and the window marks each. \
            The last sentence ends the text.

            """

        @Test("open a file, pause and play, the highlight follows the words heard, click a word, font and size")
        func readAlong() async throws {
            let session = try await world()
            let desk = try await Desk.open(session)
            defer { desk.close() }

            let names = try await desk.drive(["names"])
            #expect(names["unnamed"] as? [String] == [], "\(names)")
            let controls = names["controls"] as? [String] ?? []
            #expect(!controls.contains { $0.contains("_") }, "a mnemonic's underscore in a name: \(controls)")
            for name in ["Play", "Previous sentence", "Next sentence", "Position", "Open a file", "Voice", "Repeat",
                         "Speaking rate, words per minute", "Sleep timer", "Reading comfort", "Read the clipboard", "Chapters"] {
                #expect(controls.contains(name), "no control named \(name): \(controls)")
            }

            let file = session.directory.appendingPathComponent("chapter.txt")
            try Self.document.write(to: file, atomically: true, encoding: .utf8)
            var mark = session.recorder.mark()
            _ = try await desk.drive(["open", file.path])
            let opened = try await session.waitForSentence(containing: "The first sentence", timeout: 10)
            #expect(opened.sentence?.contains("The first sentence") == true, "after Open: \(opened)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 5) != nil, "nothing heard after Open")

            // Space pauses, the Play button plays.
            _ = try await desk.drive(["key", "space"])
            #expect(try await session.waitForState("paused", timeout: 5).state == "paused")
            _ = try await desk.drive(["play"])
            #expect(try await session.waitForState("reading", timeout: 5).state == "reading")

            let follow = try await desk.drive(["follow", "3"])
            let off = follow["off"] as? [Int] ?? []
            #expect((follow["words"] as? Int ?? 0) >= 4, "\(follow)")
            #expect(off.count >= 20 && off.allSatisfy { $0 <= 1 }, "the highlight strays from the word heard: \(follow)")

            mark = session.recorder.mark()
            _ = try await desk.drive(["click", "paragraph starts"])
            let moved = try await session.waitForSentence(containing: "A new paragraph", timeout: 5)
            #expect(moved.sentence?.hasPrefix("A new paragraph") == true, "\(moved)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 5) != nil, "nothing heard after the click")

            // → moves to the next sentence, ← back.
            _ = try await desk.drive(["key", "Right"])
            let next = try await session.waitForSentence(containing: "Its words are read", timeout: 5)
            #expect(next.sentence?.contains("Its words are read") == true, "after →: \(next)")
            _ = try await desk.drive(["key", "Left"])
            let back = try await session.waitForSentence(containing: "A new paragraph", timeout: 5)
            #expect(back.sentence?.contains("A new paragraph") == true, "after ←: \(back)")

            // A word of a sentence heard before: the reading goes on from that word, not from its sentence's start.
            let few = try await desk.drive(["click", "few more words"])["offset"] as? Int ?? -1
            // The first word highlighted in that sentence after the click, past its start (where the caret goes with
            // the Sentence event; it sat in a later sentence before).
            let sentenceStart = (Self.document as NSString).range(of: "The second").location
            let caret = await poll(timeout: 5, every: .milliseconds(20),
                                   { (try? await desk.drive(["text"]))?["caret"] as? Int ?? -1 },
                                   until: { $0 > sentenceStart && $0 < few + 30 })
            #expect(caret >= few && caret < few + 30, "the word heard after clicking “few” (at \(few)) is at \(caret)")

            // The sleep timer set in the window: the daemon's timer is on, and the button says until when.
            _ = try await desk.drive(["sleep", "In 15 minutes"])
            let sleep = await poll(timeout: 5, { try? await session.status() }, until: { $0?.fields["sleep"]?.hasPrefix("until") == true })
            #expect(sleep?.fields["sleep"]?.hasPrefix("until") == true, "\(String(describing: sleep))")
            let named = await poll(timeout: 5, { (try? await desk.drive(["names"]))?["controls"] as? [String] ?? [] },
                                   until: { $0.contains { $0.hasPrefix("Sleep timer: pauses at") } })
            #expect(named.contains { $0.hasPrefix("Sleep timer: pauses at") }, "\(named)")
            _ = try await desk.drive(["sleep", "Off"])

            // The rate set in the window reaches the daemon (MPRIS Rate: 250 / 175 words per minute).
            _ = try await desk.drive(["rate", "250"])
            let rate = await poll(timeout: 5, {
                (try? await session.run("gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path",
                                                  "/org/mpris/MediaPlayer2", "--method", "org.freedesktop.DBus.Properties.Get",
                                                  "org.mpris.MediaPlayer2.Player", "Rate"]))?.stdout ?? ""
            }, until: { $0.contains("1.428") })
            #expect(rate.contains("1.428"), "MPRIS Rate after 250 wpm in the window: \(rate)")

            // A long text, read on: the comfort change reflows it under the word heard.
            _ = try await session.lector(["read", "--lang", "en", Lector.veryLong])
            _ = try await session.waitForState("reading", timeout: 5)
            try await Task.sleep(for: .milliseconds(1500))
            _ = try await desk.drive(["comfort", "OpenDyslexic", "20"])
            let settings = session.directory.appendingPathComponent("config/lector/window.ini")
            let kept = await poll(timeout: 5, { (try? String(contentsOf: settings, encoding: .utf8)) ?? "" },
                                  until: { $0.contains("font=OpenDyslexic") && $0.contains("size=20") })
            #expect(kept.contains("font=OpenDyslexic") && kept.contains("size=20"), "settings kept: \(kept)")
            // The text reflowed under the new font: the view still follows the reading.
            try await Task.sleep(for: .milliseconds(600))
            let after = try await desk.drive(["names"])["controls"] as? [String] ?? []
            #expect(!after.contains("Back to the reading"), "a comfort change stopped the following: \(after)")

            // Closing the window (its Close button) leaves the reading going.
            _ = try await session.lector(["read", Lector.veryLong])
            _ = try await session.waitForState("reading", timeout: 5)
            _ = try await desk.drive(["close"])
            #expect(await desk.window.waitForExit(timeout: 5) != nil, "the window is still open")
            #expect(try await session.status().state == "reading", "closing the window stopped the reading")
        }

        @Test("a Markdown document with two chapters: headings styled, the chapter list has both and moves the reading")
        func chapters() async throws {
            let session = try await world()
            let desk = try await Desk.open(session)
            defer { desk.close() }
            let file = session.directory.appendingPathComponent("two chapters.md")
            try """
                # The first chapter

                The opening chapter has a sentence here. It has another one after it, and then a third one to read.

                # The second chapter

                The closing chapter begins with this sentence.

                """.write(to: file, atomically: true, encoding: .utf8)
            _ = try await desk.drive(["open", file.path])
            _ = try await session.waitForSentence(containing: "first chapter", timeout: 10)
            _ = try await desk.drive(["key", "space"])
            _ = try await session.waitForState("paused", timeout: 5)

            let titles = try await desk.drive(["chapters"])["titles"] as? [String] ?? []
            #expect(titles == ["The first chapter", "The second chapter"], "chapter list: \(titles)")

            // The heading's line is bold (weight 700 in AT-SPI's text attributes), the paragraph's is not.
            let shown = await poll(timeout: 5, { (try? await desk.drive(["text"]))?["text"] as? String ?? "" },
                                   until: { $0.contains("closing chapter begins") })
            let heading = (shown as NSString).range(of: "The second chapter").location
            let body = (shown as NSString).range(of: "closing chapter").location
            let bold = await poll(timeout: 5, { (try? await desk.drive(["attributes", "\(heading + 2)"]))?["attributes"] as? [String] ?? [] },
                                  until: { $0.contains("weight:700") })
            #expect(bold.contains("weight:700"), "heading attributes: \(bold)")
            let plain = try await desk.drive(["attributes", "\(body + 2)"])["attributes"] as? [String] ?? []
            #expect(!plain.contains("weight:700"), "paragraph attributes: \(plain)")

            // Choosing the second chapter moves the reading there (paused stays paused; Play is heard from there).
            _ = try await desk.drive(["chapter", "The second chapter"])
            let moved = try await session.waitForSentence(containing: "second chapter", timeout: 5)
            #expect(moved.sentence?.contains("The second chapter") == true, "after choosing the chapter: \(moved)")
            let mark = session.recorder.mark()
            _ = try await desk.drive(["play"])
            let next = try await session.waitForSentence(containing: "closing chapter", timeout: 10)
            #expect(next.sentence?.contains("closing chapter begins") == true, "\(next)")
            #expect(await session.recorder.waitForSpeech(after: mark, timeout: 5) != nil, "nothing heard after the jump")
        }

        @Test("a daemon that dies while the window is open: the window says so, starts another and shows its reading")
        func daemonDies() async throws {
            let session = try await world()
            let desk = try await Desk.open(session)
            defer { desk.close() }
            _ = try await session.lector(["read", "A text read before the daemon dies."])
            _ = try await session.waitForSentence(containing: "A text read", timeout: 10)
            let before = await session.nameOwner(Lector.busName)
            try #require(before != nil)
            await session.runningDaemon?.stop(signal: SIGKILL)
            let said = await poll(timeout: 5, { (try? await desk.drive(["status"]))?["status"] as? String ?? "" },
                                  until: { $0.contains("stopped") })
            #expect(said.contains("daemon stopped"), "status line: \(said)")
            let after = await poll(timeout: 15, { await session.nameOwner(Lector.busName) }, until: { $0 != nil && $0 != before })
            #expect(after != nil && after != before, "no new daemon")
            _ = try await session.lector(["read", "The window follows the new daemon."])
            let shown = await poll(timeout: 10, { (try? await desk.drive(["text"]))?["text"] as? String ?? "" },
                                   until: { $0.contains("new daemon") })
            #expect(shown.contains("new daemon"), "text shown: \(shown)")

            // `lector window FILE` with a window open: that window reads the file (one window per session).
            let file = session.directory.appendingPathComponent("given.txt")
            try "A file given to lector window on the command line.".write(to: file, atomically: true, encoding: .utf8)
            let second = try await session.run(Paths.lectorBinary, ["window", file.path], timeout: 20, environment: desk.environment)
            #expect(second.status == 0, "\(second)")
            let given = try await session.waitForSentence(containing: "A file given", timeout: 10)
            #expect(given.sentence?.contains("A file given") == true, "after lector window FILE: \(given)")

            // Ctrl+V reads the clipboard.
            _ = try await desk.drive(["paste", "Words pasted from the clipboard."])
            let pasted = try await session.waitForSentence(containing: "Words pasted", timeout: 10)
            #expect(pasted.sentence?.contains("Words pasted") == true, "after Ctrl+V: \(pasted)")

            // A file that cannot be read: one line in the window.
            let missing = session.directory.appendingPathComponent("no-such-file.txt").path
            _ = try await session.run(Paths.lectorBinary, ["window", missing], timeout: 20, environment: desk.environment)
            let said2 = await poll(timeout: 5, { (try? await desk.drive(["status"]))?["status"] as? String ?? "" },
                                   until: { $0.contains("no-such-file") })
            #expect(said2.contains("no-such-file") && !said2.contains("\n"), "status line: \(said2)")
        }

        @Test("no Word signal is sent while no client asked for them (WatchWords); a client that asks gets them")
        func wordsOnlyWhenAsked() async throws {
            let session = try await world()
            // A plain listener: it subscribes to every signal of Lector's object, as any client can.
            let listener = try session.spawn("gdbus", ["monitor", "--session", "--dest", Lector.busName,
                                                       "--object-path", "/org/lector/Lector"], tag: "monitor-words")
            defer { listener.stopNow(grace: 1) }
            try await Task.sleep(for: .milliseconds(300))
            _ = try await session.lector(["read", "--wait", "Four words heard here. And four more words."], timeout: 30)
            #expect(listener.stdout.contains(".Sentence"), "the listener heard nothing: \(listener.stdout)")
            #expect(!listener.stdout.contains(".Word"), "Word signals sent though nobody asked: \(listener.stdout)")

            // A window opened while a text is read shows it at once; it asks for the words, and gets them; the
            // listener still does not.
            _ = try await session.lector(["read", "Words for the window to mark, one after the other, slowly."])
            _ = try await session.waitForState("reading", timeout: 5)
            let desk = try await Desk.open(session)
            defer { desk.close() }
            let shown = await poll(timeout: 5, { (try? await desk.drive(["text"]))?["text"] as? String ?? "" },
                                   until: { $0.hasPrefix("Words for the window") })
            #expect(shown.hasPrefix("Words for the window"), "text shown: \(shown)")
            let follow = try await desk.drive(["follow", "1.5"])
            #expect((follow["words"] as? Int ?? 0) >= 2, "\(follow)")
            #expect(!listener.stdout.contains(".Word"), "Word signals reached a client that did not ask")
        }

        @Test("MPRIS Raise starts the window when none is open, and brings up the one that is")
        func raise() async throws {
            let session = try await world(.bare)
            let (xserver, display) = try await Desk.xserver(session, tag: "raise")
            defer { xserver.stopNow(grace: 2) }
            // The daemon's environment is the window's: a desktop session's (here, the X server's).
            try await Desk.endDaemon(session)
            try await session.startDaemon(environment: display)
            try await session.ensureMPRIS()
            let root = ["call", "--session", "--dest", "org.mpris.MediaPlayer2.lector", "--object-path", "/org/mpris/MediaPlayer2"]
            let can = try await session.run("gdbus", root + ["--method", "org.freedesktop.DBus.Properties.Get",
                                                             "org.mpris.MediaPlayer2", "CanRaise"])
            #expect(can.stdout.contains("true"), "\(can)")
            let raised = try await session.run("gdbus", root + ["--method", "org.mpris.MediaPlayer2.Raise"])
            #expect(raised.status == 0, "\(raised)")
            let window = await poll(timeout: 15, { await session.nameOwner("org.lector.Lector.Window") }, until: { $0 != nil })
            #expect(window != nil, "no window after Raise\n\(session.daemonLogs())")
            let again = try await session.run("gdbus", root + ["--method", "org.mpris.MediaPlayer2.Raise"])
            #expect(again.status == 0, "\(again)")
            try await Task.sleep(for: .milliseconds(500))
            #expect(await session.nameOwner("org.lector.Lector.Window") == window, "a second Raise started a second window")
        }

        @Test("a text of 5 MB: the window answers while it is shown in pieces, and shows all of it")
        func fiveMegabytes() async throws {
            let session = try await world()
            let desk = try await Desk.open(session)
            defer { desk.close() }
            let paragraph = String(repeating: "A long book has many words in many sentences. ", count: 20) + "\n\n"
            let book = String(repeating: paragraph, count: 5_000_000 / paragraph.utf8.count + 1)
            let file = session.directory.appendingPathComponent("book.txt")
            try book.write(to: file, atomically: true, encoding: .utf8)
            _ = try await session.lector(["read", "--file", file.path])
            let started = ContinuousClock.now
            let answers = try await desk.drive(["count"])
            let answered = seconds(ContinuousClock.now - started)
            #expect(answered < 5, "the window took \(answered) s to answer (\(answers))")
            let total = book.unicodeScalars.count
            let count = await poll(timeout: 60, every: .milliseconds(500),
                                   { (try? await desk.drive(["count"]))?["count"] as? Int ?? 0 }, until: { $0 >= total })
            #expect(count == total, "shown \(count) of \(total) characters")
        }
    }
}

/// A private X server with the reader window on it, and the driver that works it (Tests/window/drive.py).
struct Desk {
    let session: PrivateSession
    let xserver: BackgroundProcess
    let window: BackgroundProcess
    let environment: [String: String]

    static let driver = Paths.packageRoot.appendingPathComponent("Tests/window/drive.py").path

    /// Starts Xvfb (choosing a free display itself) and `lector window` on it, and waits until the window is on
    /// the accessibility bus.
    static func open(_ session: PrivateSession) async throws -> Desk {
        let tag = UUID().uuidString.prefix(8)
        let (xserver, environment) = try await xserver(session, tag: String(tag))
        let window = try session.spawn(Paths.lectorBinary, ["window"], tag: "window-\(tag)", environment: environment)
        let desk = Desk(session: session, xserver: xserver, window: window, environment: environment)
        do { _ = try await desk.drive(["text"]) } catch {
            desk.close()
            throw error
        }
        return desk
    }

    /// Starts Xvfb (it chooses a free display) and returns it with the environment that puts GTK on it: X11
    /// without GL, accessibility through AT-SPI (whose bus the private session bus activates).
    static func xserver(_ session: PrivateSession, tag: String) async throws -> (BackgroundProcess, [String: String]) {
        let xserver = try session.spawn("Xvfb", ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                        tag: "xvfb-\(tag)")
        let display = await poll(timeout: 10, { xserver.stdout.trimmingCharacters(in: .whitespacesAndNewlines) },
                                 until: { !$0.isEmpty || !xserver.isRunning })
        guard !display.isEmpty else {
            await xserver.stop()
            throw HarnessError("Xvfb did not start: \(xserver.stderr)")
        }
        return (xserver, ["DISPLAY": ":" + display, "GDK_BACKEND": "x11", "GSK_RENDERER": "cairo", "GTK_A11Y": "atspi"])
    }

    /// Ends the daemon that owns Lector's name, whoever started it (a window starts one of its own).
    static func endDaemon(_ session: PrivateSession) async throws {
        guard let owner = await session.nameOwner(Lector.busName) else { return }
        let answer = try await session.run("gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                                                     "/org/freedesktop/DBus", "--method",
                                                     "org.freedesktop.DBus.GetConnectionUnixProcessID", owner])
        // "(uint32 1234,)"
        guard let pid = answer.stdout.split(separator: " ").last.flatMap({ Int32($0.filter(\.isNumber)) }) else { throw HarnessError("no pid for \(owner): \(answer)") }
        kill(pid, SIGTERM)
        guard await eventually(timeout: 5, { await session.nameOwner(Lector.busName) == nil }) else {
            throw HarnessError("the daemon \(pid) did not end")
        }
    }

    /// Runs one step of the driver; returns its JSON answer. - Throws: `HarnessError` when the step fails.
    func drive(_ step: [String], timeout: Double = 60) async throws -> [String: Any] {
        let result = try await session.run("/usr/bin/python3", [Self.driver] + step, timeout: timeout, environment: environment)
        guard result.status == 0,
              let answer = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else {
            throw HarnessError("drive \(step.joined(separator: " ")): \(result)\nwindow: \(window.stderr.suffix(1500))")
        }
        return answer
    }

    /// Ends the window and the X server.
    func close() {
        window.stopNow(grace: 2)
        xserver.stopNow(grace: 2)
    }
}

extension Integration.Window {
    @Test("a window opened while a text is read shows the voice being heard in its Voice list")
    func voiceShownWhenOpenedWhileReading() async throws {
        let session = try await world()
        _ = try await session.lector(["read", "--lang", "de", Lector.veryLong])
        _ = try await session.waitForState("reading", timeout: 10)
        let desk = try await Desk.open(session)
        defer { desk.close() }
        let heard = try await session.status().fields["voice"] ?? ""
        let shown = await poll(timeout: 5, { (try? await desk.drive(["voice"]))?["labels"] as? [String] ?? [] },
                               until: { $0.contains(heard) })
        #expect(!heard.isEmpty && shown.contains(heard), "the Voice list shows \(shown); the voice heard is \(heard)")
        _ = try await session.lector(["stop"])
    }
}
