// swift-tools-version:6.0
import PackageDescription

// Module layout and the direction of dependencies: see docs/ARCHITECTURE.md.
// Every C library is wrapped by one C target (a `.systemLibrary` module map, or a tiny loader) and imported by
// exactly one Swift target.
// `swift build --static-swift-stdlib` for the executables only (tests link the runtime dynamically).
let staticSwiftRuntime: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]

let package = Package(
    name: "Lector",
    products: [
        // The command line: links GLib only, so that `lector read` starts fast.
        .executable(name: "lector", targets: ["lector"]),
        // The daemon, the synthesis worker, `voices` and `read --output` (eSpeak NG, PulseAudio, ICU, CLD2).
        .executable(name: "lector-daemon", targets: ["lector-daemon"]),
        // The reader window (GTK 4, libadwaita): a D-Bus client of the daemon, started by `lector window`.
        .executable(name: "lector-window", targets: ["lector-window"]),
        // Speech Dispatcher's output module (installed as sd_lector): a client of the daemon over D-Bus.
        .executable(name: "lector-speechd-module", targets: ["lector-speechd-module"]),
        // The document worker (the importers and their parsers only), run by the daemon per document.
        .executable(name: "lector-document", targets: ["lector-document"]),
        // The PDF worker: the same importers and poppler-glib, which only PDFs need.
        .executable(name: "lector-document-pdf", targets: ["lector-document-pdf"]),
        // The selection reader (libxcb, libwayland-client), run by `lector read --selection|--clipboard`.
        .executable(name: "lector-selection", targets: ["lector-selection"]),
    ],
    targets: [
        // C libraries (module maps only)
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse-mainloop-glib", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CGtk", pkgConfig: "libadwaita-1", providers: [.apt(["libadwaita-1-dev"])]),
        .systemLibrary(name: "CGio", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CVorbis", pkgConfig: "vorbis", providers: [.apt(["libvorbis-dev", "libogg-dev"])]),
        // Document parsers, used by the document worker only.
        .systemLibrary(name: "CXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CArchive", pkgConfig: "libarchive", providers: [.apt(["libarchive-dev"])]),
        // cmark-gfm: CommonMark with GitHub's extensions (tables, task lists, strikethrough, autolinks, footnotes).
        .systemLibrary(name: "CCmarkGFM", pkgConfig: "libcmark-gfm", providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        // libyaml: the YAML front matter of Markdown (its title, authors, language).
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CPoppler", pkgConfig: "poppler-glib", providers: [.apt(["libpoppler-glib-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        // The selection reader's display clients: libxcb (X11), and libwayland-client with the wlr-data-control
        // glue that wayland-scanner made from protocols/ (scripts/wayland-glue; committed, see ARCHITECTURE).
        .systemLibrary(name: "CXCB", pkgConfig: "xcb", providers: [.apt(["libxcb1-dev"])]),
        .target(name: "CWaylandDataControl", linkerSettings: [.linkedLibrary("wayland-client")]),
        // Tiny C helpers for what Swift cannot call (variadic functions, versioned ICU symbols, C++).
        // eSpeak NG, ICU and CLD2 are opened with dlopen on first use (their headers come from
        // libespeak-ng-dev, libicu-dev, libcld2-dev): a daemon that has not read anything yet does not map them.
        .target(name: "CLectorShims", dependencies: ["CGio"]),
        // Descriptors passed over Unix sockets (SCM_RIGHTS), whose CMSG_* macros Swift cannot call
        .target(name: "CLectorFD"),
        .target(name: "CLectorGtk", dependencies: ["CGtk"]),
        .target(name: "CESpeakNG"),
        .target(name: "CLectorICU"),
        .target(name: "CLectorCLD2"),

        // Pure Swift, no C
        .target(name: "SpeechCore"),
        // The selection reader's pure part: which target or MIME type to read, limits, the one-line failures
        .target(name: "SelectionCore"),
        // Typed POSIX values over Glibc (file descriptors, errno, one EINTR retry), for the worker and the daemon
        .target(name: "SystemKit", dependencies: ["CLectorFD"]),
        // Thin layers over one C library each
        .target(name: "Segmentation", dependencies: ["CLectorICU", "SpeechCore"]),
        // SpeechCore for TextCleaner: voice names taken from files are cleaned before they are shown or sent
        .target(name: "Synthesis", dependencies: ["CESpeakNG", "SpeechCore", "SystemKit"]),
        .target(name: "Audio", dependencies: ["CPulse"]),
        .target(name: "GLibKit", dependencies: ["CGio", "CLectorShims", "SystemKit"]),
        .target(name: "LanguageDetection", dependencies: ["CLectorCLD2"]),
        // GTK 4 and libadwaita: widgets, text view, events, file chooser, clipboard, style manager
        .target(name: "GtkKit", dependencies: ["CGtk", "CLectorGtk"]),
        .target(name: "XMLKit", dependencies: ["CXML2"]),
        .target(name: "ArchiveKit", dependencies: ["CArchive"]),
        .target(name: "MarkdownKit", dependencies: ["CCmarkGFM", "CYAML"]),
        .target(name: "PDFKit", dependencies: ["CPoppler"]),
        // The selection and the clipboard: X11 (ICCCM, through libxcb) and Wayland (wlr-data-control)
        .target(name: "X11Selection", dependencies: ["CXCB", "SelectionCore"]),
        .target(name: "WaylandSelection", dependencies: ["CWaylandDataControl", "SelectionCore"]),
        // The importers of the document worker: EPUB, HTML, Markdown, ODT, DOCX, PDF into text and structure
        // (PDFs through a `PDFOpener` that only lector-document-pdf gives, so that Documents does not link poppler)
        .target(name: "Documents", dependencies: ["XMLKit", "ArchiveKit", "MarkdownKit", "SpeechCore", "SystemKit"]),
        // Audio files: the formats through libsndfile, sample rates through libsoxr
        .target(name: "SoundFile", dependencies: ["CSndFile", "SystemKit"]),
        .target(name: "Resampling", dependencies: ["CSoxr"]),
        // Vorbis audio packets' block sizes (libvorbis), for joining Ogg Vorbis segments
        .target(name: "VorbisPackets", dependencies: ["CVorbis"]),
        // Pure Swift: audiobook tags (Vorbis comments, Ogg pages, FLAC blocks, ID3v2), chapters, progress
        .target(name: "Audiobook", dependencies: ["SystemKit"]),
        // What the command line and the daemon share: bus names, speak options, how input is read
        .target(name: "LectorCommon", dependencies: ["GLibKit", "SpeechCore", "SystemKit"]),
        // The command line (a D-Bus client of the daemon)
        .target(name: "LectorClient", dependencies: ["LectorCommon", "GLibKit", "SpeechCore"]),
        // The daemon and the worker, wired together
        .target(name: "LectorDaemon", dependencies: ["LectorCommon", "SpeechCore", "Segmentation", "Synthesis", "Audio", "GLibKit", "LanguageDetection", "SystemKit", "SoundFile", "Resampling", "VorbisPackets", "Audiobook"]),
        // The reader window: its model (pure) and its controller (GTK through GtkKit, D-Bus through GLibKit)
        .target(name: "LectorWindow", dependencies: ["LectorClient", "LectorCommon", "SpeechCore", "GLibKit", "GtkKit"]),
        // Both link the Swift runtime statically: no runtime to find at start, fewer relocations and pages.
        .executableTarget(name: "lector", dependencies: ["LectorClient"], linkerSettings: staticSwiftRuntime),
        .executableTarget(name: "lector-daemon", dependencies: ["LectorClient", "LectorDaemon"], linkerSettings: staticSwiftRuntime),
        .executableTarget(name: "lector-window", dependencies: ["LectorWindow"], linkerSettings: staticSwiftRuntime),
        // The document worker: Documents and its parsers only, so that it starts without mapping the daemon's libraries.
        .executableTarget(name: "lector-document", dependencies: ["Documents"], linkerSettings: staticSwiftRuntime),
        // The PDF worker: the same, with poppler-glib (PDFKit), whose 41 libraries only PDFs need.
        .executableTarget(name: "lector-document-pdf", dependencies: ["Documents", "PDFKit"], linkerSettings: staticSwiftRuntime),
        // The selection reader: its display clients only, so that `lector` links neither libxcb nor libwayland.
        .executableTarget(name: "lector-selection", dependencies: ["X11Selection", "WaylandSelection"], linkerSettings: staticSwiftRuntime),
        // The Speech Dispatcher output module: the module protocol (pure) and its driver over GLibKit.
        .target(name: "SpeechdModule", dependencies: ["LectorClient", "LectorCommon", "GLibKit", "SystemKit"]),
        .executableTarget(name: "lector-speechd-module", dependencies: ["SpeechdModule"], linkerSettings: staticSwiftRuntime),

        // Helpers more than one test target uses (seeded random numbers, the shared test files).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SpeechCoreTests", dependencies: ["SpeechCore", "TestSupport"]),
        .testTarget(name: "SelectionCoreTests", dependencies: ["SelectionCore"]),
        .testTarget(name: "SegmentationTests", dependencies: ["Segmentation", "SpeechCore", "TestSupport"]),
        .testTarget(name: "SystemKitTests", dependencies: ["SystemKit"]),
        .testTarget(name: "AudiobookTests", dependencies: ["Audiobook", "SystemKit"]),
        .testTarget(name: "SynthesisTests", dependencies: ["Synthesis", "SystemKit"]),
        .testTarget(name: "AudioTests", dependencies: ["Audio"]),
        .testTarget(name: "LectorDaemonTests", dependencies: ["LectorDaemon", "LectorCommon"]),
        .testTarget(name: "LectorClientTests", dependencies: ["LectorClient", "LectorCommon"]),
        .testTarget(name: "LectorWindowTests", dependencies: ["LectorWindow"]),
        .testTarget(name: "SpeechdModuleTests", dependencies: ["SpeechdModule", "LectorCommon"]),
        .testTarget(name: "GLibKitTests", dependencies: ["GLibKit", "SystemKit"]),
        .testTarget(name: "DocumentsTests", dependencies: ["Documents", "SpeechCore", "XMLKit", "ArchiveKit", "MarkdownKit"]),
        .testTarget(name: "LanguageDetectionTests", dependencies: ["LanguageDetection"], exclude: ["Fixtures"]),
        // GLibKit for D-Bus; CGio only for the fake peer that answers late or never (Support/GDBusServing.swift).
        .testTarget(name: "IntegrationTests", dependencies: ["GLibKit", "CGio"]),
    ],
    swiftLanguageModes: [.v6]
)
