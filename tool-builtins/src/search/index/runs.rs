//! Building posting lists in bounded pieces: each build thread collects
//! (gram, file) pairs, sorts them into a compact *run* every
//! [`RUN_PAIRS`] pairs, and [`Merge`] joins the runs in gram order for the
//! store. A run takes about as much memory as its part of the stored index
//! (varint gaps), so a build needs no hash map per distinct gram.

use super::grams::Gram;

/// Pairs a thread collects before sorting them into a run: 2 Mi (32 MiB).
pub(crate) const RUN_PAIRS: usize = 1 << 21;

/// Sorted postings of some files: repeated `u64 key, varint count, varint
/// ids` (the first id, then gaps), keys ascending.
pub(crate) struct Run(Vec<u8>);

impl Run {
    /// Sorts `pairs` (gram, file id; no pair twice) into a run and empties it.
    pub(crate) fn from_pairs(pairs: &mut Vec<(Gram, u32)>) -> Run {
        pairs.sort_unstable();
        let mut out = Vec::with_capacity(pairs.len() * 4);
        let mut i = 0;
        while i < pairs.len() {
            let key = pairs[i].0;
            let mut j = i;
            while j < pairs.len() && pairs[j].0 == key {
                j += 1;
            }
            out.extend_from_slice(&key.to_le_bytes());
            put_varint(&mut out, (j - i) as u64);
            let mut last = 0;
            for (n, &(_, id)) in pairs[i..j].iter().enumerate() {
                put_varint(&mut out, u64::from(if n == 0 { id } else { id - last }));
                last = id;
            }
            i = j;
        }
        pairs.clear();
        Run(out)
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation, reason = "low 7 bits")]
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "under 0x80")]
    out.push(v as u8);
}

/// A run's next key, and where its list starts.
struct Cursor {
    run: Run,
    at: usize,
}

impl Cursor {
    fn key(&self) -> Option<Gram> {
        let bytes = self.run.0.get(self.at..self.at + 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Appends the current key's ids to `ids` and moves to the next key.
    fn take(&mut self, ids: &mut Vec<u32>) {
        self.at += 8;
        let n = self.varint();
        let mut last = 0u64;
        for i in 0..n {
            let v = self.varint();
            last = if i == 0 { v } else { last + v };
            #[allow(clippy::cast_possible_truncation, reason = "written from u32 ids")]
            ids.push(last as u32);
        }
    }

    fn varint(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        while let Some(&b) = self.run.0.get(self.at) {
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        v
    }
}

/// The union of runs in ascending gram order: each gram once, with every
/// file holding it, ascending.
pub(crate) struct Merge {
    cursors: Vec<Cursor>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(Gram, usize)>>,
}

impl Merge {
    /// Merges `runs` (each run's memory is freed as the merge passes its end).
    pub(crate) fn new(runs: Vec<Run>) -> Merge {
        let cursors: Vec<Cursor> = runs.into_iter().map(|run| Cursor { run, at: 0 }).collect();
        let heap = cursors
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.key().map(|k| std::cmp::Reverse((k, i))))
            .collect();
        Merge { cursors, heap }
    }

    /// The next gram, with its files in `ids` (cleared first); `None` at the end.
    pub(crate) fn next_into(&mut self, ids: &mut Vec<u32>) -> Option<Gram> {
        ids.clear();
        let std::cmp::Reverse((key, _)) = *self.heap.peek()?;
        let mut sorted = true;
        while let Some(&std::cmp::Reverse((k, i))) = self.heap.peek() {
            if k != key {
                break;
            }
            self.heap.pop();
            let before = ids.len();
            self.cursors[i].take(ids);
            if before > 0
                && ids
                    .get(before)
                    .is_some_and(|&first| first < ids[before - 1])
            {
                sorted = false;
            }
            match self.cursors[i].key() {
                Some(next) => self.heap.push(std::cmp::Reverse((next, i))),
                None => self.cursors[i].run.0 = Vec::new(),
            }
        }
        if !sorted {
            ids.sort_unstable();
        }
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_in_key_order_with_sorted_ids() {
        let mut a = vec![(5, 7), (1, 3), (5, 2), (900, 1 << 20)];
        let mut b = vec![(5, 4), (2, 9), (1, 1)];
        let runs = vec![Run::from_pairs(&mut a), Run::from_pairs(&mut b)];
        assert!(a.is_empty());
        let mut merge = Merge::new(runs);
        let mut ids = Vec::new();
        let mut got = Vec::new();
        while let Some(k) = merge.next_into(&mut ids) {
            got.push((k, ids.clone()));
        }
        assert_eq!(
            got,
            vec![
                (1, vec![1, 3]),
                (2, vec![9]),
                (5, vec![2, 4, 7]),
                (900, vec![1 << 20])
            ]
        );
    }
}
