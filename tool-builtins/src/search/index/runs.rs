//! Building posting lists in bounded pieces. The files are cut into
//! *units* of consecutive files (so of consecutive posting ids); a build
//! thread reads a unit's files and collects (gram, id) pairs packed in a
//! `u64`, and every [`RUN_PAIRS`] pairs (and at the unit's end) sorts them
//! by gram (a radix pass on the top byte, then a sort of each part) into a compact *run*: per gram, its ids in the
//! posting encoding of `lists`. Runs cover ascending, disjoint ranges of
//! ids, so [`Merge`] joins them gram by gram by concatenating, in run order.
//! A run takes about as much memory as its part of the stored index, and
//! the build needs no map per distinct gram.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

use super::grams::Gram;
use super::lists;

/// Pairs a thread collects before sorting them into a run: 4 Mi (32 MiB,
/// and as much again to sort them).
pub(crate) const RUN_PAIRS: usize = 1 << 22;

/// Sorted postings of a range of ids: repeated `u32 key, varint length,
/// list` (ids less `base`, in `lists`' encoding), keys ascending.
pub(crate) struct Run {
    /// Where the run sits among all runs: they are merged in this order,
    /// which is the order of their ids.
    pub(crate) order: (usize, usize),
    base: u32,
    bytes: Vec<u8>,
    /// Where the keys of the upper half (2^31 and up) start in `bytes`.
    upper: usize,
}

/// The runs cut in two by key: keys below 2^31, and the others. Each half
/// merges on its own (in parallel), and the lower half's keys all come first.
pub(crate) fn halves(runs: Vec<Run>) -> (Vec<Run>, Vec<Run>) {
    let mut lower = Vec::with_capacity(runs.len());
    let mut upper = Vec::with_capacity(runs.len());
    for mut run in runs {
        let high = Run {
            order: run.order,
            base: run.base,
            bytes: run.bytes.split_off(run.upper),
            upper: 0,
        };
        run.bytes.shrink_to_fit();
        run.upper = run.bytes.len();
        lower.push(run);
        upper.push(high);
    }
    (lower, upper)
}

/// Collects the pairs of one unit and turns them into runs.
#[derive(Default)]
pub(crate) struct RunBuilder {
    /// `key << 32 | id - base`.
    pairs: Vec<u64>,
    scratch: Vec<u64>,
    ids: Vec<u32>,
    /// The first id of the run being collected, and one past its largest.
    base: Option<u32>,
    end: u32,
}

impl RunBuilder {
    /// Adds the grams `keys` of the piece `id` (ids ascending from call to
    /// call, each once; a key twice in `keys` counts once).
    pub(crate) fn add(&mut self, id: u32, keys: &[Gram]) {
        let base = *self.base.get_or_insert(id);
        let local = u64::from(id - base);
        self.end = id + 1;
        self.pairs
            .extend(keys.iter().map(|&k| u64::from(k) << 32 | local));
    }

    /// Whether the pairs collected call for a run.
    pub(crate) fn full(&self) -> bool {
        self.pairs.len() >= RUN_PAIRS
    }

    /// The run of the pairs collected (`None` when there are none), placed
    /// at `order`; the builder starts a new run.
    pub(crate) fn take(&mut self, order: (usize, usize)) -> Option<Run> {
        let base = self.base.take()?;
        sort_pairs(&mut self.pairs, &mut self.scratch);
        let universe = self.end - base;
        let mut bytes = Vec::with_capacity(self.pairs.len());
        let mut list = Vec::new();
        let mut upper = None;
        let mut i = 0;
        while i < self.pairs.len() {
            let key = self.pairs[i] >> 32;
            if key >= 1 << 31 && upper.is_none() {
                upper = Some(bytes.len());
            }
            self.ids.clear();
            while let Some(&p) = self.pairs.get(i).filter(|&&p| p >> 32 == key) {
                #[allow(clippy::cast_possible_truncation, reason = "the low 32 bits")]
                let id = p as u32;
                // A pair twice (a key a piece gave twice): once.
                if self.ids.last() != Some(&id) {
                    self.ids.push(id);
                }
                i += 1;
            }
            list.clear();
            lists::encode(&self.ids, universe, &mut list);
            #[allow(clippy::cast_possible_truncation, reason = "the high 32 bits")]
            bytes.extend_from_slice(&(key as u32).to_le_bytes());
            lists::put_varint(&mut bytes, list.len() as u64);
            bytes.extend_from_slice(&list);
        }
        self.pairs.clear();
        if self.pairs.capacity() > 2 * RUN_PAIRS {
            self.pairs = Vec::new();
            self.scratch = Vec::new();
        }
        bytes.shrink_to_fit();
        Some(Run {
            order,
            base,
            upper: upper.unwrap_or(bytes.len()),
            bytes,
        })
    }
}

/// Sorts `v` (keys in the high half, ids in the low): one pass spreads
/// the pairs by their top byte into `tmp`, then each part, small enough to
/// stay in the processor's cache, is sorted alone.
fn sort_pairs(v: &mut Vec<u64>, tmp: &mut Vec<u64>) {
    tmp.clear();
    tmp.resize(v.len(), 0);
    let mut at = [0usize; 257];
    for &x in v.iter() {
        at[(x >> 56) as usize + 1] += 1;
    }
    for i in 1..257 {
        at[i] += at[i - 1];
    }
    let starts = at;
    for &x in v.iter() {
        let d = (x >> 56) as usize;
        tmp[at[d]] = x;
        at[d] += 1;
    }
    for d in 0..256 {
        tmp[starts[d]..starts[d + 1]].sort_unstable();
    }
    std::mem::swap(v, tmp);
}

