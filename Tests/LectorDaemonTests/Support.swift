import Synthesis

/// A few of eSpeak NG 1.51's voices as `espeak-ng --voices` lists them (name, file, languages with their
/// priorities). Fixed rather than listed with `VoiceCatalog.load()`: `espeak_ListVoices` is process-global
/// and not thread-safe, and other test targets list voices in the same process at the same time.
let testVoices: [Voice] = [
    Voice(name: "Chinese (Mandarin, latin as English)", identifier: "sit/cmn", languages: ["cmn", "zh-cmn", "zh"],
          espeakLanguage: "cmn", gender: .male),
    Voice(name: "German", identifier: "gmw/de", languages: ["de"], espeakLanguage: "de", gender: .male),
    Voice(name: "English (Great Britain)", identifier: "gmw/en", languages: ["en-GB", "en"], languagePriorities: [2, 2],
          espeakLanguage: "en-gb", gender: .male),
    Voice(name: "English (America)", identifier: "gmw/en-US", languages: ["en-US", "en"], languagePriorities: [2, 3],
          espeakLanguage: "en-us", gender: .male),
    Voice(name: "Spanish (Spain)", identifier: "roa/es", languages: ["es"], espeakLanguage: "es", gender: .male),
    Voice(name: "French (France)", identifier: "roa/fr", languages: ["fr-FR", "fr"], espeakLanguage: "fr-fr", gender: .male),
    Voice(name: "Portuguese (Brazil)", identifier: "roa/pt-BR", languages: ["pt-BR", "pt"], languagePriorities: [5, 6],
          espeakLanguage: "pt-br", gender: .male),
    Voice(name: "Russian", identifier: "zle/ru", languages: ["ru"], espeakLanguage: "ru", gender: .male),
]
