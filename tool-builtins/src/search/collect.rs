//! The parallel top-K collector `glob_files` and `list_dir` share: every
//! walker thread keeps its own best `limit` entries, and each thread's set
//! is merged into the shared one when the thread finishes, so the lock is
//! taken once per thread, not once per entry, and memory stays proportional
//! to `limit` whatever the tree holds.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkParallel, WalkState};

/// Keeps the `limit` best items by key (largest first) out of any number
/// pushed, in memory proportional to `limit`.
#[derive(Debug)]
pub(crate) struct TopK<K: Ord> {
    limit: usize,
    heap: BinaryHeap<Reverse<K>>,
    seen: usize,
}

impl<K: Ord> TopK<K> {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            heap: BinaryHeap::with_capacity(limit + 1),
            seen: 0,
        }
    }

    pub(crate) fn push(&mut self, key: K) {
        self.seen += 1;
        if self.heap.len() < self.limit {
            self.heap.push(Reverse(key));
        } else if self.heap.peek().is_some_and(|Reverse(worst)| key > *worst) {
            self.heap.pop();
            self.heap.push(Reverse(key));
        }
    }

    pub(crate) fn merge(&mut self, other: Self) {
        let seen = self.seen + other.seen;
        for Reverse(key) in other.heap {
            self.push(key);
        }
        self.seen = seen;
    }

    /// Everything pushed, kept or not.
    pub(crate) fn seen(&self) -> usize {
        self.seen
    }

    /// The kept items, best first.
    pub(crate) fn into_sorted(self) -> Vec<K> {
        let mut items: Vec<K> = self.heap.into_iter().map(|Reverse(k)| k).collect();
        items.sort_by(|a, b| b.cmp(a));
        items
    }
}

/// Runs `walk`, keeping the `limit` largest keys that `key` gives for its
/// entries (`None` skips an entry; walk errors are skipped).
pub(crate) fn collect_top_k<K, F>(walk: WalkParallel, limit: usize, key: F) -> TopK<K>
where
    K: Ord + Send,
    F: Fn(DirEntry) -> Option<K> + Sync,
{
    let shared = Mutex::new(TopK::new(limit));
    let mut builder = Collector {
        key: &key,
        limit,
        shared: &shared,
    };
    walk.visit(&mut builder);
    shared
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Collector<'s, K: Ord, F> {
    key: &'s F,
    limit: usize,
    shared: &'s Mutex<TopK<K>>,
}

impl<'s, K, F> ParallelVisitorBuilder<'s> for Collector<'s, K, F>
where
    K: Ord + Send,
    F: Fn(DirEntry) -> Option<K> + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            key: self.key,
            local: Some(TopK::new(self.limit)),
            shared: self.shared,
        })
    }
}

struct Visitor<'s, K: Ord, F> {
    key: &'s F,
    local: Option<TopK<K>>,
    shared: &'s Mutex<TopK<K>>,
}

impl<K, F> ParallelVisitor for Visitor<'_, K, F>
where
    K: Ord + Send,
    F: Fn(DirEntry) -> Option<K> + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if let (Ok(entry), Some(local)) = (entry, &mut self.local) {
            if let Some(k) = (self.key)(entry) {
                local.push(k);
            }
        }
        WalkState::Continue
    }
}

impl<K: Ord, F> Drop for Visitor<'_, K, F> {
    fn drop(&mut self) {
        if let Some(local) = self.local.take() {
            self.shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .merge(local);
        }
    }
}
