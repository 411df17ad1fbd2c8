//! Whether a quote a result gives for a citation matches the cited line(s) on disk.
//!
//! Whitespace is ignored entirely (indentation, line breaks, spaces inside a line), so a quote
//! copied from a Read with other indentation, or a multi-line range joined onto one line, still
//! matches. The quote may be part of the cited text — part of one line, or a run of text across a
//! range's lines — but all of it must be there, in order: a quote of a different line, of code
//! outside the cited range, or with an elided middle (`…`) does not match.

/// Whether `quote` (whitespace ignored) occurs in `cited`, the cited lines as on disk.
pub fn quote_matches(quote: &str, cited: &str) -> bool {
    let q: String = quote.chars().filter(|c| !c.is_whitespace()).collect();
    if q.is_empty() {
        return true;
    }
    let text: String = cited.chars().filter(|c| !c.is_whitespace()).collect();
    text.contains(&q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_ignored_and_a_part_may_be_quoted() {
        let cited = "    if x > 0 {\n        return y;\n";
        assert!(quote_matches("if x > 0 {", cited));
        assert!(
            quote_matches("if x>0{ return y;", cited),
            "across the range"
        );
        assert!(quote_matches("return  y", cited), "part of a line");
        assert!(!quote_matches("if x > 1 {", cited));
        assert!(!quote_matches("return y; }", cited), "more than was cited");
        assert!(!quote_matches("if x … return y;", cited), "no elisions");
    }
}
