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

    /// Makes every block of at least `bytes` (default 128 KiB, glibc's initial threshold) a mapping of its own,
    /// given back to the system as soon as it is freed (glibc `mallopt(M_MMAP_THRESHOLD)`, mallopt(3)).
    ///
    /// Left alone, glibc raises the threshold to the size of each large block freed (up to 32 MiB), so after
    /// one 1 MB text every later 1 MB buffer (a D-Bus message, a text, its copy for the saved reading) comes from
    /// the heap and stays resident after it is freed. A long-running process that handles large transient
    /// buffers now and then keeps its resident memory down by fixing it. Costs an mmap/munmap per large block.
    /// - Returns: whether glibc accepted it.
    @discardableResult
    public static func fixLargeBlockThreshold(bytes: Int32 = 128 * 1024) -> Bool {
        lector_malloc_set_mmap_threshold(bytes) != 0
    }
}
