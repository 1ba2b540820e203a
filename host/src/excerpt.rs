//! Short excerpts of user input for error messages: an error line names the bad input, but a
//! 10 MB line must not become a 10 MB message. Shared by `host` and `trainer`.

use std::borrow::Cow;

/// How many characters of a bad input an error message quotes by default.
pub const EXCERPT_CHARS: usize = 80;

/// `text` cut to at most `max_chars` characters, with `...` appended when something was cut.
///
/// ```
/// assert_eq!(host::excerpt::excerpt("e2e4", 10), "e2e4");
/// assert_eq!(host::excerpt::excerpt("abcdefgh", 3), "abc...");
/// ```
pub fn excerpt(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}...", &text[..cut])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(excerpt("", 3), "");
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("abcd", 3), "abc...");
        assert_eq!(excerpt("ééééé", 2), "éé...");
        assert!(matches!(excerpt("short", 80), Cow::Borrowed(_)));
    }
}
