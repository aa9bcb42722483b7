import Testing
@testable import Synthesis

/// The installed catalogue, read once and timed (espeak_ListVoices is not thread-safe: no test may list the
/// voices again while another reads them; a global let is initialized once, under a lock).
let installedCatalogue: (voices: [Voice], elapsed: Duration) = {
    let start = ContinuousClock.now
    let voices = VoiceCatalog.load()
    return (voices, ContinuousClock.now - start)
}()
var installedVoices: [Voice] { installedCatalogue.voices }

@Suite struct VoiceCatalogTests {
    @Test func listsInstalledVoicesWithoutMbrola() throws {
        let (voices, elapsed) = installedCatalogue
        print("VoiceCatalog.load(): \(voices.count) voices in \(elapsed)")
        #expect(voices.count > 100)
        #expect(!voices.contains { $0.identifier.hasPrefix("mb/") })
        let us = try #require(voices.first { $0.identifier == "gmw/en-US" })
        #expect(us.name == "English (America)")
        #expect(us.languages == ["en-US", "en"])
        #expect(us.languagePriorities == [2, 3])
        #expect(us.espeakLanguage == "en-us")
        #expect(us.gender == .male)
        let pinyin = try #require(voices.first { $0.identifier == "sit/cmn-Latn-pinyin" })
        #expect(pinyin.languages == ["cmn-Latn-pinyin", "zh-cmn", "zh"])
        let rp = try #require(voices.first { $0.identifier == "gmw/en-GB-x-rp" })
        #expect(rp.languages.first == "en-GB-x-rp")
        for voice in voices {
            #expect(voice.languages.count == voice.languagePriorities.count)
            #expect(!voice.languages.isEmpty && !voice.name.isEmpty)
            #expect(WorkerSession.unsafeVoiceName(voice.name) == nil)
            #expect(WorkerSession.unsafeVoiceName(voice.identifier) == nil)
        }
    }
}

@Suite struct LanguageTagTests {
    @Test(arguments: [
        ("en", "en"), ("EN_us", "en-US"), ("en-gb-x-gbclan", "en-GB-x-gbclan"), ("cmn-latn-pinyin", "cmn-Latn-pinyin"),
        ("chr-US-Qaaa-x-west", "chr-US-Qaaa-x-west"), ("es-419", "es-419"), ("ZH-HANT-tw", "zh-Hant-TW"),
        ("sr-latn", "sr-Latn"), ("de-ch-1996", "de-CH-1996"), ("x-Private", "x-private"), ("zh-yue", "zh-yue"),
        ("en-a-bbb-x-US", "en-a-bbb-x-us"),
    ])
    func canonicalCasing(input: String, expected: String) {
        #expect(LanguageTag.canonical(input) == expected)
    }

    @Test(arguments: ["", "-", "en-", "-en", "en--us", "123", "e", "1en", "en_US_", "english-toolongsubtag", "en-US!", "en us", "é", "en-x"])
    func malformedTags(input: String) {
        #expect(LanguageTag.canonical(input) == nil)
    }

    @Test func lookupChain() {
        #expect(LanguageTag.fallbacks("en-Latn-US") == ["en-Latn-US", "en-Latn", "en"])
        #expect(LanguageTag.fallbacks("en-a-bbb-x-a-ccc") == ["en-a-bbb-x-a-ccc", "en-a-bbb", "en"])
    }

    @Test func editDistance() {
        #expect(LanguageMatcher.editDistance("kitten", "sitting") == 3)
        #expect(LanguageMatcher.editDistance("", "en") == 2)
        #expect(LanguageMatcher.editDistance("eng", "en") == 1)
    }
}

@Suite struct LanguageMatcherTests {
    let matcher = LanguageMatcher(voices: installedVoices)

