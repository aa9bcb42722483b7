import Foundation
import Testing

extension Integration.SpeechDispatcher {
    @Test("a daemon that stops answering (SIGSTOP): spd-say -C and the next message are answered, and it reads again once it goes on")
    func aStuckDaemonNeverLeavesTheServerWaiting() async throws {
        let session = try await world()
        let server = try await Self.startServer(session)
        defer { server.stopNow() }
        let long = "This is a long text for Speech Dispatcher. " + String(repeating: "It goes on and on for a while. ", count: 12)
        let start = session.recorder.mark()
        let say = try session.spawn("spd-say", ["-w", long], tag: "spd-say")
        defer { say.stopNow() }
        #expect(await session.recorder.waitForSpeech(after: start, timeout: 10) != nil)
        let pid = try #require(await Integration.SavedReading.daemonPID(session), "no daemon")
        kill(pid, SIGSTOP)
        var continued = false
        defer { if !continued { kill(pid, SIGCONT) } }
        let cancel = try await session.run("spd-say", ["-C"], timeout: 10)
        #expect(cancel.status == 0, "\(cancel)")
        #expect(await say.waitForExit(timeout: 5) != nil, "spd-say -w should return once cancelled")
        // The module gives up on a Speak the daemon does not answer: the server is free for what follows.
        let next = try await session.run("spd-say", ["-w", "Are you there?"], timeout: 20)
        #expect(next.status == 0, "\(next)")
        kill(pid, SIGCONT)
        continued = true
        let back = session.recorder.mark()
        let again = try await session.run("spd-say", ["-w", "Back again, and heard."], timeout: 30)
        #expect(again.status == 0, "\(again)")
        #expect(await session.recorder.waitForSpeech(after: back, timeout: 5) != nil)
        #expect(try await Self.text(session).contains("Back again, and heard."))
    }

    @Test("a line longer than the module keeps is skipped to its newline and answered with an error, never read as protocol")
    func anOverlongLineIsAnErrorNotProtocol() async throws {
        let session = try await world()
        let module = URL(fileURLWithPath: Paths.lectorBinary).deletingLastPathComponent()
            .appendingPathComponent("lector-speechd-module").path
        let tooLong = String(repeating: "x", count: (16 << 20) + 4096)
        let input = "INIT\n" + tooLong + "\nSPEAK\n" + tooLong + ".\nQUIT\n.\nQUIT\n"
        let result = try await session.run(module, [], stdin: Data(input.utf8), timeout: 30)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Array(lines.dropFirst()) == ["299 OK LOADED SUCCESSFULLY", "300 ERR UNKNOWN COMMAND", "202 OK RECEIVING MESSAGE",
                                             "301 ERROR CANT SPEAK", "210 OK QUIT"], "\(lines)")
        #expect(!lines.contains("200 OK SPEAKING"), "\(lines)")
        #expect(lines.last == "210 OK QUIT", "\(lines)")
        #expect(result.stderr.contains("was skipped"), "\(result.stderr)")
    }
}
