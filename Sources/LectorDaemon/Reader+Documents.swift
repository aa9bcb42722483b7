import GLibKit
import LectorCommon
import SpeechCore

/// Reading documents: the worker extracts the text; its start is read as soon as the worker sends it, and
/// the whole text takes its place once extracted, as a long file's does (`complete`).
extension Reader {
    /// Reads the document open on `descriptor` (taken) as `format` in the document worker, and calls `done`
    /// with the utterance id once its start (or, for a short document, all of it) is being read, or with the
    /// D-Bus error InvalidArgs and the one line that says why it cannot be read. The title is the document's
    /// when it has one, else `options.title`. Never blocks: the worker runs as a child process.
    ///
    /// A queued document, and one with a bookmark (found by the whole text's hash), are read whole first. A
    /// document not queued is dropped (the call fails with one line) when another text was asked for while its
    /// worker ran.
    func speakDocument(descriptor: Int32, format: String, options given: SpeakOptions,
                       done: @escaping (Result<UInt64, DBusError>) -> Void) {
        var options = given
        options.ssml = false
        options.format = nil
        options.password = nil
        let bookmarked = !options.fromStart && options.url.map { bookmarks.hasBookmark(uri: $0) } == true
        var started: UInt64?
        textRequests &+= 1
        let request = textRequests
        let superseded = DBusError.failed("\(options.title ?? "the document") was not read: another text was asked for while it was being opened")
        let onStart: ((DocumentStart) -> Void)? = options.queue || bookmarked ? nil : { [weak self] start in
            guard let self else { return }
            guard self.textRequests == request else {
                started = 0
                return done(.failure(superseded))
            }
            var o = options
            o.title = start.title ?? options.title
            var structure = TextStructure()
            structure.languages = start.languages
            do throws(DBusError) {
                let id = try self.speak(start.text, options: o, structure: structure, awaitingWhole: true)
                started = id
                done(.success(id))
            } catch {
                started = 0
                done(.failure(error))
            }
        }
        documents.read(descriptor: descriptor, format: format, password: given.password, onStart: onStart) { [weak self] result in
            guard let self else { return done(.failure(.failed("the daemon is stopping"))) }
            let what = options.title ?? "the document"
            switch (result, started) {
            case (_, 0?):
                return  // answered already: the start could not be read, or was superseded
            case (.failure(let failure), nil):
                Log.message("cannot read \(what): \(failure.message)")
                done(.failure(.invalidArgs("cannot read \(what): \(failure.message)")))
            case (.failure(let failure), let id?):
                Log.warning("read only the start of \(what): \(failure.message)")
                self.completeDocument(id, with: nil)
            case (.success(let document), nil):
                // A newer text replaced what this one would have replaced (a queued document waits its turn).
                guard options.queue || self.textRequests == request else { return done(.failure(superseded)) }
                options.title = document.structure.title ?? options.title
                do throws(DBusError) {
                    done(.success(try self.speak(document.text, options: options, structure: document.structure)))
                } catch {
                    done(.failure(error))
                }
            case (.success(let document), let id?):
                self.completeDocument(id, with: document)
            }
        }
    }

    /// Puts the whole `document` in place of the start read as utterance `id` (nil: the rest could not be
    /// extracted, and the start is all there is), then cuts the rest in idle steps.
    func completeDocument(_ id: UInt64, with document: ImportedDocument?) {
        guard let held = documentStart, held.utterance.id == id else { return }
        documentStart = nil
        guard let current, current.id == id else { return }
        guard let document else {
            if held.cutter == nil {
                engine.complete(utterance: id, text: current.text, pendingText: 0)
            } else {
                pending.begin(held.cutter, utterance: id)
            }
            return
        }
        var options = held.options
        options.title = document.structure.title ?? options.title
        // The sentences already cut were cut with the start's own marks (those of the whole, up to the start's
        // end): the whole's marks apply after them, so that the whole begins as the start did.
        var structure = document.structure
        let cut = held.utterance.sentences.last?.range.upperBound ?? 0
        structure.languages = structure.languages.compactMap { span in
            span.range.upperBound <= cut ? nil : LanguageSpan(range: max(span.range.lowerBound, cut)..<span.range.upperBound,
                                                              language: span.language)
        }
        pending.begin(held.cutter, utterance: id, completion: { [unowned self] in
            self.complete(held.utterance, cutter: held.cutter, options: options, structure: structure) {
                .success(document.text)
            }
        })
    }

    /// The document format `options.format` names, else the one of a file named `name` starting with `head`
    /// (`DocumentReader.format`); nil for plain text or SSML.
    /// - Throws: InvalidArgs for an unknown format, and for a file that is neither text nor a document
    ///   (`isText`), unless `options.format` says how to read it (`--format text` reads any file as text).
    static func documentFormat(options: SpeakOptions, name: String?, head: [UInt8]) throws(DBusError) -> String? {
        if let given = options.format {
            guard let format = DocumentFormat(rawValue: given.lowercased()) else {
                throw .invalidArgs("unknown format '\(given)'; known: " + DocumentFormat.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return format == .text ? nil : format.rawValue
        }
        guard !options.ssml, !head.isEmpty else { return nil }
        let byData = ContentType.guess(fileName: nil, data: head)
        if let format = DocumentReader.format(byName: ContentType.guess(fileName: name, data: head), byData: byData) {
            return format
        }
        guard isText(contentType: byData, head: head) else {
            throw .invalidArgs("cannot read \(name ?? "the file"): it is neither text nor a document Lector reads (\(byData)); "
                               + "--format text reads it as text anyway")
        }
        return nil
    }

    /// Whether a file whose first bytes are `head`, of content type `type` as GIO guesses it from them alone, is
    /// read as text: `text/plain` or a subclass of it (XML, scripts, mail), SSML, an empty file, or bytes GIO
    /// cannot place (`application/octet-stream`) that hold no NUL byte, such as text coloured with terminal
    /// escapes (ESC is a control character, which GIO takes for binary). Executables, libraries, images,
    /// archives and the like are not: read as text, an ELF binary was hours of noise.
    static func isText(contentType type: String, head: [UInt8]) -> Bool {
        ContentType.isA(type, "text/plain") || type == "application/ssml+xml" || type == "application/x-zerosize"
            || (type == "application/octet-stream" && !head.contains(0))
    }
}
