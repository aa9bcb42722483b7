/// Which selection is read: the primary selection (the text last selected) or the clipboard (the text last
/// copied). X11 names them PRIMARY and CLIPBOARD (ICCCM §2.6.1); wlr-data-control reports them as
/// `primary_selection` and `selection`.
public enum SelectionKind: String, Sendable, CaseIterable {
    case primary, clipboard

    /// How the one-line messages name it: "the selection", "the clipboard".
    public var spoken: String { self == .primary ? "the selection" : "the clipboard" }
    /// The X11 selection atom's name: "PRIMARY", "CLIPBOARD".
    public var x11Atom: String { self == .primary ? "PRIMARY" : "CLIPBOARD" }
}

/// The explicit limits of reading a selection.
public enum SelectionLimits {
    /// The most text a selection may hand over, bytes (32 MiB, like a file given to `lector read`).
    public static let maximumBytes = 32 << 20
    /// How long the selection's owner may take for each step of the transfer (an answer to a conversion, the
    /// next chunk of an incremental transfer, the next bytes in the pipe), milliseconds.
    public static let stepTimeoutMilliseconds: Int32 = 5000
    /// How long the whole transfer may take, every step together, milliseconds: an owner that trickles the
    /// text (a byte per incremental chunk, each in time) is cut off too. A 32 MiB transfer takes about 1 s.
    public static let transferTimeoutMilliseconds: Int32 = 10_000
}

/// How the bytes of a chosen target or MIME type are decoded.
public enum TextEncoding: Sendable, Equatable {
    /// UTF-8 (UTF8_STRING, text/plain;charset=utf-8 and, in practice, text/plain); invalid bytes are repaired.
    case utf8
    /// ISO 8859-1, the X11 STRING target (ICCCM §2.7.1).
    case latin1
}

/// What to ask the selection's owner for, given what it offers.
public enum TargetChoice: Sendable, Equatable {
    /// Ask for this target (X11) or MIME type (Wayland), decode it this way.
    case read(String, TextEncoding)
    /// Nothing is offered: the selection is empty.
    case empty
    /// Only other data is offered (an image, say); the MIME types among the offered ones, at most three.
    case noText([String])
}

/// The choice of a text type among those a selection's owner offers (pure).
public enum TargetChooser {
    /// X11 targets in the order they are preferred: UTF8_STRING first, STRING (Latin-1) as the fallback.
    public static let x11Preferred: [(String, TextEncoding)] = [
        ("UTF8_STRING", .utf8), ("text/plain;charset=utf-8", .utf8), ("STRING", .latin1), ("text/plain", .utf8),
    ]
    /// Wayland MIME types in the order they are preferred.
    public static let waylandPreferred: [(String, TextEncoding)] = [
        ("text/plain;charset=utf-8", .utf8), ("UTF8_STRING", .utf8), ("text/plain", .utf8), ("STRING", .latin1),
        ("TEXT", .utf8),
    ]
    /// X11 targets that describe the selection rather than hold it (ICCCM §2.6.2), ignored when telling an
    /// empty selection from one holding other data.
    public static let x11Meta: Set<String> = ["TARGETS", "TIMESTAMP", "MULTIPLE", "SAVE_TARGETS", "DELETE", "INSERT_SELECTION",
                                              "INSERT_PROPERTY", "LENGTH"]

    /// The type to read among `offered` (compared without regard to case), in the order of `preferred`.
    /// `offered` nil means the owner did not list its types: the first preferred type is tried.
    public static func choose(offered: [String]?, preferred: [(String, TextEncoding)]) -> TargetChoice {
        guard let offered else { return .read(preferred[0].0, preferred[0].1) }
        for (name, encoding) in preferred {
            if let match = offered.first(where: { $0.lowercased() == name.lowercased() }) { return .read(match, encoding) }
        }
        // Any other text/plain variant, read as UTF-8.
        if let plain = offered.first(where: { $0.lowercased().hasPrefix("text/plain") }) { return .read(plain, .utf8) }
        let data = offered.filter { !x11Meta.contains($0) && !$0.isEmpty }
        if data.isEmpty { return .empty }
        return .noText(Array(data.filter { $0.contains("/") }.prefix(3)))
    }

