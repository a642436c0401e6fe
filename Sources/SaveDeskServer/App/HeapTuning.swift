#if canImport(Glibc)
import CMalloc
#endif

/// How the server's process keeps the memory it frees (glibc's malloc), set once when a server
/// starts.
///
/// By default glibc hands the top of a thread's heap back to the kernel (`madvise`) as soon as
/// 128 KB of it is free, and the next allocation there faults the pages in again, zeroed. A
/// request that reads SQLite through a temporary table (a search's sort, a materialized CTE, a
/// UNION) has SQLite allocate a fresh page cache of some 90 KB for it and free it after, so each
/// such request paid for that memory again in page faults: a customer search took ~45 page
/// faults a request on a 100k-customer store (280,000 in 5 s of load), and a tenth of the server's
/// CPU was the kernel zeroing and mapping pages. Kept instead, the same load took 25 page faults
/// in all (see docs/operations.md, "The process's heap").
///
/// The process keeps what it has freed up to `trimThreshold` per heap for its next allocations
/// (its resident size stays at what its busiest moment needed: the same figure under that load),
/// and allocations from `mmapThreshold` up still get pages of their own, returned when freed.
/// Setting either fixes both (glibc otherwise moves them as it sees large blocks freed).
enum HeapTuning {
    static let trimThreshold: Int32 = 128 << 20
    static let mmapThreshold: Int32 = 4 << 20

    /// Sets both thresholds. A second server in the same process sets the same values again.
    static func apply() {
        #if canImport(Glibc)
        mallopt(M_TRIM_THRESHOLD, trimThreshold)
        mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        #endif
    }
}