/// A run's place in its bytes.
struct Cursor {
    run: Run,
    at: usize,
}

impl Cursor {
    fn key(&self) -> Option<Gram> {
        let bytes = self.run.bytes.get(self.at..self.at + 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Appends the current key's ids to `ids` and moves to the next key.
    fn take(&mut self, ids: &mut Vec<u32>) -> io::Result<()> {
        let mut rest = self.run.bytes.get(self.at + 4..).unwrap_or_default();
        let before = rest.len();
        let len = usize::try_from(lists::get_varint(&mut rest)?)
            .map_err(|_| lists::corrupt("run list too long"))?;
        let list = rest
            .get(..len)
            .ok_or_else(|| lists::corrupt("truncated run"))?;
        lists::decode_into(list, self.run.base, ids)?;
        self.at += 4 + (before - rest.len()) + len;
        Ok(())
    }
}

/// The union of runs in ascending gram order: each gram once, with every
/// id holding it, ascending.
pub(crate) struct Merge {
    cursors: Vec<Cursor>,
    heap: BinaryHeap<Reverse<(Gram, usize)>>,
}

impl Merge {
    /// Merges `runs` (in any order: they are put in [`Run::order`]; each
    /// run's memory is freed as the merge passes its end).
    pub(crate) fn new(mut runs: Vec<Run>) -> Merge {
        runs.sort_by_key(|r| r.order);
        let cursors: Vec<Cursor> = runs.into_iter().map(|run| Cursor { run, at: 0 }).collect();
        let heap = cursors
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.key().map(|k| Reverse((k, i))))
            .collect();
        Merge { cursors, heap }
    }

    /// The next gram, with its ids in `ids` (cleared first); `None` at the end.
    ///
    /// # Errors
    /// A run that does not decode (never, unless memory was corrupted).
    pub(crate) fn next_into(&mut self, ids: &mut Vec<u32>) -> io::Result<Option<Gram>> {
        ids.clear();
        let Some(&Reverse((key, _))) = self.heap.peek() else {
            return Ok(None);
        };
        // Equal keys pop in cursor order, which is id order.
        while let Some(&Reverse((k, i))) = self.heap.peek() {
            if k != key {
                break;
            }
            self.heap.pop();
            self.cursors[i].take(ids)?;
            match self.cursors[i].key() {
                Some(next) => self.heap.push(Reverse((next, i))),
                None => self.cursors[i].run.bytes = Vec::new(),
            }
        }
        Ok(Some(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_in_key_order_with_sorted_ids() {
        let mut a = RunBuilder::default();
        a.add(3, &[5, 1]);
        a.add(7, &[5]);
        a.add(9, &[900, 5]);
        let mut b = RunBuilder::default();
        b.add(10, &[2, 5, 1]);
        b.add(1 << 20, &[900]);
        // Given out of order: merged by their place.
        let runs = vec![b.take((1, 0)).unwrap(), a.take((0, 0)).unwrap()];
        assert!(a.take((0, 1)).is_none());
        let mut merge = Merge::new(runs);
        let mut ids = Vec::new();
        let mut got = Vec::new();
        while let Some(k) = merge.next_into(&mut ids).unwrap() {
            got.push((k, ids.clone()));
        }
        assert_eq!(
            got,
            vec![
                (1, vec![3, 10]),
                (2, vec![10]),
                (5, vec![3, 7, 9, 10]),
                (900, vec![9, 1 << 20])
            ]
        );
    }

    #[test]
    fn halves_split_runs_by_key() {
        let mut a = RunBuilder::default();
        a.add(1, &[5, u32::MAX, 1 << 31, (1 << 31) - 1]);
        a.add(2, &[5, 1 << 31]);
        let run = a.take((0, 0)).unwrap();
        let (lower, upper) = halves(vec![run]);
        let collect = |runs: Vec<Run>| {
            let mut merge = Merge::new(runs);
            let (mut ids, mut got) = (Vec::new(), Vec::new());
            while let Some(k) = merge.next_into(&mut ids).unwrap() {
                got.push((k, ids.clone()));
            }
            got
        };
        assert_eq!(
            collect(lower),
            vec![(5, vec![1, 2]), ((1 << 31) - 1, vec![1])]
        );
        assert_eq!(
            collect(upper),
            vec![(1 << 31, vec![1, 2]), (u32::MAX, vec![1])]
        );
    }

    #[test]
    fn pairs_sort_by_key_then_id() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut v: Vec<u64> = (0..10_000u64)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 300) << 32 | i
            })
            .collect();
        let mut want = v.clone();
        want.sort_unstable();
        sort_pairs(&mut v, &mut Vec::new());
        assert_eq!(v, want);
        // Keys spanning every byte of the high half.
        let mut v: Vec<u64> = (0..5000u64)
            .rev()
            .map(|i| (i * 0x0101_0101 % (1 << 32)) << 32 | i)
            .collect();
        let mut want = v.clone();
        want.sort_unstable();
        sort_pairs(&mut v, &mut Vec::new());
        assert_eq!(v, want);
    }
}
