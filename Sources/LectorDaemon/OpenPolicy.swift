import GLibKit
import SpeechCore

/// Who may make the daemon open which file by its name: the policy of MPRIS `OpenUri` (README, "Who may open
/// what"). Pure: the facts are gathered by `OpenUriGate`; `lector read --file` and `SpeakFile` are not
/// subject to it (their caller opened the file itself and passes the descriptor).
///
/// The daemon reads files with the user's rights and publishes what it reads (the sentence being read goes
/// to every MPRIS client), so a caller that names a file borrows those rights: a confused deputy. The policy:
/// 1. Only a caller running as the daemon's user, outside any sandbox, may name a file. Flatpak apps, snaps,
///    processes confined by another AppArmor profile than the daemon's, and callers whose credentials cannot
///    be established are refused before the file is looked at (not even whether it exists is revealed); they
///    can open a file themselves and pass its descriptor (`org.lector.Lector1.SpeakFile`), which reads only
///    what they could read.
/// 2. The file, as named and as opened (symbolic links resolved), lies in no hidden folder and is not hidden
///    itself: `~/.ssh`, `~/.gnupg`, `~/.config`, `~/.local/share/keyrings` and the like hold keys and
///    credentials, not texts to read aloud. A file with more than one hard link is refused too: its other
///    names may lie in hidden folders (`~/.ssh/config` linked into `~/Documents`), and no path tells them.
/// 3. Its content type, guessed by GIO both from its name and first bytes and from its first bytes alone, is
///    text (`text/plain` or a subclass of it in the shared MIME-info database), SSML or a document, and is not key
///    material (`secretTypes`); its first bytes hold no PEM or PGP private key block (`holdsPrivateKey`).
enum OpenPolicy {
    /// What the policy answers: allowed, or refused with one line that says why (sent back as the D-Bus
    /// error `org.freedesktop.DBus.Error.AccessDenied`).
    enum Decision: Equatable {
        case allowed
        case refused(String)
    }

    /// How many bytes of a file its content type is guessed from (GIO's magic rules look at fewer).
    static let sniffedBytes = 4_096

    /// Content types that are text to GIO but hold keys or credentials (shared MIME-info database names).
    static let secretTypes: Set<String> = [
        "application/pgp-keys", "application/pgp-encrypted", "application/pgp-signature", "application/x-pem-key",
        "application/x-pem-file", "application/pkcs8", "application/pkcs12", "application/x-pkcs12",
        "application/x-ssh-key", "application/x-ssh-private-key",
    ]

    /// Content types read besides text: SSML (W3C SSML 1.1, appendix: `application/ssml+xml`), an empty
    /// file (nothing of it can be published), and the documents Lector imports (`DocumentFormat`: EPUB, PDF,
    /// HTML, Markdown, ODT, DOCX; a plain zip is told apart by the document worker).
    static let documentTypes: Set<String> = Set(["application/ssml+xml", "application/x-zerosize", DocumentFormat.zipped]
                                                + DocumentFormat.allContentTypes)

    /// Whether `caller` may name files at all (rule 1).
    static func decide(caller: Caller) -> Decision {
        switch caller {
        case .user: return .allowed
        case .otherUser(let uid):
            return .refused("OpenUri refused: the caller runs as another user (uid \(uid))")
        case .flatpak, .snap, .confined, .unidentified:
            return .refused("OpenUri refused: \(caller.description) may not open files by name; "
                            + "pass an open file to org.lector.Lector1.SpeakFile instead")
        }
    }

    /// Whether the file described by `file` may be read for a caller that may name files (rules 2 and 3).
    static func decide(file: FileFacts) -> Decision {
        let suggestion = "; `lector read --file` reads it"
        guard let resolved = file.resolvedPath else {
            return .refused("OpenUri refused: cannot tell which file \(file.path) is once opened")
        }
        for path in [file.path, resolved] {
            if let hidden = hiddenComponent(in: path) {
                return .refused("OpenUri refused: \(file.path) is hidden or in a hidden folder (\(hidden))" + suggestion)
            }
        }
        for (type, isText) in [(file.contentType, file.contentTypeIsText), (file.dataContentType, file.dataContentTypeIsText)]
        where !isReadable(type: type, isText: isText) {
            return .refused("OpenUri refused: \(file.path) is not a text document (\(type))")
        }
        if file.linkCount > 1 {
            return .refused("OpenUri refused: \(file.path) has \(file.linkCount) hard links, and the folders its other "
                            + "names are in cannot be told" + suggestion)
        }
        if file.holdsPrivateKey {
            return .refused("OpenUri refused: \(file.path) holds a private key" + suggestion)
        }
        return .allowed
    }

    /// The first hidden component (a name starting with "." other than "." and "..") of `path`, or nil.
    static func hiddenComponent(in path: String) -> String? {
        path.split(separator: "/").first { $0.hasPrefix(".") && $0 != "." && $0 != ".." }.map(String.init)
    }

    /// Whether a file of content `type` is read: text or one of `documentTypes`, and none of `secretTypes`.
    /// - Parameters:
    ///   - isText: whether `type` is `text/plain` or a subclass of it (`ContentType.isA`).
    static func isReadable(type: String, isText: Bool) -> Bool {
        !secretTypes.contains(type) && (isText || documentTypes.contains(type))
    }

    /// Whether `head` (a file's first bytes) holds the start of a private key: a PEM block whose label names
    /// one (RFC 7468: "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----",
    /// "-----BEGIN ENCRYPTED PRIVATE KEY-----" …) or an OpenPGP armored secret key
    /// ("-----BEGIN PGP PRIVATE KEY BLOCK-----", RFC 4880 section 6.2).
    static func holdsPrivateKey(_ head: [UInt8]) -> Bool {
        let text = String(decoding: head, as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).contains { line in
            guard let begin = line.firstRange(of: "-----BEGIN ") else { return false }
            return line[begin.upperBound...].contains("PRIVATE KEY")
        }
    }
}

/// What the policy needs to know of a file, gathered from the open descriptor by `OpenUriGate`.
struct FileFacts: Equatable {
    /// The path as the caller named it, made absolute.
    var path: String
    /// The path of the file actually opened, symbolic links resolved (the kernel's name of the descriptor);
    /// nil when it cannot be known.
    var resolvedPath: String?
    /// Its content type guessed from its name and its first `OpenPolicy.sniffedBytes` bytes.
    var contentType: String
    /// Whether `contentType` is `text/plain` or a subclass of it.
    var contentTypeIsText: Bool
    /// Its content type guessed from its first bytes alone (a binary file named `notes.txt` is text by name).
    var dataContentType: String
    /// Whether `dataContentType` is `text/plain` or a subclass of it.
    var dataContentTypeIsText: Bool
    /// Whether its first bytes hold a private key (`OpenPolicy.holdsPrivateKey`).
    var holdsPrivateKey: Bool
    /// Its hard links (`st_nlink` of the open descriptor).
    var linkCount: Int = 1
}
