/// A one-shot timer on the main loop that is armed again, or cancelled, as a whole: arming it replaces what
/// was armed before, so an owner holds one of these per purpose instead of a `Source?` it must cancel and
/// clear by hand (`g_timeout_add_full` underneath, see `MainContext.timeout`).
public final class OneShotTimer {
    private var source: Source?

    /// An idle timer.
    public init() {}

    /// Whether it is armed and has not fired yet.
    public var isArmed: Bool { source != nil }

    /// Calls `body` once, `milliseconds` ms from now, instead of whatever was armed.
    public func arm(milliseconds: UInt32, _ body: @escaping () -> Void) {
        cancel()
        source = MainContext.timeout(milliseconds: milliseconds) { [weak self] in
            self?.source = nil
            body()
            return false
        }
    }

    /// Disarms it (nothing is called).
    public func cancel() {
        source?.cancel()
        source = nil
    }

    deinit { source?.cancel() }
}
