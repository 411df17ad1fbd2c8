//! What a tool result showed its agent of which files ([`SeenFile`]): the line ranges of a Read,
//! the lines a Grep printed, the files a listing named. Evidence provenance is judged from these
//! records, so they hold only what is in the result text — and when the host cuts a result to fit
//! the agent's context, [`narrow_to_text`] drops what the cut removed.

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

/// Narrows `seen` to what `kept` (the result text as the agent finally received it) still shows,
/// for a result of the tool `tool` that was cut after the tool made it. Read results keep the
/// lines up to the last numbered line left; Grep and Glob results keep the lines and files whose
/// `path:line:` / path entries are left. Other tools report nothing seen and are left as they are.
pub fn narrow_to_text(tool: &str, seen: Vec<SeenFile>, kept: &str) -> Vec<SeenFile> {
    match tool {
        "Read" => {
            let last = kept.lines().filter_map(read_line_number).max();
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
        "Grep" | "Glob" => {
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
                        .filter_map(|l| grep_line_number(l, &f.path))
                        .collect();
                    if shown.is_empty() {
                        return None;
                    }
                    f.lines = ranges(shown);
                    Some(f)
                })
                .collect()
        }
        _ => seen,
    }
}

/// The line number of a Read output line (`    12\ttext`).
fn read_line_number(line: &str) -> Option<u32> {
    let (number, _) = line.split_once('\t')?;
    number.trim_start().parse().ok()
}

/// The line number of a Grep content line of `path` (`path:12:text` or, for context, `path-12-text`).
pub(crate) fn grep_line_number(line: &str, path: &str) -> Option<u32> {
    let rest = line.strip_prefix(path)?;
    let sep = rest.chars().next().filter(|c| *c == ':' || *c == '-')?;
    let rest = &rest[1..];
    let (number, _) = rest.split_once(sep)?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse().ok()
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
        let out = narrow_to_text("Read", vec![file("a.rs", vec![[1, 10]])], kept);
        assert_eq!(out[0].lines, vec![[1, 3]]);
        let none = narrow_to_text("Read", vec![file("a.rs", vec![[1, 10]])], "… [truncated]");
        assert!(none[0].lines.is_empty(), "nothing numbered is left");
    }

    #[test]
    fn a_cut_grep_keeps_only_the_lines_and_files_left() {
        let kept =
            "src/a-b.rs-3-ctx\nsrc/a-b.rs:4:hit\n--\nsrc/c.rs:10:hit\n… [truncated: 5 more lines]";
        let out = narrow_to_text(
            "Grep",
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
        let out = narrow_to_text(
            "Glob",
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
