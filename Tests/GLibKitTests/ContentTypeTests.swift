import Testing
@testable import GLibKit

@Suite struct ContentTypeTests {
    private static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x01, 0x00] + [UInt8](repeating: 0, count: 56)
    private static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52]

    @Test func guessesFromNameAndBytes() {
        let text = Array("One sentence. Another one.\n".utf8)
        #expect(ContentType.guess(fileName: "notes.txt", data: text) == "text/plain")
        #expect(ContentType.isA(ContentType.guess(fileName: nil, data: text), "text/plain"))
        #expect(ContentType.guess(fileName: "program", data: Self.elf) != "text/plain")
        #expect(!ContentType.isA(ContentType.guess(fileName: nil, data: Self.elf), "text/plain"))
        #expect(!ContentType.isA(ContentType.guess(fileName: "picture.png", data: Self.png), "text/plain"))
        // A binary file named like a text is text by its name only.
        #expect(!ContentType.isA(ContentType.guess(fileName: nil, data: Self.png), "text/plain"))
    }

    @Test func knowsSubclasses() {
        #expect(ContentType.isA("text/plain", "text/plain"))
        #expect(ContentType.isA("application/xml", "text/plain"))
        #expect(!ContentType.isA("image/png", "text/plain"))
    }
}
