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

/// What reading a zip container (EPUB, OpenDocument, Office Open XML) with `ZipReader` may cost: every size is
/// checked while decompressing, never taken from the archive's own headers.
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

    static func message(_ archive: OpaquePointer) -> String {
        archive_error_string(archive).map { String(cString: $0) } ?? "unknown error"
    }
}

/// A zip container whose entries are decompressed one at a time, when asked for (libarchive's
/// archive_read(3)), so that a reader of the first chapters does not wait for the rest. The entries are listed
/// once when it is made (headers only); an entry is then found by reading on from the last one asked for.
/// Entries passed on the way that the reader will want (`keeping`) are decompressed then and held until asked
/// for, so that entries asked for in any order cost one pass over the archive: its entries stored in another
/// order than they are read (an EPUB whose chapters are not zipped in spine order) are not looked for from the
/// start again each time, which made reading quadratic in their number. Only an entry asked for a second
/// time, or one not kept, is looked for from the start again. The same `ZipArchive.Limits` hold for each entry
/// and for all entries read together.
public final class ZipReader {
    /// The names of all entries, in the archive's order.
    public let names: [String]
    private let indices: [String: Int]
    private let buffer: UnsafeMutableRawBufferPointer
    private let limits: ZipArchive.Limits
    private let totalLimit: Int
    private var total = 0
    /// The archive open for reading entries, and the index of the next header it reads.
    private var cursor: OpaquePointer?
    private var position = 0
    /// Which entries are decompressed when passed on the way to another one.
    private let keep: (String) -> Bool
    /// Entries decompressed on the way to another one, by index, until asked for.
    private var held: [Int: [UInt8]] = [:]
    /// Entries already returned (by index), which are not held again when passed.
    private var returned: Set<Int> = []
    /// How many entry headers have been read since the entries were listed (each pass from the start reads
    /// them again): a measure of the work done, for tests.
    public private(set) var headersRead = 0

    /// Lists the entries of the zip in `bytes` (copied, held until this is freed). Entries whose names
    /// `keeping` accepts are decompressed when passed on the way to another one and held until asked for
    /// (default: none, each is decompressed only when asked for).
    /// - Throws: `ArchiveError` when the bytes are not a zip, are broken or truncated before all entries were
    ///   listed, or hold more than `limits.maximumEntries` entries.
    public init(_ bytes: [UInt8], limits: ZipArchive.Limits = ZipArchive.Limits(),
                keeping: @escaping (String) -> Bool = { _ in false }) throws(ArchiveError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        let names: [String]
        do { names = try Self.list(UnsafeRawBufferPointer(rebasing: buffer[..<bytes.count]), limits: limits) } catch {
            buffer.deallocate()
            throw error
        }
        self.buffer = UnsafeMutableRawBufferPointer(rebasing: buffer[..<bytes.count])
        self.names = names
        var indices: [String: Int] = [:]
        for (index, name) in names.enumerated() where indices[name] == nil { indices[name] = index }
        self.indices = indices
        self.limits = limits
        keep = keeping
        totalLimit = max(1 << 20, bytes.count.multipliedReportingOverflow(by: limits.maximumRatio).partialValue)
    }

    deinit {
        if let cursor { archive_read_free(cursor) }
        buffer.deallocate()
    }

    /// The decompressed contents of the entry `name` (its first one, if named twice), nil when there is none.
    /// - Throws: `ArchiveError` when the entry, or one kept on the way to it, is encrypted, broken, or passes a
    ///   limit.
    public func contents(of name: String) throws(ArchiveError) -> [UInt8]? {
        guard let index = indices[name] else { return nil }
        if let data = held.removeValue(forKey: index) {
            returned.insert(index)
            return data
        }
        if cursor == nil || index < position {
            if let cursor { archive_read_free(cursor) }
            cursor = try Self.open(UnsafeRawBufferPointer(buffer))
            position = 0
        }
        guard let archive = cursor else { return nil }
        var entry: OpaquePointer?
        while position <= index {
            let status = archive_read_next_header(archive, &entry)
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let passed = entry else { throw .unreadable(ZipArchive.message(archive)) }
            headersRead += 1
            position += 1
            let at = position - 1
            // An entry that cannot be kept (broken, too large) is not held: asked for, it fails then.
            if at < index, indices[names[at]] == at, held[at] == nil, !returned.contains(at), keep(names[at]) {
                held[at] = try? data(of: passed, named: names[at], in: archive)
            }
        }
        guard let entry else { return nil }
        let data = try data(of: entry, named: name, in: archive)
        returned.insert(index)
        return data
    }

    /// The decompressed data of `entry`, the header `archive` read last, within the limits.
    private func data(of entry: OpaquePointer, named name: String, in archive: OpaquePointer) throws(ArchiveError) -> [UInt8] {
        if archive_entry_is_encrypted(entry) != 0 { throw .encrypted(name) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw .unreadable("\(name): \(ZipArchive.message(archive))") }
            data.append(contentsOf: chunk[..<n])
            total += n
            guard data.count <= limits.maximumEntryBytes else {
                throw .tooLarge("\(name) decompresses to more than \(limits.maximumEntryBytes >> 20) MiB")
            }
            guard total <= totalLimit else {
                throw .tooLarge("entries decompress to more than \(limits.maximumRatio) times the archive's size")
            }
        }
        return data
    }

    private static func open(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) -> OpaquePointer {
        guard let archive = archive_read_new() else { throw .unreadable("out of memory") }
        archive_read_support_format_zip(archive)
        guard archive_read_open_memory(archive, bytes.baseAddress, bytes.count) == ARCHIVE_OK else {
            defer { archive_read_free(archive) }
            throw .unreadable(ZipArchive.message(archive))
        }
        return archive
    }

    private static func list(_ bytes: UnsafeRawBufferPointer, limits: ZipArchive.Limits) throws(ArchiveError) -> [String] {
        let archive = try open(bytes)
        defer { archive_read_free(archive) }
        var names: [String] = []
        var entry: OpaquePointer?
        while true {
            let status = archive_read_next_header(archive, &entry)
            if status == ARCHIVE_EOF { return names }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else { throw .unreadable(ZipArchive.message(archive)) }
            names.append(archive_entry_pathname_utf8(entry).map { String(cString: $0) }
                ?? archive_entry_pathname(entry).map { String(cString: $0) } ?? "")
            guard names.count <= limits.maximumEntries else { throw .tooLarge("more than \(limits.maximumEntries) entries") }
        }
    }
}
