import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GLibKit
import LectorCommon
import SpeechCore
import Testing
@testable import LectorDaemon

/// What an introspection document (data/*.xml) defines, per interface.
struct IntrospectedInterface: Equatable {
    /// Method name → (in-signature, out-signature).
    var methods: [String: [String]] = [:]
    /// Property name → [type, access].
    var properties: [String: [String]] = [:]
    /// Signal name → signature.
    var signals: [String: String] = [:]
}

/// What an introspection document holds: its interfaces and the text of every comment.
struct Introspected {
    var interfaces: [String: IntrospectedInterface]
    var comments: [String]
}

/// Reads a D-Bus introspection document with Foundation's XMLParser: the members of each interface, and the
/// text of every comment.
final class IntrospectionReader: NSObject, XMLParserDelegate {
    private(set) var interfaces: [String: IntrospectedInterface] = [:]
    private(set) var comments: [String] = []
    private var interface = ""
    private var member: (kind: String, name: String)?
    private var inArgs = "", outArgs = ""

    static func read(_ xml: String) -> Introspected {
        let reader = IntrospectionReader()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        #expect(parser.parse(), "the introspection XML parses: \(String(describing: parser.parserError))")
        return Introspected(interfaces: reader.interfaces, comments: reader.comments)
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let name = attributes["name"] ?? ""
        switch element {
        case "interface":
            interface = name
            interfaces[name] = IntrospectedInterface()
        case "method", "signal":
            member = (element, name)
            inArgs = ""
            outArgs = ""
        case "property":
            interfaces[interface]?.properties[name] = [attributes["type"] ?? "", attributes["access"] ?? ""]
        case "arg":
            // Signal arguments have no direction; a method's default direction is "in".
            if attributes["direction"] == "out" { outArgs += attributes["type"] ?? "" } else { inArgs += attributes["type"] ?? "" }
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        guard let member, member.kind == element else { return }
        if element == "method" {
            interfaces[interface]?.methods[member.name] = [inArgs, outArgs]
        } else {
            interfaces[interface]?.signals[member.name] = inArgs
        }
        self.member = nil
    }

    func parser(_ parser: XMLParser, foundComment comment: String) {
        comments.append(comment)
    }
}

/// The names and signatures defined once in LectorCommon (`Lector1`, `MPRIS`, `SpeakOptions.Key`) are the
/// ones data/*.xml defines, both ways.
@Suite struct WireNamesTests {
    /// The interface as the code defines it (`signals` nil: none).
    static func defined<M: WireMethod, P: WireProperty, S: WireSignal>(_: M.Type, _: P.Type, _ signals: S.Type?) -> IntrospectedInterface {
        IntrospectedInterface(
            methods: Dictionary(uniqueKeysWithValues: M.allCases.map { ($0.rawValue, [$0.inSignature, $0.outSignature]) }),
            properties: Dictionary(uniqueKeysWithValues: P.allCases.map { ($0.rawValue, [$0.type, $0.isWritable ? "readwrite" : "read"]) }),
            signals: signals == nil ? [:] : Dictionary(uniqueKeysWithValues: S.allCases.map { ($0.rawValue, $0.signature) }))
    }

    static let lector = IntrospectionReader.read(IntrospectionTests.read("data/org.lector.Lector1.xml") ?? "")
    static let mpris = IntrospectionReader.read(IntrospectionTests.read("data/org.mpris.MediaPlayer2.xml") ?? "")

    @Test func lectorInterface() {
        #expect(Array(Self.lector.interfaces.keys) == [Names.interface])
        let xml = Self.lector.interfaces[Names.interface] ?? IntrospectedInterface()
        let code = Self.defined(Lector1.Method.self, Lector1.Property.self, Lector1.Signal.self)
        #expect(xml.methods == code.methods)
        #expect(xml.properties == code.properties)
        #expect(xml.signals == code.signals)
    }

    @Test func mprisInterfaces() {
        #expect(Set(Self.mpris.interfaces.keys) == [MPRIS.rootInterface, MPRIS.playerInterface])
        let root = Self.mpris.interfaces[MPRIS.rootInterface] ?? IntrospectedInterface()
        let rootCode = Self.defined(MPRIS.RootMethod.self, MPRIS.RootProperty.self, nil as MPRIS.PlayerSignal.Type?)
        #expect(root.methods == rootCode.methods)
        #expect(root.properties == rootCode.properties)
        #expect(root.signals == rootCode.signals)
        let player = Self.mpris.interfaces[MPRIS.playerInterface] ?? IntrospectedInterface()
        let playerCode = Self.defined(MPRIS.PlayerMethod.self, MPRIS.PlayerProperty.self, MPRIS.PlayerSignal.self)
        #expect(player.methods == playerCode.methods)
        #expect(player.properties == playerCode.properties)
        #expect(player.signals == playerCode.signals)
    }

    /// Speak's comment lists its options as `key  type  description` lines indented by 8 spaces (descriptions
    /// go on indented further), between "Options" and "Errors:".
    @Test func speakOptionsAreTheDocumentedOnes() throws {
        let comment = try #require(Self.lector.comments.first { $0.contains("Speak: reads") })
        let lines = comment.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("Options (all optional):") })
        let end = try #require(lines.firstIndex { $0.contains("Errors:") })
        let table = lines[(start + 1)..<end].filter { $0.hasPrefix(String(repeating: " ", count: 8)) && !$0.hasPrefix(String(repeating: " ", count: 9)) }
        let documented = table.map { line in line.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(documented == SpeakOptions.Key.allCases.map { "\($0.rawValue) \($0.type)" })
    }

    /// Every error name the interface's comments give is a `Lector1.ErrorName`, and each of those is documented.
    @Test func errorNamesAreTheDocumentedOnes() throws {
        let text = Self.lector.comments.joined(separator: "\n")
        let pattern = try NSRegularExpression(pattern: #"org\.lector\.Lector1\.Error\.[A-Za-z]+"#)
        let found = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
        #expect(Set(found) == Set(Lector1.ErrorName.allCases.map(\.rawValue)))
    }

    /// The arguments the daemon sends with each event have the signal's signature.
    @Test(arguments: [
        SpeechEvent.started(utterance: 1), .sentence(utterance: 1, index: 2, range: 3..<9), .word(utterance: 1, range: 4..<6),
        .paused(utterance: 1), .resumed(utterance: 1), .stopped(utterance: 1), .finished(utterance: 1),
        .error(utterance: 1, message: "lost", fatal: false),
    ])
    func signalArgumentsHaveTheirSignature(event: SpeechEvent) {
        let (signal, arguments) = LectorService.signal(for: event, position: 1_500_000, language: "en")
        #expect(arguments.map(\.typeString).joined() == signal.signature)
        #expect(arguments.first == .uint64(1))
    }

    @Test func everySignalIsSentForSomeEvent() {
        let events: [SpeechEvent] = [.started(utterance: 1), .sentence(utterance: 1, index: 0, range: 0..<1),
                                     .word(utterance: 1, range: 0..<1), .paused(utterance: 1), .resumed(utterance: 1),
                                     .stopped(utterance: 1), .finished(utterance: 1), .error(utterance: 1, message: "", fatal: true)]
        // Mark is sent for an utterance's SSML marks as events reach them (MarkCursor), not for an event itself.
        let sent = Set(events.map { LectorService.signal(for: $0, position: 0, language: "").0 }).union([.mark])
        #expect(sent == Set(Lector1.Signal.allCases))
    }
}
