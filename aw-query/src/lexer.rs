//! Turns program text into tokens with positions (`docs/API.md` §6.2).
//!
//! The lexer knows nothing of the grammar; it only splits the text, drops
//! whitespace and comments, and decodes string and number literals.

use crate::error::{ErrorKind, Pos, QueryError};

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    Ident(String),
    Str(String),
    Number(f64),
    Bool(bool),
    None,
    If,
    Elif,
    Else,
    Return,
    /// `=`
    Assign,
    /// `==`
    Equal,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semicolon,
    /// End of the program; always the last token.
    End,
}

impl Token {
    /// How the token is named in syntax errors.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(name) => format!("name '{name}'"),
            Token::Str(_) => "a string".to_string(),
            Token::Number(_) => "a number".to_string(),
            Token::Bool(value) => format!("'{value}'"),
            Token::None => "'none'".to_string(),
            Token::If => "'if'".to_string(),
            Token::Elif => "'elif'".to_string(),
            Token::Else => "'else'".to_string(),
            Token::Return => "'return'".to_string(),
            Token::Assign => "'='".to_string(),
            Token::Equal => "'=='".to_string(),
            Token::Plus => "'+'".to_string(),
            Token::Minus => "'-'".to_string(),
            Token::Star => "'*'".to_string(),
            Token::Slash => "'/'".to_string(),
            Token::Percent => "'%'".to_string(),
            Token::LParen => "'('".to_string(),
            Token::RParen => "')'".to_string(),
            Token::LBracket => "'['".to_string(),
            Token::RBracket => "']'".to_string(),
            Token::LBrace => "'{'".to_string(),
            Token::RBrace => "'}'".to_string(),
            Token::Comma => "','".to_string(),
            Token::Colon => "':'".to_string(),
            Token::Semicolon => "';'".to_string(),
            Token::End => "the end of the program".to_string(),
        }
    }
}

/// Splits `text` into tokens, ending with [`Token::End`].
pub(crate) fn tokenize(text: &str) -> Result<Vec<(Token, Pos)>, QueryError> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        index: 0,
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    loop {
        lexer.skip_blanks();
        let pos = lexer.pos();
        let Some(c) = lexer.peek() else {
            tokens.push((Token::End, pos));
            return Ok(tokens);
        };
        let token = match c {
            '"' | '\'' => lexer.string(c)?,
            '0'..='9' => lexer.number(),
            'a'..='z' | 'A'..='Z' | '_' => lexer.word(),
            _ => {
                lexer.bump();
                match c {
                    '=' if lexer.peek() == Some('=') => {
                        lexer.bump();
                        Token::Equal
                    }
                    '=' => Token::Assign,
                    '+' => Token::Plus,
                    '-' => Token::Minus,
                    '*' => Token::Star,
                    '/' => Token::Slash,
                    '%' => Token::Percent,
                    '(' => Token::LParen,
                    ')' => Token::RParen,
                    '[' => Token::LBracket,
                    ']' => Token::RBracket,
                    '{' => Token::LBrace,
                    '}' => Token::RBrace,
                    ',' => Token::Comma,
                    ':' => Token::Colon,
                    ';' => Token::Semicolon,
                    other => {
                        return Err(QueryError::at(
                            ErrorKind::Syntax,
                            pos,
                            format!("unexpected character {other:?}"),
                        ))
                    }
                }
            }
        };
        tokens.push((token, pos));
    }
}

struct Lexer {
    chars: Vec<char>,
    index: usize,
    line: u32,
    column: u32,
}

