#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GLibKit
import Synthesis
import Testing
import LectorCommon
@testable import LectorDaemon

/// The configuration file: defaults, good values applied, bad ones reported with file, line and key and ignored.
@Suite struct ConfigurationTests {
    static let matcher = LanguageMatcher(voices: testVoices)

    static func parse(_ text: String) throws -> (Configuration, [String]) {
        let (config, problems) = Configuration.parse(try KeyFile(text: text), path: "/cfg/lector/config", matcher: matcher)
        return (config, problems)
    }

    @Test("no file: the defaults, no problem")
    func missingFile() {
        let (config, problems) = Configuration.load(path: "/nonexistent/lector/config", matcher: Self.matcher)
        #expect(config == Configuration())
        #expect(problems.isEmpty)
    }

    @Test("an empty file: the defaults")
    func empty() throws {
        let (config, problems) = try Self.parse("# nothing set\n")
        #expect(config == Configuration())
        #expect(problems.isEmpty)
    }

    @Test("good values are applied")
    func good() throws {
        let (config, problems) = try Self.parse("""
            [speech]
            language = de
            rate=220
            pitch= 30
            volume=0.5

            [voices]
            en_US = English (America)
            pt-BR=roa/pt-BR
            """)
        #expect(problems.isEmpty, "\(problems)")
        #expect(config.language == "de")
        #expect(config.rate == 220 && config.pitch == 30 && config.volume == 0.5)
        #expect(config.voice(for: "en-US") == "gmw/en-US")
        #expect(config.voice(for: "en-us-x-foo") == "gmw/en-US")
        #expect(config.voice(for: "en") == nil)
        #expect(config.voice(for: "pt-BR") == "roa/pt-BR")
    }

