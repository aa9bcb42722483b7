import GLibKit
import Synthesis

extension EngineRouter {
    /// eSpeak NG's worker (`lector worker`) and the Piper worker at eSpeak NG's rate, with the voices
    /// `preparer` knows.
    static func standard(preparer: UtterancePreparer) -> EngineRouter {
        EngineRouter(
            espeak: SynthesisClient(argv: [executablePath(), "worker"]),
            piperVoice: { [unowned preparer] identifier in
                preparer.voice(named: identifier).flatMap { $0.engine == .piper ? $0 : nil }
            },
            espeakVoice: { [unowned preparer] language in
                (try? preparer.matcher.match(language))?.voice.identifier ?? "en"
            })
    }
}

extension EngineRouter {
    /// The installed voices, listed when a Piper voice is first asked for; one catalog may serve several
    /// routers (offline rendering starts one per segment).
    final class Catalog {
        lazy var matcher = LanguageMatcher(voices: VoiceCatalog.load() + Piper.voices())
        init() {}
    }

    /// eSpeak NG's worker (`argv`, taken for hung after `stallLimit` µs of silence) and the Piper worker at
    /// eSpeak NG's rate, with the voices of `catalog` (offline rendering, which has no preparer to ask).
    static func standalone(argv: [String] = [executablePath(), "worker"], stallLimit: Int64 = SynthesisClient.stallLimit,
                           catalog: Catalog = Catalog()) -> EngineRouter {
        EngineRouter(
            espeak: SynthesisClient(argv: argv, stallLimit: stallLimit),
            piperVoice: { identifier in catalog.matcher.voice(named: identifier).flatMap { $0.engine == .piper ? $0 : nil } },
            espeakVoice: { language in (try? catalog.matcher.match(language))?.voice.identifier ?? "en" })
    }
}
