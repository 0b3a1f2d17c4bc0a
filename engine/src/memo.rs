//! A bounded memo of a pure function of texts, shared across threads.
//!
//! Judging sends one prompt once per trial and repeat (50 times at seed
//! 000's settings), and each answer meets every other method's: counting a
//! long prompt's tokens or scoring an answer with the offline rubric again
//! gives the same value, so it is computed once. The memo forgets
//! everything at once when it holds `capacity` values (no bookkeeping per
//! hit); keys are 64-bit hashes of the texts.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

pub struct Memo<V> {
    capacity: usize,
    values: Mutex<HashMap<u64, V>>,
}

/// A 64-bit hash of `value` (std's SipHash with fixed keys: the same in
/// every process): how the memo, and the call log's batches, tell texts
/// apart before comparing or storing them.
pub fn quick_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

impl<V: Clone> Memo<V> {
    pub fn new(capacity: usize) -> Memo<V> {
        Memo { capacity, values: Mutex::new(HashMap::new()) }
    }

    /// `f()`, computed once per distinct `texts` (until forgotten).
    pub fn get_or(&self, texts: &[&str], f: impl FnOnce() -> V) -> V {
        let key = quick_hash(texts);
        if let Some(v) = self.values.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return v.clone();
        }
        let v = f();
        let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        if values.len() >= self.capacity {
            values.clear();
        }
        values.insert(key, v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn computes_once_per_distinct_texts_and_forgets_when_full() {
        let memo = Memo::new(2);
        let calls = AtomicUsize::new(0);
        let len = |t: &[&str]| {
            memo.get_or(t, || {
                calls.fetch_add(1, Ordering::SeqCst);
                t.iter().map(|s| s.len()).sum::<usize>()
            })
        };
        assert_eq!(len(&["ab", "c"]), 3);
        assert_eq!(len(&["ab", "c"]), 3);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // The parts are hashed apart: "a"+"bc" is another key than "ab"+"c".
        assert_eq!(len(&["a", "bc"]), 3);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // Full: forgotten, computed again.
        len(&["x"]);
        len(&["ab", "c"]);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }
}
