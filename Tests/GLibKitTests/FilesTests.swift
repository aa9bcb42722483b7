@preconcurrency import Glibc
import GLibKit
import Testing

@Suite struct FilesTests {
    /// A fresh folder under /tmp.
    private func folder() throws -> String {
        var template = Array("/tmp/lector-files-XXXXXX".utf8CString)
        let made: String? = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        return try #require(made)
    }

    @Test func writesAtomicallyAndReadsBack() throws {
        let dir = try folder()
        let path = dir + "/state"
        try writeFileAtomically(path, contents: Array("first\n".utf8))
        #expect(try readFile(path) == Array("first\n".utf8))
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let before = st.st_ino
        try writeFileAtomically(path, contents: Array("second, longer\n".utf8), durable: true)
        #expect(try readFile(path) == Array("second, longer\n".utf8))
        #expect(stat(path, &st) == 0 && st.st_ino != before, "not replaced by a new file")
        try writeFileAtomically(path, contents: [])
        #expect(try readFile(path) == [])
        // No temporary file is left behind.
        let listing = try #require(opendir(dir))
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(listing)
        #expect(names == ["state"])
        unlink(path)
        rmdir(dir)
    }

    @Test func makesAMissingFolderAndFailsWhereNoneCanBeMade() throws {
        let base = "/tmp/lector-files-\(getpid())"
        defer { unlink(base + "/a/b/state"); rmdir(base + "/a/b"); rmdir(base + "/a"); unlink(base + "/file"); rmdir(base) }
        try writeFileAtomically(base + "/a/b/state", contents: [1])
        #expect(try readFile(base + "/a/b/state") == [1])
        // Below a regular file no folder can be made.
        try writeFileAtomically(base + "/file", contents: [2])
        #expect(throws: GLibError.self) { try writeFileAtomically(base + "/file/sub/state", contents: [1]) }
    }
}
