//! The per-trace page cache of `web_fetch` (module docs of [`crate::web`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::body::Page;

/// How long a fetched page is answered from the cache: 15 minutes.
pub const CACHE_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// Most pages kept (all traces together): 64; the oldest goes first.
pub const MAX_CACHED_PAGES: usize = 64;
/// Most bytes of page content kept (all traces together): 32 MiB; the oldest
/// pages go first. A page larger than this is not kept.
pub const MAX_CACHED_BYTES: usize = 32 * 1024 * 1024;

/// `(trace id, requested URL)`.
type Key = (String, String);

#[derive(Debug, Default)]
struct Entries {
    pages: HashMap<Key, (Instant, Arc<Page>)>,
    bytes: usize,
}

/// Pages by trace and URL, bounded by [`MAX_CACHED_PAGES`] and
/// [`MAX_CACHED_BYTES`], each living [`CACHE_LIFETIME`].
#[derive(Debug, Default)]
pub(crate) struct FetchCache(Mutex<Entries>);

impl FetchCache {
    /// The page fetched for `url` in `trace` less than [`CACHE_LIFETIME`] ago.
    pub(crate) fn get(&self, trace: &str, url: &str) -> Option<Arc<Page>> {
        let mut entries = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (trace.to_owned(), url.to_owned());
        let (at, page) = entries.pages.get(&key)?;
        if at.elapsed() < CACHE_LIFETIME {
            return Some(page.clone());
        }
        let size = page.size();
        entries.pages.remove(&key);
        entries.bytes = entries.bytes.saturating_sub(size);
        None
    }

    /// Keeps `page` as the answer for `url` in `trace`, dropping expired
    /// and then the oldest pages to stay within the bounds.
    pub(crate) fn put(&self, trace: &str, url: &str, page: Arc<Page>) {
        let size = page.size();
        if size > MAX_CACHED_BYTES {
            return;
        }
        let mut entries = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (trace.to_owned(), url.to_owned());
        if let Some((_, old)) = entries.pages.remove(&key) {
            entries.bytes = entries.bytes.saturating_sub(old.size());
        }
        let expired: Vec<Key> = entries
            .pages
            .iter()
            .filter(|(_, (at, _))| at.elapsed() >= CACHE_LIFETIME)
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            if let Some((_, p)) = entries.pages.remove(&k) {
                entries.bytes = entries.bytes.saturating_sub(p.size());
            }
        }
        while entries.pages.len() >= MAX_CACHED_PAGES || entries.bytes + size > MAX_CACHED_BYTES {
            let Some(oldest) = entries
                .pages
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((_, p)) = entries.pages.remove(&oldest) {
                entries.bytes = entries.bytes.saturating_sub(p.size());
            }
        }
        entries.bytes += size;
        entries.pages.insert(key, (Instant::now(), page));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::body::{Content, Page};

    fn page(text: &str) -> Arc<Page> {
        Arc::new(Page::for_test(Content::Text {
            text: text.to_owned(),
            markdown: false,
            chars: text.chars().count(),
        }))
    }

    #[test]
    fn pages_are_kept_per_trace_and_bounded() {
        let cache = FetchCache::default();
        cache.put("t1", "http://a.test/", page("one"));
        assert!(cache.get("t1", "http://a.test/").is_some());
        assert!(cache.get("t2", "http://a.test/").is_none());
        for i in 0..MAX_CACHED_PAGES + 5 {
            cache.put("t1", &format!("http://a.test/{i}"), page("x"));
        }
        let entries = cache.0.lock().unwrap();
        assert_eq!(entries.pages.len(), MAX_CACHED_PAGES);
        // The oldest went first: the first page is gone, the last is there.
        assert!(
            !entries
                .pages
                .contains_key(&("t1".to_owned(), "http://a.test/".to_owned()))
        );
        drop(entries);
        assert!(
            cache
                .get("t1", &format!("http://a.test/{}", MAX_CACHED_PAGES + 4))
                .is_some()
        );
    }

    #[test]
    fn bytes_are_bounded() {
        let cache = FetchCache::default();
        let big = "x".repeat(MAX_CACHED_BYTES / 3);
        for i in 0..5 {
            cache.put("t", &format!("u{i}"), page(&big));
        }
        let entries = cache.0.lock().unwrap();
        assert!(entries.bytes <= MAX_CACHED_BYTES, "{}", entries.bytes);
        assert_eq!(entries.pages.len(), 2);
        drop(entries);
        // Too large for the cache at all: not kept.
        cache.put("t", "huge", page(&"y".repeat(MAX_CACHED_BYTES + 1)));
        assert!(cache.get("t", "huge").is_none());
    }
}