    /// (requested tag, matched tag, voice identifier)
    @Test(arguments: [
        ("en", "en", "gmw/en"),
        ("EN_us", "en-US", "gmw/en-US"),
        ("en-US", "en-US", "gmw/en-US"),
        ("en-GB", "en-GB", "gmw/en"),
        ("en-AU", "en", "gmw/en"),
        ("en-uk", "en-GB", "gmw/en"),
        ("en-US-nyc", "en-US-nyc", "gmw/en-US-nyc"),
        ("en-GB-scotland", "en-GB-scotland", "gmw/en-GB-scotland"),
        ("en-gb-x-rp", "en-GB-x-rp", "gmw/en-GB-x-rp"),
        ("en-029", "en-029", "gmw/en-029"),
        ("en-Latn-US-x-private", "en-US", "gmw/en-US"),
        ("pt-BR", "pt-BR", "roa/pt-BR"),
        ("pt", "pt", "roa/pt"),
        ("pt-PT", "pt-PT", "roa/pt"),
        ("pt-AO", "pt", "roa/pt"),
        ("de", "de", "gmw/de"),
        ("de-AT", "de", "gmw/de"),
        ("de-CH-1996", "de", "gmw/de"),
        ("fr", "fr", "roa/fr"),
        ("fr-CA", "fr", "roa/fr"),
        ("fr-BE", "fr-BE", "roa/fr-BE"),
        ("es", "es", "roa/es"),
        ("es-ES", "es", "roa/es"),
        ("es-MX", "es-MX", "roa/es-419"),
        ("es-AR", "es-419", "roa/es-419"),
        ("es-419", "es-419", "roa/es-419"),
        ("zh", "zh", "sit/cmn"),
        ("zh-CN", "zh", "sit/cmn"),
        ("zh-Hans", "zh", "sit/cmn"),
        ("zh-Hant-TW", "zh", "sit/cmn"),
        ("zh-cmn-Hans", "zh-cmn", "sit/cmn"),
        ("cmn", "cmn", "sit/cmn"),
        ("zh-Latn", "cmn-Latn-pinyin", "sit/cmn-Latn-pinyin"),
        ("zh-HK", "yue", "sit/yue"),
        ("zh-Hant-HK", "yue", "sit/yue"),
        ("zh-yue", "zh-yue", "sit/yue"),
        ("yue", "yue", "sit/yue"),
        ("sr-Latn", "sr", "zls/sr"),
        ("sr-Cyrl-RS", "sr", "zls/sr"),
        ("hbs", "hbs", "zls/hr"),
        ("sh", "hbs", "zls/hr"),
        ("nb", "nb", "gmq/nb"),
        ("no", "no", "gmq/nb"),
        ("nb-NO", "nb", "gmq/nb"),
        ("nn", "nb", "gmq/nb"),
        ("iw", "he", "sem/he"),
        ("he-IL", "he", "sem/he"),
        ("in", "id", "poz/id"),
        ("ru", "ru", "zle/ru"),
        ("ru-LV", "ru-LV", "zle/ru-LV"),
        ("hy", "hy", "ine/hy"),
        ("chr", "chr-US-Qaaa-x-west", "iro/chr"),
        ("ja-JP", "ja", "jpx/ja"),
        ("  de\n", "de", "gmw/de"),
    ])
    func matches(requested: String, tag: String, identifier: String) throws {
        let match = try matcher.match(requested)
        #expect(match.tag == tag)
        #expect(match.voice.identifier == identifier)
    }

    @Test(arguments: ["", "en--us", "123", "e", "en-", "-en", "en_US_", "en-US!", "en us", "english-toolongsubtag"])
    func malformed(input: String) {
        #expect(throws: LanguageError.malformed(input)) { try matcher.match(input) }
        let description = LanguageError.malformed(input).description
        #expect(description.hasPrefix("malformed language tag '"))
    }

    @Test func unknownWithSuggestions() {
        func error(_ tag: String) -> LanguageError? {
            do {
                _ = try matcher.match(tag)
                return nil
            } catch {
                return error
            }
        }
        guard case let .unknown(tag, suggestions)? = error("xx-yy") else {
            Issue.record("xx-yy matched")
            return
        }
        #expect(tag == "xx-YY")
        #expect(suggestions.count <= 5)
        guard case let .unknown(_, eng)? = error("eng") else { Issue.record("eng matched"); return }
        #expect(eng.first == "en", "\(eng)")
        guard case let .unknown(_, german)? = error("german") else { Issue.record("german matched"); return }
        #expect(german.first == "de", "\(german)")
        guard case let .unknown(_, chinese)? = error("chinese") else { Issue.record("chinese matched"); return }
        #expect(chinese.contains("cmn") && chinese.contains("yue"), "\(chinese)")
        #expect((try? matcher.match("tlh"))?.voice.identifier == "art/piqd")
        #expect(error("x-klingon") != nil)
        for tag in ["xx-yy", "qq", "eng", "german"] {
            let description = error(tag)?.description ?? ""
            #expect(description.hasPrefix("unknown language '"), "\(description)")
            #expect(!description.contains("\n"))
            print("\(tag): \(description)")
        }
        #expect(LanguageError.unknown(tag: "xx-YY", suggestions: ["xh", "ur"]).description
            == "unknown language 'xx-YY'; close matches: xh, ur")
    }

    @Test func voiceByNameOrIdentifier() {
        #expect(matcher.voice(named: "English (America)")?.identifier == "gmw/en-US")
        #expect(matcher.voice(named: "english_(america)")?.identifier == "gmw/en-US")
        #expect(matcher.voice(named: "GMW/EN-us")?.name == "English (America)")
        #expect(matcher.voice(named: "Chinese (Cantonese, latin as Jyutping)")?.identifier == "sit/yue-Latn-jyutping")
        #expect(matcher.voice(named: "Klingon")?.identifier == "art/piqd")
        #expect(matcher.voice(named: "No Such Voice") == nil)
        #expect(matcher.voice(named: "") == nil)
    }

    @Test func priorityDecidesBetweenVoices() throws {
        let a = Voice(name: "A", identifier: "a", languages: ["xx-AA", "xx"], languagePriorities: [5, 7], espeakLanguage: "xx-aa", gender: .female)
        let b = Voice(name: "B", identifier: "b", languages: ["xx"], languagePriorities: [5], espeakLanguage: "xx", gender: .unknown)
        let m = LanguageMatcher(voices: [a, b])
        #expect(try m.match("xx").voice == b)
        #expect(try m.match("xx-AA-foo").voice == a)
        #expect(try m.match("xx-BB").voice == b)
        #expect(throws: LanguageError.self) { try LanguageMatcher(voices: []).match("en") }
    }
}