    /// The text of `bytes` in `encoding`; nil when it holds nothing but white space.
    public static func decode(_ bytes: [UInt8], _ encoding: TextEncoding) -> String? {
        let text: String
        switch encoding {
        case .utf8: text = String(decoding: bytes, as: UTF8.self)
        case .latin1: text = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        }
        return text.contains(where: { !$0.isWhitespace }) ? text : nil
    }
}

/// Why a selection could not be read; `line(for:)` is the one line the user sees, `exitStatus` what
/// `lector-selection` exits with.
public enum SelectionFailure: Error, Sendable, Equatable {
    /// No owner, nothing offered, or only white space.
    case empty
    /// Only other data; the offered MIME types (at most three).
    case noText([String])
    /// More than `SelectionLimits.maximumBytes`.
    case tooBig
    /// The owner did not answer a step within `SelectionLimits.stepTimeoutMilliseconds`.
    case timedOut
    /// The transfer took longer than `SelectionLimits.transferTimeoutMilliseconds` in all.
    case tooSlow
    /// The display cannot be reached (the reason); another way (a clipboard tool) may be tried.
    case cannotConnect(String)
    /// The Wayland compositor offers no data-control protocol (GNOME's Mutter): only the focused window may
    /// read its selections. Another way (XWayland, a clipboard tool) may be tried.
    case noDataControl
    /// The compositor does not hand the primary selection to data-control clients (version 1 of the
    /// protocol, or no `primary_selection` event on binding).
    case noPrimary
    /// The display broke the transfer off (the reason).
    case failed(String)

    /// The one line that says what happened (and, where the user can do something, what to do).
    public func line(for kind: SelectionKind) -> String {
        let what = kind.spoken
        switch self {
        case .empty: return "\(what) is empty"
        case .noText(let types): return "\(what) holds no text (it holds \(types.isEmpty ? "other data" : types.joined(separator: ", ")))"
        case .tooBig: return "\(what) holds more than 32 MiB of text; Lector reads at most 32 MiB"
        case .timedOut: return "the program that owns \(what) did not hand it over within 5 s"
        case .tooSlow: return "the program that owns \(what) took more than 10 s to hand it over"
        case .cannotConnect(let reason): return "cannot read \(what): \(reason)"
        case .noDataControl:
            return "cannot read \(what): this Wayland compositor lets only the focused window read it (no data-control protocol, as on GNOME); "
                + "run Lector where XWayland's DISPLAY is set, or paste into the reader window (lector window, Ctrl+V)"
        case .noPrimary: return "cannot read \(what): this compositor does not hand the primary selection to other programs; use --clipboard"
        case .failed(let reason): return "cannot read \(what): \(reason)"
        }
    }

    /// 3 when another way may still work (no display, no data-control), 1 otherwise.
    public var exitStatus: Int32 {
        switch self {
        case .cannotConnect, .noDataControl: return 3
        default: return 1
        }
    }

    /// True when another way of reading (another display, a clipboard tool) may still work.
    public var triesAnotherWay: Bool { exitStatus == 3 }
}

/// Bytes gathered from a transfer, up to `SelectionLimits.maximumBytes` (pure).
public struct TransferBuffer: Sendable {
    /// The bytes so far.
    public private(set) var bytes: [UInt8] = []
    /// The limit, bytes.
    public let limit: Int

    /// An empty buffer that holds at most `limit` bytes.
    public init(limit: Int = SelectionLimits.maximumBytes) { self.limit = limit }

    /// Appends `chunk`; false (and nothing kept beyond the limit) once the transfer is past the limit.
    public mutating func append<C: Collection>(_ chunk: C) -> Bool where C.Element == UInt8 {
        guard bytes.count + chunk.count <= limit else { return false }
        bytes += chunk
        return true
    }
}
