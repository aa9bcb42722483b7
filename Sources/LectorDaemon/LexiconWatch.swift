import GLibKit
import LectorCommon
import SpeechCore

/// Keeps the daemon's pronunciation lexicon the file's: reads it at start and again whenever it changes
/// (`lector lexicon add` writes it; so may an editor), and hands it to `apply`. Problems in it are logged, one
/// line each; their entries are left out, the others are used.
final class LexiconWatch {
    private var monitor: FileMonitor?
    private let path: String
    private let apply: (Lexicon) -> Void

    /// Reads the lexicon at `path` now and on every change of it.
    init(path: String = LexiconStore.defaultPath, apply: @escaping (Lexicon) -> Void) {
        self.path = path
        self.apply = apply
        reload()
        // GIO watches a file through its folder; while the folder does not exist it looks for it every 4 s
        // (inotify-missing.c), waking the daemon for ever: the folder is made first (mode 0700).
        if let slash = path.lastIndex(of: "/"), slash > path.startIndex { try? makeDirectories(String(path[..<slash])) }
        monitor = FileMonitor(path: path) { [unowned self] in self.reload() }
        if monitor == nil { Log.warning("the lexicon \(path) is not watched: changes are used by the next daemon") }
    }

    private func reload() {
        let (lexicon, problems) = LexiconStore.load(path: path)
        for problem in problems { Log.warning(problem) }
        apply(lexicon)
    }
}
