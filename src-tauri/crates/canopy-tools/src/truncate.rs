//! Caps tool output so one call cannot flood the model's context, and always says how much was left
//! out, so the model knows to narrow its query instead of believing it saw everything.

/// Keeps at most `max_lines` lines and `max_bytes` bytes of `text` (cut at a line or char boundary)
/// and appends a marker naming what was dropped.
pub fn cap_text(text: &str, max_lines: usize, max_bytes: usize) -> String {
    let mut end = 0;
    let mut lines = 0;
    for line in text.split_inclusive('\n') {
        if lines == max_lines || end + line.len() > max_bytes {
            break;
        }
        end += line.len();
        lines += 1;
    }
    if end == text.len() {
        return text.to_string();
    }
    if lines == 0 {
        // A single overlong first line: cut inside it rather than show nothing.
        end = floor_char_boundary(text, max_bytes);
    }
    let rest = &text[end..];
    let mut out = text[..end].to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker(count_lines(rest), rest.len() as u64));
    out
}

/// Counts lines the way an editor would: a trailing newline does not start another line.
pub fn count_lines(text: &str) -> u64 {
    if text.is_empty() {
        0
    } else {
        text.split_inclusive('\n').count() as u64
    }
}

/// The marker appended where output was cut.
pub fn marker(lines: u64, bytes: u64) -> String {
    format!(
        "… [truncated: {lines} more line{} / {} not shown]",
        if lines == 1 { "" } else { "s" },
        human_bytes(bytes)
    )
}

/// `1234` → `1.2 KB`; bytes below 1 KB stay exact.
pub fn human_bytes(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / KB / KB)
    }
}

/// Cuts one overlong line to `max_chars` characters, marking how many were dropped.
pub fn cap_line(line: &str, max_chars: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max_chars) {
        None => std::borrow::Cow::Borrowed(line),
        Some((cut, _)) => {
            let dropped = line[cut..].chars().count();
            std::borrow::Cow::Owned(format!(
                "{}… [line truncated: {dropped} more chars]",
                &line[..cut]
            ))
        }
    }
}

/// The largest index `<= index` that is a char boundary of `text`.
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut i = index;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(cap_text("a\nb\n", 10, 100), "a\nb\n");
    }

    #[test]
    fn line_cap_says_how_many_lines_were_dropped() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let out = cap_text(&text, 3, 10_000);
        assert!(out.starts_with("line 1\nline 2\nline 3\n"), "{out}");
        assert!(!out.contains("line 4"));
        assert!(out.contains("[truncated: 7 more lines"), "{out}");
    }

    #[test]
    fn byte_cap_reports_kilobytes() {
        let text = "x".repeat(99) + "\n";
        let text = text.repeat(50);
        let out = cap_text(&text, 1000, 1000);
        assert!(
            out.contains("[truncated: 40 more lines / 3.9 KB not shown]"),
            "{out}"
        );
    }

    #[test]
    fn overlong_single_line_is_cut_on_a_char_boundary() {
        let text = "é".repeat(100);
        let out = cap_text(&text, 10, 11);
        assert!(out.starts_with("ééééé\n"), "{out}");
        assert!(out.contains("[truncated: 1 more line"), "{out}");
    }

    #[test]
    fn cap_line_counts_dropped_chars() {
        assert_eq!(
            cap_line("abcdef", 4),
            "abcd… [line truncated: 2 more chars]"
        );
        assert_eq!(cap_line("abc", 4), "abc");
    }
}
