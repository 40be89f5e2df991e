//! The error type of the query language.
//!
//! Every failure of a query (lexing, parsing, evaluation, a transform, the
//! event source) becomes one [`QueryError`]: a [`ErrorKind`] a caller can
//! act on, the position in the program text where it happened, and a
//! message for a person. Mapping errors to HTTP responses is the server's
//! business, not this crate's.

use std::fmt;

/// A position in the program text: 1-based line and column (in characters).
///
/// The program is the request's `query` lines joined with `\n`, so `line` is
/// also the index (from 1) of the element of the request's `query` array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub column: u32,
}

impl Pos {
    /// The position at `line`, `column`.
    pub const fn new(line: u32, column: u32) -> Pos {
        Pos { line, column }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "line {}, column {}", self.line, self.column)
    }
}

/// What went wrong, in categories a caller can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not a program: an unexpected character or token, an
    /// unterminated string, a missing `;`.
    Syntax,
    /// A variable was read before being bound.
    UnknownVariable,
    /// A call names nothing bound.
    UnknownFunction,
    /// A call names a variable bound to something that is not a function.
    NotAFunction,
    /// A function got too many or too few arguments.
    ArgumentCount,
    /// An argument, operand or condition has the wrong type or value.
    Type,
    /// `query_bucket`, `query_bucket_eventcount` or `find_bucket` found no
    /// such bucket.
    NoSuchBucket,
    /// The event source failed for another reason (storage failure).
    Source,
    /// A regex does not compile, is too big, or needed too much
    /// backtracking on some text.
    Regex,
    /// A categorization or tagging rule is malformed (`docs/API.md` §8.1).
    Rule,
    /// `x / 0`.
    DivisionByZero,
    /// The program never binds `RETURN` (also an empty program).
    NoReturn,
    /// `RETURN` holds a function, which has no JSON form.
    ReturnedFunction,
    /// Nesting deeper than [`crate::limits::MAX_DEPTH`].
    TooDeep,
    /// A value larger than the limits of [`crate::limits`].
    TooLarge,
}

/// A failed query: what went wrong and where.
///
/// `Display` prints `message`, which already names the position, e.g.
/// `line 2, column 9: unknown function 'floood'`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct QueryError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Where, if the error belongs to a place in the program (an error of
    /// the whole program, such as a missing `RETURN`, has none).
    pub pos: Option<Pos>,
    /// Human-readable description, including the position.
    pub message: String,
}

impl QueryError {
    /// An error at `pos`; the message is prefixed with the position.
    pub fn at(kind: ErrorKind, pos: Pos, detail: impl fmt::Display) -> QueryError {
        QueryError {
            kind,
            pos: Some(pos),
            message: format!("{pos}: {detail}"),
        }
    }

    /// An error of the whole program, without position.
    pub fn whole(kind: ErrorKind, detail: impl fmt::Display) -> QueryError {
        QueryError {
            kind,
            pos: None,
            message: detail.to_string(),
        }
    }

    /// The message without its position: for a program the user did not
    /// write, whose lines and columns would mean nothing to them.
    pub fn detail(&self) -> &str {
        match self.pos {
            Some(pos) => self
                .message
                .strip_prefix(&format!("{pos}: "))
                .unwrap_or(&self.message),
            None => &self.message,
        }
    }

    /// Line of the error, if it has a position.
    pub fn line(&self) -> Option<u32> {
        self.pos.map(|pos| pos.line)
    }

    /// Column of the error, if it has a position.
    pub fn column(&self) -> Option<u32> {
        self.pos.map(|pos| pos.column)
    }
}

/// An error raised below the interpreter (in a transform or a value
/// operation) before it knows the position; the interpreter attaches the
/// position of the call or operator.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }

    pub fn at(self, pos: Pos) -> QueryError {
        QueryError::at(self.kind, pos, self.message)
    }
}
