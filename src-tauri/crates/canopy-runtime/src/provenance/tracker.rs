//! What one agent's own tool results showed it, file by file: the merged line ranges and the
//! latest stamp of the file. Fed by the agent's tool results only (never its task prompt, never a
//! sibling's results); a run keeps a second one, the union over all its agents, for the main
//! agent's answer. It holds no file contents.
//!
//! Memory is bounded: at most [`MAX_FILES`] files and [`MAX_RANGES_PER_FILE`] ranges per file are
//! kept. An entry costs its path, a 24-byte stamp and 8 bytes per range, about 120 bytes for a
//! typical path and one range, so an agent that reads 10,000 files keeps about 1.2 MB (the bench
//! `provenance` measures it). Past the caps the tracker forgets rather than guesses: files beyond
//! the first [`MAX_FILES`] are not recorded, and a file's shortest ranges are dropped first. A
//! citation of what was forgotten reads as less seen than it was, never as more.
//!
//! An agent's own Edit does not make what it saw of the file unknown: when the edit was applied to
//! the content the tracker last stamped, the seen lines move with it (see [`shift`]); when the file
//! had changed in between, only the lines the edit wrote count.

use std::collections::HashMap;

use canopy_protocol::{FileStamp, LineEdit, Provenance, SeenFile};

/// Files one tracker keeps; later files are not recorded.
pub const MAX_FILES: usize = 50_000;
/// Disjoint line ranges kept per file; past it the shortest are dropped.
pub const MAX_RANGES_PER_FILE: usize = 256;

/// A [`FileStamp`] in 24 bytes instead of a heap string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    bytes: u64,
    hash: u64,
    whole: bool,
}

impl Stamp {
    fn of(s: &FileStamp) -> Option<Stamp> {
        Some(Stamp {
            bytes: s.bytes,
            hash: u64::from_str_radix(&s.hash, 16).ok()?,
            whole: s.whole,
        })
    }

    fn to_file_stamp(self) -> FileStamp {
        FileStamp {
            bytes: self.bytes,
            whole: self.whole,
            hash: format!("{:016x}", self.hash),
        }
    }

    /// Whether `self` and `newer` prove the file's content changed in between. Two stamps over
    /// the same bytes (or two whole-file stamps) can tell; a prefix stamp and a stamp of a
    /// different length cannot, and are taken as the same content.
    fn differs_from(self, newer: Stamp) -> bool {
        if self.whole && newer.whole {
            return self.bytes != newer.bytes || self.hash != newer.hash;
        }
        self.bytes == newer.bytes && self.hash != newer.hash
    }
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// Sorted, disjoint, non-adjacent inclusive ranges.
    ranges: Vec<[u32; 2]>,
    stamp: Option<Stamp>,
}

/// What a tracker knows of one file, for judging a citation of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSeen {
    /// `Seen` when one range covers every cited line, `FileSeen` otherwise.
    pub provenance: Provenance,
    /// The file as last read, when its content was read.
    pub stamp: Option<FileStamp>,
}

/// Per-agent (or per-run) record of what tool results showed.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    files: HashMap<Box<str>, Entry>,
    /// Files not recorded because [`MAX_FILES`] was reached.
    dropped_files: u64,
}

impl Tracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one tool result's [`SeenFile`]s.
    pub fn record(&mut self, seen: &[SeenFile]) {
        for f in seen {
            self.record_one(f);
        }
    }

    fn record_one(&mut self, f: &SeenFile) {
        let full = self.files.len() >= MAX_FILES;
        let entry = match self.files.get_mut(f.path.as_str()) {
            Some(e) => e,
            None if full => {
                self.dropped_files += 1;
                return;
            }
            None => self.files.entry(f.path.as_str().into()).or_default(),
        };
        let new = f.stamp.as_ref().and_then(Stamp::of);
        if let Some(edit) = &f.edit {
            // Only the exact content the edit was applied to tells where the seen lines went.
            let base = Stamp::of(&edit.base);
            if base.is_some() && entry.stamp == base {
                shift(&mut entry.ranges, &edit.regions);
            } else {
                entry.ranges.clear();
            }
            entry.stamp = new;
        } else if let Some(new) = new {
            // Lines seen under other content say nothing about the file as it is now.
            match entry.stamp {
                Some(old) if old.differs_from(new) => {
                    entry.ranges.clear();
                    entry.stamp = Some(new);
                }
                // Same content as far as both tell: keep the stamp that covers more, or a change
                // past a later, shorter read's end would never show as stale.
                Some(old) if old.bytes > new.bytes => {}
                _ => entry.stamp = Some(new),
            }
        }
        if !f.lines.is_empty() {
            merge(&mut entry.ranges, &f.lines);
        }
    }

    /// What was seen of `path` for a citation of `line..=end` (`None`: the file was never shown).
    pub fn lookup(&self, path: &str, line: u32, end: Option<u32>) -> Option<FileSeen> {
        let entry = self.files.get(path)?;
        let end = end.unwrap_or(line).max(line);
        // Ranges are merged, so a cited range is seen only when one range holds all of it.
        let i = entry.ranges.partition_point(|r| r[1] < line);
        let covered = entry
            .ranges
            .get(i)
            .is_some_and(|r| r[0] <= line && end <= r[1]);
        Some(FileSeen {
            provenance: if covered {
                Provenance::Seen
            } else {
                Provenance::FileSeen
            },
            stamp: entry.stamp.map(Stamp::to_file_stamp),
        })
    }

    /// Files recorded.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Files not recorded because the tracker was full.
    pub fn dropped_files(&self) -> u64 {
        self.dropped_files
    }

    /// Forgets everything (a new run of the main agent).
    pub fn clear(&mut self) {
        self.files = HashMap::new();
        self.dropped_files = 0;
    }

    /// Heap and inline bytes the tracker holds, approximately: the memory bound the bench checks.
    pub fn approx_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(Box<str>, Entry)>() + 1;
        std::mem::size_of::<Self>()
            + self.files.capacity() * slot
            + self
                .files
                .iter()
                .map(|(k, e)| k.len() + e.ranges.capacity() * std::mem::size_of::<[u32; 2]>())
                .sum::<usize>()
    }
}

