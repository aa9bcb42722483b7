import CGio
@preconcurrency import Glibc

/// Replaces the contents of `path` atomically (`g_file_set_contents`: written to a temporary file in the same
/// directory, synced, then renamed over `path`), so a reader sees either the old or the new contents, also after
/// a crash. Makes the parent directory first (mode 0700) when it is missing.
///
/// - Throws: `GLibError` in the `G_FILE_ERROR` domain; its message names the file.
public func writeFileAtomically(_ path: String, _ contents: [UInt8]) throws(GLibError) {
    if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
        _ = g_mkdir_with_parents(String(path[..<slash]), 0o700)
    }
    var error: UnsafeMutablePointer<GError>?
    // A terminating NUL keeps the pointer valid for an empty file; the length excludes it.
    let bytes = contents.map { CChar(bitPattern: $0) } + [0]
    let ok = g_file_set_contents(path, bytes, gssize(contents.count), &error)
    if ok == 0 { throw GLibError(consuming: error!) }
}

/// Removes the file at `path` (`unlink(2)`); true when it was removed, false when it did not exist or could not be.
@discardableResult
public func removeFile(_ path: String) -> Bool {
    unlink(path) == 0
}
