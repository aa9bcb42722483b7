@preconcurrency import Glibc
import GLibKit
import LectorCommon

/// `lector speechd enable|disable|status`: Lector as Speech Dispatcher's default output module for this user.
enum SpeechdCommand {
    /// The user's configuration file (speech-dispatcher 0.11 reads it instead of the system one when it exists).
    static var path: String { UserDirs.config + "/speech-dispatcher/speechd.conf" }
    /// speech-dispatcher's system configuration (Debian's path).
    static let system = "/etc/speech-dispatcher/speechd.conf"

    /// Where `sd_lector` is looked for: beside `lector` (a build folder), where `meson install` puts it
    /// relative to `lector`, then the system's module folders.
    static var moduleCandidates: [String] {
        let dir = executableDirectory()
        return [dir + "/lector-speechd-module", dir + "/../lib/speech-dispatcher-modules/sd_lector",
                "/usr/lib/speech-dispatcher-modules/sd_lector", "/usr/libexec/speech-dispatcher-modules/sd_lector"]
    }

    static func run(_ args: [String]) -> Int32 {
        let parser = OptionParser(parameterString: "enable|disable|status",
                                  summary: "Makes Lector Speech Dispatcher's default output module for you (enable), or puts your configuration back as it was (disable).",
                                  description: "It edits \(path). Orca keeps speech-dispatcher's eSpeak NG module. Speech Dispatcher reads it when it starts next (an idle one ends by itself within seconds).")
        guard let rest = try? parser.parse(args), rest.count == 1, ["enable", "disable", "status"].contains(rest[0]) else {
            printError("usage: lector speechd enable|disable|status")
            return 2
        }
        let current: String?
        if fileTest(path, .exists) {
            do { current = String(decoding: try readRegularFile(path, maximumBytes: 1 << 20), as: UTF8.self) } catch {
                printError("cannot read \(path): \(error.message)")
                return 1
            }
        } else {
            current = nil
        }
        switch rest[0] {
        case "status":
            print(SpeechdConfig.isEnabled(current) ? "enabled" : "disabled")
            return 0
        case "enable":
            guard let module = moduleCandidates.first(where: { access($0, X_OK) == 0 }) else {
                printError("Lector's Speech Dispatcher module was not found (looked for \(moduleCandidates.joined(separator: ", ")))")
                return 1
            }
            let real = realpath(module, nil).map { p in defer { free(p) }; return String(cString: p) } ?? module
            let text = SpeechdConfig.enable(current, module: real, system: fileTest(system, .exists) ? system : nil)
            guard write(text) == 0 else { return 1 }
            print("Speech Dispatcher speaks through Lector from its next start (\(path)); lector speechd disable puts it back")
            return 0
        default:
            guard let current, SpeechdConfig.isEnabled(current) else { return 0 }
            guard let text = SpeechdConfig.disable(current) else {
                if !removeFile(path) { printError("cannot remove \(path)"); return 1 }
                print("Speech Dispatcher's configuration is back as it was (\(path) removed)")
                return 0
            }
            guard write(text) == 0 else { return 1 }
            print("Speech Dispatcher's configuration is back as it was (\(path))")
            return 0
        }
    }

    private static func write(_ text: String) -> Int32 {
        _ = mkdir(UserDirs.config, 0o700)
        _ = mkdir(UserDirs.config + "/speech-dispatcher", 0o700)
        do { try writeFileAtomically(path, contents: Array(text.utf8), mode: 0o644) } catch {
            printError("cannot write \(path): \(error.message)")
            return 1
        }
        return 0
    }
}
