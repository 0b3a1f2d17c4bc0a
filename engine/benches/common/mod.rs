//! Helpers shared by the benchmark binaries (`#[path]`-included).

use std::time::Duration;

/// CPU time (user + system) and peak RSS (KiB) of this process so far.
pub fn cpu_and_rss() -> (Duration, u64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(usage.ru_utime) + tv(usage.ru_stime), usage.ru_maxrss as u64)
}
