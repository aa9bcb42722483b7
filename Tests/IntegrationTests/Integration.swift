import Testing

/// Every end-to-end suite, one after another: each starts its own private session bus and PulseAudio
/// server (see `PrivateSession`), and they measure time on a machine they share with the other tests,
/// so they never run side by side. The suites are extensions of this type, one per file.
@Suite(.serialized)
struct Integration {}
