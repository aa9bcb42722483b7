import CLectorShims

/// The process's heap, as glibc's malloc keeps it.
public enum Memory {
    /// Gives the free memory of every malloc arena back to the system (glibc `malloc_trim(0)`, malloc_trim(3)).
    ///
    /// glibc keeps freed memory for reuse: below the top of its heap, in the arenas of other threads (GDBus's
    /// worker thread receives every message), and, once a large block was freed, for later large blocks too
    /// (its mmap threshold rises). After a burst of transient allocations, such as receiving and preparing a
    /// 1 MB text, this returns it. Costs a walk over the free lists (well under a millisecond for a heap of a
    /// few MB).
    /// - Returns: whether some memory was given back.
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        lector_malloc_trim() != 0
    }
}