    @Test("each bad value is one line with file, line and key; it is ignored and the rest applies")
    func bad() throws {
        let (config, problems) = try Self.parse("""
            [speech]
            rate=fast
            pitch=150
            volume=2
            language=klingonish
            colour=blue

            [voices]
            de=Nobody
            fr=French (France)

            [extra]
            x=1
            """)
        #expect(config.rate == nil && config.pitch == nil && config.volume == nil && config.language == nil)
        #expect(config.voice(for: "fr") != nil && config.voice(for: "de") == nil)
        #expect(problems.count == 7, "\(problems)")
        #expect(problems.allSatisfy { !$0.contains("\n") })
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:2: [speech] rate: 'fast'") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:3: [speech] pitch: '150'") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:4: [speech] volume: '2'") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:5: [speech] language:") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:6: [speech] colour: unknown key") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:9: [voices] de: unknown voice 'Nobody'") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("/cfg/lector/config:12: [extra]: unknown group") }, "\(problems)")
    }

    @Test("[ducking]: mode and level; bad values reported, lower by 15 dB kept")
    func ducking() throws {
        #expect(try Self.parse("[ducking]\nmode=off\n").0.ducking == .off)
        #expect(try Self.parse("[ducking]\nmode = pause-others\n").0.ducking == .pauseOtherPlayers)
        #expect(try Self.parse("[ducking]\nlevel=10\n").0.ducking == .lower(decibels: -10))
        #expect(try Self.parse("[ducking]\nlevel=-6\n").0.ducking == .lower(decibels: -6))
        let (config, problems) = try Self.parse("[ducking]\nmode=quiet\nlevel=loud\nspeed=1\n")
        #expect(config.ducking == .lower(decibels: -15))
        #expect(problems == [
            "/cfg/lector/config:2: [ducking] mode: 'quiet' is not lower, pause-others or off; using lower",
            "/cfg/lector/config:3: [ducking] level: 'loud' is not a level from 0 to 60 dB; using 15",
            "/cfg/lector/config:4: [ducking] speed: unknown key (known: mode, level); ignored",
        ], "\(problems)")
    }

    @Test("[reading]: what is read of links, symbols, emoji; bad values reported, defaults kept")
    func reading() throws {
        let (config, problems) = try Self.parse("[reading]\nlinks=skip\nemoji = all\nsymbols=loud\ncolour=red\n")
        #expect(config.reading.links == .skip && config.reading.emoji == .all && config.reading.symbols == .skip)
        #expect(problems == [
            "/cfg/lector/config:4: [reading] symbols: reading setting symbols is one of read, skip, not 'loud'; using skip",
            "/cfg/lector/config:5: [reading] colour: unknown reading setting 'colour'; one of: links, emails, citations, numbers, symbols, emoji; ignored",
        ], "\(problems)")
    }

    @Test("a file that is not a key file: one problem, the defaults")
    func malformed() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/lector-config-XXXXXX")))
        let path = dir + "/config"
        let f = fopen(path, "w")
        fputs("[speech]\nthis line is not a key\n", f)
        fclose(f)
        defer { unlink(path); rmdir(dir) }
        let (config, problems) = Configuration.load(path: path, matcher: Self.matcher)
        #expect(config == Configuration())
        #expect(problems.count == 1 && problems[0].hasPrefix(path + ": "), "\(problems)")
    }

    @Test("a FIFO, a device, a folder or a huge file in place of the file: one problem, the defaults, no wait")
    func notARegularFile() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/lector-config-XXXXXX")))
        let path = dir + "/config"
        defer { unlink(path); rmdir(path); unlink(dir + "/mine"); rmdir(dir) }
        let makers: [(String, () -> Bool)] = [
            ("a FIFO", { mkfifo(path, 0o600) == 0 }),
            ("a character device", { symlink("/dev/zero", path) == 0 }),
            ("a directory", { mkdir(path, 0o700) == 0 }),
            ("larger than the 1 MiB", { creat(path, 0o600) >= 0 && truncate(path, 2 << 20) == 0 }),
        ]
        for (what, make) in makers {
            unlink(path)
            rmdir(path)
            #expect(make(), "\(what)")
            let (config, problems) = Configuration.load(path: path, matcher: Self.matcher)
            #expect(config == Configuration())
            #expect(problems.count == 1 && problems[0].hasPrefix(path + ": ") && problems[0].contains(what), "\(problems)")
        }
        // A link to a regular file (as dotfile managers make) is followed.
        unlink(path)
        let f = fopen(dir + "/mine", "w")
        fputs("[speech]\nrate=200\n", f)
        fclose(f)
        #expect(symlink(dir + "/mine", path) == 0)
        let (config, problems) = Configuration.load(path: path, matcher: Self.matcher)
        #expect(config.rate == 200 && problems.isEmpty, "\(problems)")
    }

    @Test("the preparer uses the configured rate, pitch, default language and voice")
    func preparer() throws {
        let dir = String(cString: mkdtemp(strdup("/tmp/lector-config-XXXXXX")))
        let path = dir + "/config"
        let f = fopen(path, "w")
        fputs("[speech]\nrate=200\npitch=20\nlanguage=fr\n[voices]\nen=English (America)\n", f)
        fclose(f)
        defer { unlink(path); rmdir(dir) }
        let preparer = UtterancePreparer(voices: testVoices)
        #expect(preparer.loadConfiguration(path: path).isEmpty)
        let u = try preparer.prepare("Oui.", options: SpeakOptions())
        #expect(u.rate == 200 && u.pitch == 20)
        #expect(u.language == "fr")
        let en = try preparer.prepare("Hello.", options: SpeakOptions(language: "en"))
        #expect(en.engineVoice == "gmw/en-US")
        let given = try preparer.prepare("Hello.", options: SpeakOptions(language: "en", rate: 120))
        #expect(given.rate == 120)
    }
}

extension ConfigurationTests {
    @Test("[daemon] idle-exit is minutes stopped before the daemon exits; a bad value is one line")
    func idleExit() throws {
        #expect(try Self.parse("[daemon]\nidle-exit=2.5\n").0.idleExitSeconds == 150)
        #expect(try Self.parse("[daemon]\nidle-exit=0\n").0.idleExitSeconds == 0)
        let (config, problems) = try Self.parse("[daemon]\nidle-exit=soon\nlinger=1\n")
        #expect(config.idleExitSeconds == nil)
        #expect(problems.count == 2 && problems[0].hasPrefix("/cfg/lector/config:2: [daemon] idle-exit: 'soon'"), "\(problems)")
    }

    @Test("[daemon] portal-shortcut is true or false (default false); another value is one line")
    func portalShortcut() throws {
        #expect(try Self.parse("[daemon]\nportal-shortcut=true\n").0.portalShortcut)
        #expect(try !Self.parse("[daemon]\nportal-shortcut=false\n").0.portalShortcut)
        #expect(try !Self.parse("").0.portalShortcut)
        let (config, problems) = try Self.parse("[daemon]\nportal-shortcut=yes\n")
        #expect(!config.portalShortcut)
        #expect(problems == ["/cfg/lector/config:2: [daemon] portal-shortcut: 'yes' is not true or false; using false"], "\(problems)")
    }
}
