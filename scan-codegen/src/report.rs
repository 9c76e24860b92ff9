//! Errors of a scan source file (a `.scan` file, or the text given to [`crate::generate`]),
//! located by line and column and rendered the way a compiler prints them:
//!
//! ```text
//! src/rnn.scan:3:17: error: unknown function `tanhh`
//!         let h = tanhh(x);
//!                 ^^^^^
//! ```
//!
//! `file:line:column` (both 1-based, the column counted in characters), the message, the
//! source line, and carets under the span's columns (to the end of the line for a span
//! that runs over several lines). Every error of the file is kept, in the order the
//! compiler reported them.
//!
//! Locations come from the spans of the tokens the compiler parsed from the text
//! (proc-macro2's `span-locations`), so they must be collected on the thread that parsed
//! the text: [`Errors::from_syn`] is called right where the compiler returns.

use std::fmt;

/// Where an error is: 1-based line and column of its first and last character (the
/// end is exclusive: the column just after the span).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// One error: a message, and where it is when the error has a place in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceError {
    message: String,
    location: Option<Location>,
    /// The text of the source line the error starts on (empty without a location).
    line_text: String,
}

impl SourceError {
    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn location(&self) -> Option<Location> {
        self.location
    }

    /// Writes this error as `file:line:column: error: message`, the source line and a
    /// caret line.
    fn render(&self, file: &str, f: &mut fmt::Formatter) -> fmt::Result {
        let Some(loc) = self.location else {
            return writeln!(f, "{file}: error: {}", self.message);
        };
        writeln!(
            f,
            "{file}:{}:{}: error: {}",
            loc.line, loc.column, self.message
        )?;
        writeln!(f, "{}", self.line_text)?;
        let before = loc.column.saturating_sub(1);
        let line_chars = self.line_text.chars().count();
        let width = if loc.end_line == loc.line {
            loc.end_column.saturating_sub(loc.column)
        } else {
            line_chars.saturating_sub(before)
        }
        .max(1);
        // Keep tabs as tabs so that the carets line up under the text however tabs show.
        let pad: String = self
            .line_text
            .chars()
            .chain(std::iter::repeat(' '))
            .take(before)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        writeln!(f, "{pad}{}", "^".repeat(width))
    }
}

/// Every error of one source file. `Display` renders them all (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct Errors {
    file: String,
    errors: Vec<SourceError>,
}

impl Errors {
    /// The errors of a `syn::Error` (one or several combined), located in `source`, the text
    /// the tokens were parsed from, on this thread. A span that points nowhere in the text
    /// (the end of input, as syn reports it) is placed at the end of the text.
    pub fn from_syn(file: impl Into<String>, source: &str, error: syn::Error) -> Errors {
        let errors = error
            .into_iter()
            .map(|e| {
                let span = e.span();
                located(
                    source,
                    e.to_string(),
                    span.start(),
                    span.end(),
                    is_nowhere(span),
                )
            })
            .collect();
        Errors {
            file: file.into(),
            errors,
        }
    }

    /// A source text that does not even split into tokens (an unclosed delimiter or
    /// string, a stray character).
    pub fn from_lex(file: impl Into<String>, source: &str, error: proc_macro2::LexError) -> Errors {
        let span = error.span();
        let mut one = located(
            source,
            error.to_string(),
            span.start(),
            span.end(),
            is_nowhere(span),
        );
        one.message = lex_message(&one);
        Errors {
            file: file.into(),
            errors: vec![one],
        }
    }

    /// An error with no place in the source (a problem of the compiler itself).
    pub fn unlocated(file: impl Into<String>, message: impl Into<String>) -> Errors {
        Errors {
            file: file.into(),
            errors: vec![SourceError {
                message: message.into(),
                location: None,
                line_text: String::new(),
            }],
        }
    }

    /// The same errors, reported as in `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Errors {
        self.file = file.into();
        self
    }

    /// The file name the errors are reported in.
    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, SourceError> {
        self.errors.iter()
    }
}

impl<'a> IntoIterator for &'a Errors {
    type Item = &'a SourceError;
    type IntoIter = std::slice::Iter<'a, SourceError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for e in &self.errors {
            e.render(&self.file, f)?;
        }
        Ok(())
    }
}

/// The rendering, as `Display` gives it: a build script's `main` returning the error prints
/// it with `{:?}`, and it should read the same.
impl fmt::Debug for Errors {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Errors {}

/// What the lexer stopped at, said from the text there (proc-macro2's own message is
/// always "cannot parse string into token stream").
fn lex_message(error: &SourceError) -> String {
    let at: Vec<char> = match error.location {
        Some(loc) => error
            .line_text
            .chars()
            .skip(loc.column.saturating_sub(1))
            .take(2)
            .collect(),
        None => Vec::new(),
    };
    use crate::messages as msg;
    match at.as_slice() {
        ['"', ..] | ['r', '"' | '#', ..] | ['b', '"', ..] => msg::unterminated_string(),
        ['\'', ..] => msg::bad_char_literal(),
        ['/', '*', ..] => msg::unterminated_comment(),
        [c @ ('(' | '[' | '{'), ..] => msg::unclosed_delimiter(*c),
        [c @ (')' | ']' | '}'), ..] => msg::unexpected_closing(*c),
        [c, ..] if !c.is_whitespace() => msg::unexpected_character(*c),
        _ => msg::not_tokens(),
    }
}

/// The call-site span (syn's "end of input" errors): no text of the file behind it.
fn is_nowhere(span: proc_macro2::Span) -> bool {
    span.source_text().is_none()
}

fn located(
    source: &str,
    message: String,
    start: proc_macro2::LineColumn,
    end: proc_macro2::LineColumn,
    nowhere: bool,
) -> SourceError {
    let lines: Vec<&str> = source.lines().collect();
    let (line, column, end_line, end_column) = if nowhere {
        // The end of the text: after the last character of the last non-blank line.
        match lines.iter().rposition(|l| !l.trim().is_empty()) {
            Some(i) => {
                let len = lines[i].trim_end().chars().count();
                (i + 1, len, i + 1, len + 1)
            }
            None => (1, 0, 1, 1),
        }
    } else {
        // proc-macro2 lines are 1-based, columns 0-based.
        (start.line, start.column, end.line, end.column)
    };
    let line_text = line
        .checked_sub(1)
        .and_then(|i| lines.get(i))
        .map(|l| l.trim_end_matches('\r').to_string())
        .unwrap_or_default();
    SourceError {
        message,
        location: Some(Location {
            line: line.max(1),
            column: column + 1,
            end_line: end_line.max(1),
            end_column: end_column + 1,
        }),
        line_text,
    }
}
