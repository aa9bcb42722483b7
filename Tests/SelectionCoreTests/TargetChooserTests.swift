import SelectionCore
import Testing

@Suite struct TargetChooserTests {
    @Test("X11: UTF8_STRING is preferred, STRING (Latin-1) is the fallback, the metadata targets do not count")
    func x11Order() {
        let firefox = ["TIMESTAMP", "TARGETS", "MULTIPLE", "text/html", "text/_moz_htmlcontext", "STRING", "UTF8_STRING", "COMPOUND_TEXT", "TEXT"]
        #expect(TargetChooser.choose(offered: firefox, preferred: TargetChooser.x11Preferred) == .read("UTF8_STRING", .utf8))
        #expect(TargetChooser.choose(offered: ["TARGETS", "STRING"], preferred: TargetChooser.x11Preferred) == .read("STRING", .latin1))
        #expect(TargetChooser.choose(offered: ["TARGETS", "TIMESTAMP"], preferred: TargetChooser.x11Preferred) == .empty)
        #expect(TargetChooser.choose(offered: [], preferred: TargetChooser.x11Preferred) == .empty)
        #expect(TargetChooser.choose(offered: nil, preferred: TargetChooser.x11Preferred) == .read("UTF8_STRING", .utf8))
    }

    @Test("Wayland: text/plain;charset=utf-8 first (any case), then text/plain, UTF8_STRING; other text/plain variants as UTF-8")
    func waylandOrder() {
        let gtk = ["text/html", "TEXT", "STRING", "UTF8_STRING", "text/plain", "text/plain;charset=utf-8"]
        #expect(TargetChooser.choose(offered: gtk, preferred: TargetChooser.waylandPreferred) == .read("text/plain;charset=utf-8", .utf8))
        #expect(TargetChooser.choose(offered: ["text/plain;charset=UTF-8"], preferred: TargetChooser.waylandPreferred)
            == .read("text/plain;charset=UTF-8", .utf8))
        #expect(TargetChooser.choose(offered: ["UTF8_STRING", "text/plain"], preferred: TargetChooser.waylandPreferred) == .read("UTF8_STRING", .utf8))
        #expect(TargetChooser.choose(offered: ["text/plain;charset=iso-8859-1x"], preferred: TargetChooser.waylandPreferred)
            == .read("text/plain;charset=iso-8859-1x", .utf8))
    }

    @Test("Only an image: no text, the MIME types named (at most three); other data without MIME types is 'other data'")
    func imageOnly() {
        #expect(TargetChooser.choose(offered: ["TARGETS", "image/png"], preferred: TargetChooser.x11Preferred) == .noText(["image/png"]))
        let many = ["image/png", "image/jpeg", "image/bmp", "image/gif", "SAVE_TARGETS"]
        #expect(TargetChooser.choose(offered: many, preferred: TargetChooser.waylandPreferred) == .noText(["image/png", "image/jpeg", "image/bmp"]))
        #expect(TargetChooser.choose(offered: ["PIXMAP"], preferred: TargetChooser.x11Preferred) == .noText([]))
        #expect(SelectionFailure.noText([]).line(for: .clipboard) == "the clipboard holds no text (it holds other data)")
        #expect(SelectionFailure.noText(["image/png"]).line(for: .clipboard) == "the clipboard holds no text (it holds image/png)")
    }

    @Test("Decoding: UTF-8 repaired, STRING as Latin-1, white space alone is nothing")
    func decoding() {
        #expect(TargetChooser.decode(Array("Grüße".utf8), .utf8) == "Grüße")
        #expect(TargetChooser.decode([0x47, 0x72, 0xFC, 0xDF, 0x65], .latin1) == "Grüße")
        #expect(TargetChooser.decode([0x61, 0xFF, 0x62], .utf8) == "a\u{FFFD}b")
        #expect(TargetChooser.decode(Array(" \n\t ".utf8), .utf8) == nil)
        #expect(TargetChooser.decode([], .latin1) == nil)
    }

    @Test("The 32 MiB limit: a transfer may reach it, not pass it, and nothing past it is kept")
    func limit() {
        #expect(SelectionLimits.maximumBytes == 32 * 1024 * 1024)
        #expect(SelectionLimits.stepTimeoutMilliseconds == 5000)
        var buffer = TransferBuffer(limit: 10)
        let first = buffer.append([UInt8](repeating: 1, count: 6))
        let upToLimit = buffer.append([UInt8](repeating: 2, count: 4))
        let past = buffer.append([3])
        #expect(first && upToLimit && !past)
        #expect(buffer.bytes.count == 10)
        #expect(SelectionFailure.tooBig.line(for: .primary) == "the selection holds more than 32 MiB of text; Lector reads at most 32 MiB")
    }

    @Test("Exit status 3 only where another way may work (no display, no data-control)")
    func exitStatus() {
        #expect(SelectionFailure.noDataControl.exitStatus == 3)
        #expect(SelectionFailure.cannotConnect("x").exitStatus == 3)
        for failure in [SelectionFailure.empty, .tooBig, .timedOut, .noPrimary, .failed("x"), .noText([])] {
            #expect(failure.exitStatus == 1)
        }
        #expect(SelectionFailure.noDataControl.line(for: .clipboard).contains("lector window"))
    }
}
