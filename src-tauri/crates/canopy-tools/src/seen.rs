//! What a tool result showed its agent of which files ([`SeenFile`]): the line ranges of a Read,
//! the lines a Grep printed, the files a listing named. Evidence provenance is judged from these
//! records, so they hold only what is in the result text — and when the host cuts a result to fit
//! the agent's context, [`Tool::narrow_seen`](crate::Tool::narrow_seen) drops what the cut removed,
//! with the helpers here for the two layouts the built-in tools print: numbered lines and listings.

use std::collections::HashSet;

use canopy_protocol::SeenFile;

/// Merges line numbers (in any order, repeats allowed) into sorted, inclusive ranges.
pub fn ranges(lines: impl IntoIterator<Item = u32>) -> Vec<[u32; 2]> {
    let mut lines: Vec<u32> = lines.into_iter().filter(|&n| n > 0).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out: Vec<[u32; 2]> = Vec::new();
    for n in lines {
        match out.last_mut() {
            Some(last) if last[1].saturating_add(1) == n => last[1] = n,
            _ => out.push([n, n]),
        }
    }
    out
}

/// Narrows `seen` to what `kept` (a result of numbered lines, as Read prints them, cut after the
/// tool made it) still shows: the lines up to the last numbered line left.
pub fn narrow_numbered(seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
    let last = kept
        .lines()
        .filter_map(|l| numbered_line(l).map(|(n, _)| n))
        .max();
    seen.into_iter()
        .map(|mut f| {
            f.lines = match last {
                Some(last) => f
                    .lines
                    .iter()
                    .filter(|r| r[0] <= last)
                    .map(|r| [r[0], r[1].min(last)])
                    .collect(),
                None => Vec::new(),
            };
            f
        })
        .collect()
}

/// Narrows `seen` to what `kept` (a listing or Grep's `path:line:text` lines, cut after the tool
/// made it) still shows: the lines and files whose entries are left.
pub fn narrow_listed(seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
    let kept_lines: Vec<&str> = kept.lines().collect();
    let names: HashSet<&str> = kept_lines
        .iter()
        .map(|l| match l.rsplit_once(':') {
            // `path:count` in Grep's count mode.
            Some((p, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => l,
        })
        .chain(kept_lines.iter().copied())
        .collect();
    seen.into_iter()
        .filter_map(|mut f| {
            if f.lines.is_empty() {
                return names.contains(f.path.as_str()).then_some(f);
            }
            let shown: Vec<u32> = kept_lines
                .iter()
                .filter_map(|l| path_line(l, &f.path).map(|(n, _)| n))
                .collect();
            if shown.is_empty() {
                return None;
            }
            f.lines = ranges(shown);
            Some(f)
        })
        .collect()
}

/// A numbered output line (`    12\ttext`, as Read prints): its number and text.
pub fn numbered_line(line: &str) -> Option<(u32, &str)> {
    let (number, text) = line.split_once('\t')?;
    Some((number.trim_start().parse().ok()?, text))
}

/// A `path:12:text` line (or, for Grep's context lines, `path-12-text`) of `path`: its number and
/// text.
pub fn path_line<'a>(line: &'a str, path: &str) -> Option<(u32, &'a str)> {
    let rest = line.strip_prefix(path)?;
    let sep = rest.chars().next().filter(|c| *c == ':' || *c == '-')?;
    let rest = &rest[1..];
    let (number, text) = rest.split_once(sep)?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().ok()?, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, lines: Vec<[u32; 2]>) -> SeenFile {
        SeenFile {
            path: path.into(),
            lines,
            stamp: None,
            edit: None,
        }
    }

    #[test]
    fn line_numbers_merge_into_ranges() {
        assert_eq!(
            ranges([5, 1, 2, 3, 3, 9, 10]),
            vec![[1, 3], [5, 5], [9, 10]]
        );
        assert!(ranges([]).is_empty());
    }

    #[test]
    fn a_cut_read_keeps_the_lines_up_to_the_last_one_still_shown() {
        let kept = "     1\ta\n     2\tb\n     3\tc\n… [truncated: 7 more lines / 40 B not shown] (cut by the host)";
        let out = narrow_numbered(vec![file("a.rs", vec![[1, 10]])], kept);
        assert_eq!(out[0].lines, vec![[1, 3]]);
        let none = narrow_numbered(vec![file("a.rs", vec![[1, 10]])], "… [truncated]");
        assert!(none[0].lines.is_empty(), "nothing numbered is left");
    }

    #[test]
    fn a_cut_grep_keeps_only_the_lines_and_files_left() {
        let kept =
            "src/a-b.rs-3-ctx\nsrc/a-b.rs:4:hit\n--\nsrc/c.rs:10:hit\n… [truncated: 5 more lines]";
        let out = narrow_listed(
            vec![
                file("src/a-b.rs", vec![[3, 5]]),
                file("src/c.rs", vec![[10, 12]]),
                file("src/d.rs", vec![[1, 1]]),
            ],
            kept,
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].lines, vec![[3, 4]]);
        assert_eq!(out[1].lines, vec![[10, 10]]);
    }

    #[test]
    fn a_cut_listing_keeps_the_files_still_named() {
        let kept = "src/a.rs\nsrc/b.rs:3\n… [truncated: 2 more files not shown]";
        let out = narrow_listed(
            vec![
                file("src/a.rs", vec![]),
                file("src/b.rs", vec![]),
                file("src/c.rs", vec![]),
            ],
            kept,
        );
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/a.rs", "src/b.rs"]);
    }
}