/// Moves sorted, disjoint `ranges` of a file to where an edit's `regions` (in file order, disjoint)
/// put their lines: lines before a region keep their numbers, lines inside one are dropped (the
/// lines that replaced them are recorded from the edit's own `lines`), lines after it move by its
/// `new_count - old_count`.
fn shift(ranges: &mut Vec<[u32; 2]>, regions: &[LineEdit]) {
    let mut out: Vec<[u32; 2]> = Vec::with_capacity(ranges.len() + regions.len());
    let mut push = |a: i64, b: i64| {
        if let (Ok(a), Ok(b)) = (u32::try_from(a), u32::try_from(b)) {
            if 0 < a && a <= b {
                out.push([a, b]);
            }
        }
    };
    for &[a, b] in ranges.iter() {
        let (a, b) = (i64::from(a), i64::from(b));
        let mut from = a;
        let mut delta = 0i64;
        for r in regions {
            let first = i64::from(r.old_start);
            let last = first + i64::from(r.old_count) - 1;
            if first > b {
                break;
            }
            if last >= from {
                push(from + delta, (first - 1).min(b) + delta);
                from = from.max(last + 1);
            }
            delta += i64::from(r.new_count) - i64::from(r.old_count);
        }
        push(from + delta, b + delta);
    }
    *ranges = Vec::new();
    merge(ranges, &out);
}

