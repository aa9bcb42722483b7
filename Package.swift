// swift-tools-version:6.0
import PackageDescription

// Module layout and the direction of dependencies: see docs/ARCHITECTURE.md.
// Every C library is wrapped by a `.systemLibrary` target and imported by exactly one Swift target.
let package = Package(
    name: "Lector",
    products: [
        .executable(name: "lector", targets: ["lector"]),
    ],
    targets: [
        // C libraries (module maps only)
        .systemLibrary(name: "CESpeakNG", pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse-mainloop-glib", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CGio", pkgConfig: "gio-unix-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // Tiny C helpers for what Swift cannot call (variadic functions, versioned ICU symbols)
        .target(name: "CLectorShims", dependencies: ["CGio"]),
        .target(name: "CLectorICU", linkerSettings: [.linkedLibrary("icuuc")]),
        .target(name: "CLectorCLD2", linkerSettings: [.linkedLibrary("cld2")]),

        // Pure Swift, no C
        .target(name: "SpeechCore"),
        // Thin layers over one C library each
        .target(name: "Segmentation", dependencies: ["CLectorICU", "SpeechCore"]),
        .target(name: "Synthesis", dependencies: ["CESpeakNG"]),
        .target(name: "Audio", dependencies: ["CPulse"]),
        .target(name: "GLibKit", dependencies: ["CGio", "CLectorShims"]),
        .target(name: "LanguageDetection", dependencies: ["CLectorCLD2"]),
        // The daemon, the client and the worker, wired together
        .target(name: "LectorDaemon", dependencies: ["SpeechCore", "Segmentation", "Synthesis", "Audio", "GLibKit", "LanguageDetection"]),
        .executableTarget(name: "lector", dependencies: ["LectorDaemon"]),

        .testTarget(name: "SpeechCoreTests", dependencies: ["SpeechCore"]),
        .testTarget(name: "SegmentationTests", dependencies: ["Segmentation", "SpeechCore"]),
        .testTarget(name: "SynthesisTests", dependencies: ["Synthesis"]),
        .testTarget(name: "AudioTests", dependencies: ["Audio"]),
        .testTarget(name: "LectorDaemonTests", dependencies: ["LectorDaemon"]),
        .testTarget(name: "GLibKitTests", dependencies: ["GLibKit"]),
        .testTarget(name: "LanguageDetectionTests", dependencies: ["LanguageDetection"], exclude: ["Fixtures"]),
        .testTarget(name: "IntegrationTests", dependencies: ["CGio"]),
    ],
    swiftLanguageModes: [.v6]
)
