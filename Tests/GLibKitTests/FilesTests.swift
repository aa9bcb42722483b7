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

    /// The GLib file error code of `body`'s error, or nil when it throws none.
    private func fileError(_ body: () throws(GLibError) -> [UInt8]) -> (code: Int32, message: String)? {
        do {
            _ = try body()
            return nil
        } catch {
            #expect(error.domain == "g-file-error-quark")
            #expect(!error.message.contains("\n"))
            return (error.code, error.message)
        }
    }

    @Test func readsARegularFileBackWithinItsLimit() throws {
        let dir = try folder()
        defer { unlink(dir + "/state"); rmdir(dir) }
        try writeFileAtomically(dir + "/state", contents: Array(repeating: 7, count: 5000))
        #expect(try readRegularFile(dir + "/state", maximumBytes: 5000) == Array(repeating: 7, count: 5000))
        let tooLarge = fileError { () throws(GLibError) in try readRegularFile(dir + "/state", maximumBytes: 4999) }
        #expect(tooLarge?.message == "\(dir)/state: larger than the 4999 bytes this file may have")
        #expect(fileError { () throws(GLibError) in try readRegularFile(dir + "/missing", maximumBytes: 10) } != nil)
        do { _ = try readRegularFile(dir + "/missing", maximumBytes: 10) } catch { #expect(error.isFileNotFound) }
    }

    @Test func refusesLinksFIFOsDevicesAndFoldersWithoutBlocking() throws {
        let dir = try folder()
        defer {
            for name in ["zero", "fifo", "folder/x", "target", "link"] { unlink(dir + "/" + name) }
            rmdir(dir + "/folder")
            rmdir(dir)
        }
        #expect(symlink("/dev/zero", dir + "/zero") == 0)
        #expect(mkfifo(dir + "/fifo", 0o600) == 0)
        #expect(mkdir(dir + "/folder", 0o700) == 0)
        let link = fileError { () throws(GLibError) in try readRegularFile(dir + "/zero", maximumBytes: 1 << 20) }
        #expect(link?.message == "\(dir)/zero: a symbolic link, which is not followed")
        let device = fileError { () throws(GLibError) in
            try readRegularFile(dir + "/zero", maximumBytes: 1 << 20, followLinks: true)
        }
        #expect(device?.message == "\(dir)/zero: not a regular file (a character device)")
        // A FIFO without a writer would block a plain open for ever.
        let fifo = fileError { () throws(GLibError) in try readRegularFile(dir + "/fifo", maximumBytes: 1 << 20) }
        #expect(fifo?.message == "\(dir)/fifo: not a regular file (a FIFO)")
        let folder = fileError { () throws(GLibError) in try readRegularFile(dir + "/folder", maximumBytes: 1 << 20) }
        #expect(folder?.message == "\(dir)/folder: not a regular file (a directory)")

        // A link to a regular file is read only when links are followed.
        try writeFileAtomically(dir + "/target", contents: [1, 2])
        #expect(symlink(dir + "/target", dir + "/link") == 0)
        #expect(fileError { () throws(GLibError) in try readRegularFile(dir + "/link", maximumBytes: 10) } != nil)
        #expect(try readRegularFile(dir + "/link", maximumBytes: 10, followLinks: true) == [1, 2])
    }

    @Test func replacesALinkInsteadOfWritingThroughIt() throws {
        let dir = try folder()
        defer { unlink(dir + "/state"); unlink(dir + "/target"); rmdir(dir) }
        try writeFileAtomically(dir + "/target", contents: [1])
        #expect(symlink(dir + "/target", dir + "/state") == 0)
        try writeFileAtomically(dir + "/state", contents: [2])
        #expect(try readFile(dir + "/target") == [1])
        #expect(try readRegularFile(dir + "/state", maximumBytes: 10) == [2])
    }
}
