import CArchive

/// Why the entries of an archive could not be read; `description` is one line.
public enum ArchiveError: Error, CustomStringConvertible, Sendable {
    /// Not an archive libarchive reads, or broken or truncated (libarchive's message).
    case unreadable(String)
    /// An entry or the whole extraction passes a limit of `ZipArchive.Limits` (a zip bomb, or simply too big).
    case tooLarge(String)
    /// An entry is encrypted (a password-protected zip).
    case encrypted(String)

    /// The message, one line.
    public var description: String {
        switch self {
        case .unreadable(let why): "broken or truncated archive: \(why)"
        case .tooLarge(let why): "archive too large to read: \(why)"
        case .encrypted(let name): "archive entry \(name) is encrypted"
        }
    }
}

/// The entries of a zip container (EPUB, OpenDocument, Office Open XML) read from memory with libarchive
/// (libarchive's archive_read(3)), within explicit limits: every size is checked while decompressing, never
/// taken from the archive's own headers.
public enum ZipArchive {
    /// What reading one archive may cost.
    public struct Limits: Sendable {
        /// Most entries listed (10,000).
        public var maximumEntries = 10_000
        /// Most bytes one entry may decompress to (64 MiB).
        public var maximumEntryBytes = 64 << 20
        /// Most bytes all wanted entries together may decompress to: the larger of 1 MiB and this many times
        /// the archive's size (100).
        public var maximumRatio = 100
        /// The limits above.
        public init() {}
    }

    /// The names of all entries of the zip in `bytes`, and the contents of those `wanted` says to read.
    /// - Throws: `ArchiveError` when the bytes are not a zip, are broken or truncated before all entries were
    ///   listed, an entry wanted is encrypted, or a limit is passed.
    public static func read(_ bytes: [UInt8], limits: Limits = Limits(),
                            wanted: (String) -> Bool) throws(ArchiveError) -> (names: [String], contents: [String: [UInt8]]) {
        guard let archive = archive_read_new() else { throw .unreadable("out of memory") }
        defer { archive_read_free(archive) }
        archive_read_support_format_zip(archive)
        let totalLimit = max(1 << 20, bytes.count.multipliedReportingOverflow(by: limits.maximumRatio).partialValue)
        var names: [String] = []
        var contents: [String: [UInt8]] = [:]
        var total = 0
        // libarchive reads `bytes` in place: the whole reading happens inside this closure.
        let failure: ArchiveError? = bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> ArchiveError? in
          do throws(ArchiveError) {
            guard archive_read_open_memory(archive, buffer.baseAddress, buffer.count) == ARCHIVE_OK else {
                throw .unreadable(message(archive))
            }
            var entry: OpaquePointer?
            while true {
                let status = archive_read_next_header(archive, &entry)
                if status == ARCHIVE_EOF { break }
                guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else { throw .unreadable(message(archive)) }
                let name = archive_entry_pathname_utf8(entry).map { String(cString: $0) }
                    ?? archive_entry_pathname(entry).map { String(cString: $0) } ?? ""
                names.append(name)
                guard names.count <= limits.maximumEntries else { throw .tooLarge("more than \(limits.maximumEntries) entries") }
                guard wanted(name) else { continue }
                if archive_entry_is_encrypted(entry) != 0 { throw .encrypted(name) }
                var data: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let n = chunk.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, $0.count) }
                    if n == 0 { break }
                    guard n > 0 else { throw .unreadable("\(name): \(message(archive))") }
                    data.append(contentsOf: chunk[..<n])
                    total += n
                    guard data.count <= limits.maximumEntryBytes else {
                        throw .tooLarge("\(name) decompresses to more than \(limits.maximumEntryBytes >> 20) MiB")
                    }
                    guard total <= totalLimit else {
                        throw .tooLarge("entries decompress to more than \(limits.maximumRatio) times the archive's size")
                    }
                }
                contents[name] = data
            }
            return nil
          } catch {
            return error
          }
        }
        if let failure { throw failure }
        return (names, contents)
    }

    private static func message(_ archive: OpaquePointer) -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
    }
}