impl Lexer {
    fn pos(&self) -> Pos {
        Pos::new(self.line, self.column)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.index).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.index += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// Whitespace and `#` comments.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek() {
            if c == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    /// A string quoted with `quote`. Only `\<quote>` is an escape; every
    /// other backslash stays in the text, so regexes such as `"\bvim\b"`
    /// reach the regex engine unchanged (`docs/API.md` §6.2).
    ///
    /// The string is the longest match of `"(\\"|[^"])*"`: it ends at the
    /// first quote without a backslash before it, or, if none follows, at
    /// the last escaped one (so `"\\"` is two backslashes).
    fn string(&mut self, quote: char) -> Result<Token, QueryError> {
        let start = self.pos();
        let open = self.index;
        let mut close = None;
        let mut at = open + 1;
        while at < self.chars.len() {
            if self.chars[at] == quote {
                close = Some(at);
                if self.chars[at - 1] != '\\' || at - 1 == open {
                    break;
                }
            }
            at += 1;
        }
        let Some(close) = close else {
            return Err(QueryError::at(
                ErrorKind::Syntax,
                start,
                "string is never closed",
            ));
        };
        let mut text = String::with_capacity(close - open);
        let mut at = open + 1;
        while at < close {
            let c = self.chars[at];
            if c == '\\' && at + 1 < close && self.chars[at + 1] == quote {
                text.push(quote);
                at += 2;
            } else {
                text.push(c);
                at += 1;
            }
        }
        while self.index <= close {
            self.bump();
        }
        Ok(Token::Str(text))
    }

    /// `[0-9]+(\.[0-9]*)?`: no sign, no exponent.
    fn number(&mut self) -> Token {
        let mut text = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            text.push(c);
            self.bump();
        }
        if self.peek() == Some('.') {
            text.push('.');
            self.bump();
            while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                text.push(c);
                self.bump();
            }
        }
        // Digits with an optional fraction always parse; huge ones become inf.
        Token::Number(text.parse().unwrap_or(f64::INFINITY))
    }

    fn word(&mut self) -> Token {
        let mut text = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            text.push(c);
            self.bump();
        }
        match text.as_str() {
            "if" => Token::If,
            "elif" => Token::Elif,
            "else" => Token::Else,
            "return" => Token::Return,
            "true" | "True" => Token::Bool(true),
            "false" | "False" => Token::Bool(false),
            "none" => Token::None,
            _ => Token::Ident(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<Token> {
        tokenize(text)
            .unwrap()
            .into_iter()
            .map(|(token, _)| token)
            .collect()
    }

    #[test]
    fn strings_keep_backslashes_except_before_the_quote() {
        let cases = [
            (r#""a\"b""#, r#"a"b"#),
            (r#""\bvim\b""#, r"\bvim\b"),
            (r#""\\""#, r"\\"),
            (r#""C:\""#, r"C:\"),
            (r#""a\"b\"""#, r#"a"b""#),
            (r"'it\'s'", "it's"),
            (r#"'say "hi"'"#, r#"say "hi""#),
            ("\"two\nlines;\"", "two\nlines;"),
        ];
        for (text, expected) in cases {
            assert_eq!(
                tokens(text),
                vec![Token::Str(expected.to_string()), Token::End],
                "{text}"
            );
        }
    }

    #[test]
    fn numbers_words_and_operators() {
        assert_eq!(
            tokens("007 1. 1.25 iffy if True none==x= # comment\n%"),
            vec![
                Token::Number(7.0),
                Token::Number(1.0),
                Token::Number(1.25),
                Token::Ident("iffy".into()),
                Token::If,
                Token::Bool(true),
                Token::None,
                Token::Equal,
                Token::Ident("x".into()),
                Token::Assign,
                Token::Percent,
                Token::End,
            ]
        );
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let positions: Vec<Pos> = tokenize("a =\n  \"é\" ;")
            .unwrap()
            .into_iter()
            .map(|(_, pos)| pos)
            .collect();
        assert_eq!(
            positions,
            vec![
                Pos::new(1, 1),
                Pos::new(1, 3),
                Pos::new(2, 3),
                Pos::new(2, 7),
                Pos::new(2, 8)
            ]
        );
    }

    #[test]
    fn bad_input_is_a_syntax_error_with_position() {
        let error = tokenize("a = 1;\n b = @").unwrap_err();
        assert_eq!(error.kind, ErrorKind::Syntax);
        assert_eq!(error.pos, Some(Pos::new(2, 6)));
        let error = tokenize("x = \"open").unwrap_err();
        assert_eq!(error.pos, Some(Pos::new(1, 5)));
        assert!(error.message.contains("never closed"), "{}", error.message);
    }
}