/// Merges `new` ranges into sorted, disjoint `ranges`, joining overlapping and adjacent ones.
fn merge(ranges: &mut Vec<[u32; 2]>, new: &[[u32; 2]]) {
    ranges.extend(new.iter().filter(|r| r[0] > 0 && r[0] <= r[1]).copied());
    ranges.sort_unstable();
    let mut out: Vec<[u32; 2]> = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        match out.last_mut() {
            Some(last) if r[0] <= last[1].saturating_add(1) => last[1] = last[1].max(r[1]),
            _ => out.push(r),
        }
    }
    if out.len() > MAX_RANGES_PER_FILE {
        // Keep the longest; dropping only ever makes a citation look less seen.
        let mut by_len: Vec<usize> = (0..out.len()).collect();
        by_len.sort_unstable_by_key(|&i| std::cmp::Reverse(out[i][1] - out[i][0]));
        let mut keep: Vec<usize> = by_len[..MAX_RANGES_PER_FILE].to_vec();
        keep.sort_unstable();
        out = keep.into_iter().map(|i| out[i]).collect();
    }
    out.shrink_to_fit();
    *ranges = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_tools::stamp::stamp_bytes;

    fn seen(path: &str, lines: Vec<[u32; 2]>, content: Option<&[u8]>) -> SeenFile {
        SeenFile {
            path: path.into(),
            lines,
            stamp: content.map(stamp_bytes),
            edit: None,
        }
    }

    #[test]
    fn ranges_merge_and_a_citation_is_seen_only_when_one_range_covers_it() {
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", vec![[1, 10]], Some(b"v1"))]);
        t.record(&[seen("a.rs", vec![[11, 20], [40, 45]], Some(b"v1"))]);
        let p = |l, e| t.lookup("a.rs", l, e).unwrap().provenance;
        assert_eq!(p(15, None), Provenance::Seen);
        assert_eq!(p(5, Some(20)), Provenance::Seen, "adjacent ranges merged");
        assert_eq!(
            p(18, Some(41)),
            Provenance::FileSeen,
            "a gap inside the range"
        );
        assert_eq!(p(30, None), Provenance::FileSeen);
        assert_eq!(p(46, None), Provenance::FileSeen);
        assert!(t.lookup("b.rs", 1, None).is_none());
        t.record(&[seen("b.rs", vec![], None)]);
        let listed = t.lookup("b.rs", 1, None).unwrap();
        assert_eq!(listed.provenance, Provenance::FileSeen);
        assert_eq!(listed.stamp, None);
    }

    #[test]
    fn a_later_shorter_read_of_a_huge_file_keeps_the_stamp_that_covers_more() {
        let head = b"0123456789";
        let mut t = Tracker::new();
        let long = SeenFile {
            stamp: Some(canopy_tools::stamp::stamp_prefix(head, 100)),
            ..seen("big.log", vec![[1, 2]], None)
        };
        let short = SeenFile {
            stamp: Some(canopy_tools::stamp::stamp_prefix(&head[..4], 100)),
            ..seen("big.log", vec![[1, 1]], None)
        };
        t.record(&[long]);
        t.record(&[short]);
        let found = t.lookup("big.log", 2, None).unwrap();
        assert_eq!(
            found.provenance,
            Provenance::Seen,
            "same content: nothing dropped"
        );
        assert_eq!(
            found.stamp.unwrap().bytes,
            10,
            "the stamp that covers more stays"
        );
    }

    #[test]
    fn a_new_content_drops_the_lines_seen_under_the_old_one() {
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", vec![[1, 10]], Some(b"old"))]);
        // A listing (no stamp) neither clears nor replaces what was read.
        t.record(&[seen("a.rs", vec![], None)]);
        assert_eq!(
            t.lookup("a.rs", 3, None).unwrap().provenance,
            Provenance::Seen
        );
        t.record(&[seen("a.rs", vec![[20, 21]], Some(b"new!"))]);
        let after = t.lookup("a.rs", 3, None).unwrap();
        assert_eq!(after.provenance, Provenance::FileSeen);
        assert_eq!(after.stamp, Some(stamp_bytes(b"new!")));
        assert_eq!(
            t.lookup("a.rs", 20, None).unwrap().provenance,
            Provenance::Seen
        );
    }

    /// An Edit's record: regions as `[old_start, old_count, new_start, new_count]`, applied to
    /// `base`, leaving `after`.
    fn edited(path: &str, base: &[u8], after: &[u8], regions: &[[u32; 4]]) -> SeenFile {
        let regions: Vec<LineEdit> = regions
            .iter()
            .map(|r| LineEdit {
                old_start: r[0],
                old_count: r[1],
                new_start: r[2],
                new_count: r[3],
            })
            .collect();
        SeenFile {
            path: path.into(),
            lines: regions
                .iter()
                .filter(|r| r.new_count > 0)
                .map(|r| [r.new_start, r.new_start + r.new_count - 1])
                .collect(),
            stamp: Some(stamp_bytes(after)),
            edit: Some(canopy_protocol::SeenEdit {
                base: stamp_bytes(base),
                regions,
            }),
        }
    }

    /// The ranges seen after reading `seen` of content `v1` and editing it.
    fn after_edit(seen_lines: Vec<[u32; 2]>, regions: &[[u32; 4]]) -> Vec<[u32; 2]> {
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", seen_lines, Some(b"v1"))]);
        t.record(&[edited("a.rs", b"v1", b"v2", regions)]);
        assert_eq!(
            t.lookup("a.rs", 1, None).unwrap().stamp,
            Some(stamp_bytes(b"v2"))
        );
        t.files["a.rs"].ranges.clone()
    }

    #[test]
    fn an_edit_moves_the_lines_seen_after_it_and_keeps_those_before() {
        // Seen 10-20; one line at 30 becomes three: nothing seen moves.
        assert_eq!(
            after_edit(vec![[10, 20]], &[[30, 1, 30, 3]]),
            [[10, 20], [30, 32]]
        );
        // The same edit at line 5 moves 10-20 down by two.
        assert_eq!(
            after_edit(vec![[10, 20]], &[[5, 1, 5, 3]]),
            [[5, 7], [12, 22]]
        );
        // Shrinking before it: lines 2-4 become one, 10-20 move up by two.
        assert_eq!(
            after_edit(vec![[10, 20]], &[[2, 3, 2, 1]]),
            [[2, 2], [8, 18]]
        );
        // Whole lines removed right before the seen range: nothing written, the range moves.
        assert_eq!(after_edit(vec![[10, 20]], &[[8, 2, 8, 0]]), [[8, 18]]);
    }

    #[test]
    fn an_edit_inside_a_seen_range_replaces_that_part_by_what_it_wrote() {
        // 13-14 replaced by four lines: 10-12 stay, the four are written, 15-20 move by two.
        assert_eq!(after_edit(vec![[10, 20]], &[[13, 2, 13, 4]]), [[10, 22]]);
        // The edit reaches past the seen range's end: the written lines join it.
        assert_eq!(after_edit(vec![[10, 20]], &[[18, 5, 18, 1]]), [[10, 18]]);
        // Removing lines 12-13 of the seen 10-20 leaves 10-18, all still seen.
        assert_eq!(after_edit(vec![[10, 20]], &[[12, 2, 12, 0]]), [[10, 18]]);
        // An edit that begins before the seen range and ends in it: lines 1-4 never seen stay
        // unseen, the written line and the rest of the range are seen.
        assert_eq!(
            after_edit(vec![[6, 10], [30, 31]], &[[5, 3, 5, 1]]),
            [[5, 8], [28, 29]]
        );
    }

    #[test]
    fn replace_all_regions_each_move_what_follows_them() {
        // Seen 1-4 and 20-25; three places (lines 2, 10, 22) each grow from one line to two.
        assert_eq!(
            after_edit(
                vec![[1, 4], [20, 25]],
                &[[2, 1, 2, 2], [10, 1, 11, 2], [22, 1, 24, 2]]
            ),
            [[1, 5], [11, 12], [22, 28]]
        );
    }

    #[test]
    fn an_edit_over_content_not_last_seen_keeps_only_what_it_wrote() {
        // Read as v1, but the edit found v1b (another process changed the file in between).
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", vec![[1, 40]], Some(b"v1"))]);
        t.record(&[edited("a.rs", b"v1b", b"v2", &[[5, 1, 5, 2]])]);
        assert_eq!(t.files["a.rs"].ranges, [[5, 6]]);
        assert_eq!(
            t.lookup("a.rs", 20, None).unwrap().provenance,
            Provenance::FileSeen
        );
        // Never stamped at all (only Grep lines, which carry no stamp), and never shown.
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", vec![[8, 8]], None)]);
        t.record(&[edited("a.rs", b"v1", b"v2", &[[2, 1, 2, 1]])]);
        t.record(&[edited("b.rs", b"v1", b"v2", &[[2, 1, 2, 3]])]);
        assert_eq!(t.files["a.rs"].ranges, [[2, 2]]);
        assert_eq!(t.files["b.rs"].ranges, [[2, 4]]);
        assert_eq!(
            t.lookup("b.rs", 3, None).unwrap().stamp,
            Some(stamp_bytes(b"v2"))
        );
        // Two edits in a row: the second applies to what the first left.
        let mut t = Tracker::new();
        t.record(&[seen("a.rs", vec![[1, 10]], Some(b"v1"))]);
        t.record(&[edited("a.rs", b"v1", b"v2", &[[3, 1, 3, 2]])]);
        t.record(&[edited("a.rs", b"v2", b"v3", &[[1, 1, 1, 0]])]);
        assert_eq!(t.files["a.rs"].ranges, [[1, 10]]);
    }

    #[test]
    fn memory_stays_bounded_by_the_caps() {
        let mut t = Tracker::new();
        let many: Vec<[u32; 2]> = (0..1000)
            .map(|i| [i * 10 + 1, i * 10 + 1 + i % 3])
            .collect();
        t.record(&[seen("wide.rs", many, Some(b"x"))]);
        assert_eq!(t.files["wide.rs"].ranges.len(), MAX_RANGES_PER_FILE);
        for i in 0..(MAX_FILES + 10) {
            t.record(&[seen(&format!("f{i}.rs"), vec![[1, 5]], None)]);
        }
        assert_eq!(t.len(), MAX_FILES);
        assert_eq!(t.dropped_files(), 11);
        // A file already known is still updated when the tracker is full.
        t.record(&[seen("f1.rs", vec![[6, 9]], None)]);
        assert_eq!(
            t.lookup("f1.rs", 2, Some(9)).unwrap().provenance,
            Provenance::Seen
        );
        assert!(t.approx_bytes() < 16 * 1024 * 1024, "{}", t.approx_bytes());
        // An edit that splits every range keeps the cap.
        let regions: Vec<[u32; 4]> = (0..MAX_RANGES_PER_FILE as u32)
            .map(|i| [i * 10 + 5, 1, i * 10 + 5, 0])
            .collect();
        let mut one = Tracker::new();
        one.record(&[seen("w.rs", vec![[1, 10_000]], Some(b"v1"))]);
        let mut e = edited("w.rs", b"v1", b"v2", &regions);
        e.lines = (0..1000).map(|i| [i * 10 + 7, i * 10 + 7]).collect();
        one.record(&[e]);
        assert!(one.files["w.rs"].ranges.len() <= MAX_RANGES_PER_FILE);
    }
}
