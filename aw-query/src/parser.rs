//! Recursive-descent parser for the grammar of `docs/API.md` §6.3.
//!
//! Nesting (parentheses, lists, dicts, call arguments, `if` blocks) is
//! bounded by [`MAX_DEPTH`] so no input can overflow the stack, here or in
//! the interpreter that walks the tree. Operator chains are kept flat and
//! need no bound.

use crate::ast::{mark_last_uses, BinOp, Expr, ExprKind, Stmt};
use crate::error::{ErrorKind, Pos, QueryError};
use crate::keys::mark_projections;
use crate::lexer::{tokenize, Token};
use crate::limits::MAX_DEPTH;
use crate::value::Value;

/// Parses a whole program and marks last uses of variables.
pub(crate) fn parse(text: &str) -> Result<Vec<Stmt>, QueryError> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        index: 0,
        depth: 0,
    };
    let mut program = Vec::new();
    while parser.peek() != &Token::End {
        if parser.peek() == &Token::Semicolon {
            parser.index += 1;
            continue;
        }
        program.push(parser.statement()?);
    }
    mark_last_uses(&mut program);
    mark_projections(&mut program);
    Ok(program)
}

struct Parser {
    tokens: Vec<(Token, Pos)>,
    index: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        // The token list always ends with `End`, and `advance` never moves past it.
        &self.tokens[self.index].0
    }

    fn peek_at(&self, offset: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.index + offset).min(last)].0
    }

    fn pos(&self) -> Pos {
        self.tokens[self.index].1
    }

    fn advance(&mut self) -> (Token, Pos) {
        let (token, pos) = self.tokens[self.index].clone();
        if token != Token::End {
            self.index += 1;
        }
        (token, pos)
    }

    fn unexpected(&self, wanted: &str) -> QueryError {
        QueryError::at(
            ErrorKind::Syntax,
            self.pos(),
            format!("expected {wanted}, found {}", self.peek().describe()),
        )
    }

    fn expect(&mut self, token: Token) -> Result<Pos, QueryError> {
        if self.peek() == &token {
            Ok(self.advance().1)
        } else {
            Err(self.unexpected(&token.describe()))
        }
    }

    /// Enters one level of nesting, failing past [`MAX_DEPTH`].
    fn descend(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(QueryError::at(
                ErrorKind::TooDeep,
                self.pos(),
                format!("the program nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn statement(&mut self) -> Result<Stmt, QueryError> {
        if self.peek() == &Token::If {
            return self.if_chain();
        }
        let returns = self.peek() == &Token::Return;
        if returns {
            self.advance();
        }
        let target = match (self.peek(), self.peek_at(1)) {
            (Token::Ident(name), Token::Assign) => {
                let name = name.clone();
                self.advance();
                self.advance();
                Some(name)
            }
            _ => None,
        };
        let expr = self.expr()?;
        if self.peek() != &Token::Semicolon {
            return Err(self.unexpected("';' or an operator"));
        }
        self.advance();
        Ok(Stmt::Simple {
            returns,
            target,
            expr,
            projection: None,
        })
    }

    fn if_chain(&mut self) -> Result<Stmt, QueryError> {
        self.advance();
        let mut branches = vec![(self.expr()?, self.block()?)];
        let mut otherwise = Vec::new();
        loop {
            match self.peek() {
                Token::Elif => {
                    self.advance();
                    branches.push((self.expr()?, self.block()?));
                }
                Token::Else => {
                    self.advance();
                    otherwise = self.block()?;
                    break;
                }
                _ => break,
            }
        }
        Ok(Stmt::If {
            branches,
            otherwise,
        })
    }

    fn block(&mut self) -> Result<Vec<Stmt>, QueryError> {
        self.expect(Token::LBrace)?;
        self.descend()?;
        let mut statements = Vec::new();
        loop {
            match self.peek() {
                Token::RBrace => break,
                Token::Semicolon => {
                    self.advance();
                }
                Token::End => return Err(self.unexpected("'}'")),
                _ => statements.push(self.statement()?),
            }
        }
        self.advance();
        self.depth -= 1;
        Ok(statements)
    }

    /// `expr = operand { BINOP operand }`, flat.
    fn expr(&mut self) -> Result<Expr, QueryError> {
        self.descend()?;
        let first = self.operand()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Token::Plus => BinOp::Add,
                Token::Minus => BinOp::Sub,
                Token::Star => BinOp::Mul,
                Token::Slash => BinOp::Div,
                Token::Percent => BinOp::Rem,
                Token::Equal => BinOp::Equal,
                _ => break,
            };
            let pos = self.advance().1;
            rest.push((op, pos, self.operand()?));
        }
        self.depth -= 1;
        if rest.is_empty() {
            return Ok(first);
        }
        let pos = first.pos;
        Ok(Expr {
            kind: ExprKind::Chain {
                first: Box::new(first),
                rest,
            },
            pos,
        })
    }

    /// A call, dict, list or atom.
    fn operand(&mut self) -> Result<Expr, QueryError> {
        let (token, pos) = self.advance();
        let kind = match token {
            Token::Ident(name) if self.peek() == &Token::LParen => {
                self.advance();
                let args = self.items(Token::RParen)?;
                ExprKind::Call { name, args }
            }
            Token::Ident(name) => ExprKind::Var {
                name,
                last_use: false,
            },
            Token::Number(number) => ExprKind::Literal(Value::Number(number)),
            Token::Str(text) => ExprKind::Literal(Value::string(text)),
            Token::Bool(value) => ExprKind::Literal(Value::Bool(value)),
            Token::None => ExprKind::Literal(Value::None),
            Token::LBracket => ExprKind::List(self.items(Token::RBracket)?),
            Token::LBrace => ExprKind::Dict(self.entries()?),
            Token::LParen => {
                let inner = self.expr()?;
                self.expect(Token::RParen)?;
                return Ok(Expr {
                    kind: inner.kind,
                    pos,
                });
            }
            other => {
                // Point at the offending token (`advance` stays on `End`).
                if other != Token::End {
                    self.index -= 1;
                }
                return Err(self.unexpected("a value"));
            }
        };
        Ok(Expr { kind, pos })
    }

    /// `[ expr { "," expr } ] close`, no trailing comma.
    fn items(&mut self, close: Token) -> Result<Vec<Expr>, QueryError> {
        let mut items = Vec::new();
        if self.peek() == &close {
            self.advance();
            return Ok(items);
        }
        loop {
            items.push(self.expr()?);
            if self.peek() == &Token::Comma {
                self.advance();
            } else {
                self.expect(close)?;
                return Ok(items);
            }
        }
    }

    /// `[ STRING ":" expr { "," STRING ":" expr } ] "}"`.
    fn entries(&mut self) -> Result<Vec<(String, Expr)>, QueryError> {
        let mut entries = Vec::new();
        if self.peek() == &Token::RBrace {
            self.advance();
            return Ok(entries);
        }
        loop {
            let key = match self.peek() {
                Token::Str(key) => key.clone(),
                _ => return Err(self.unexpected("a string key")),
            };
            self.advance();
            self.expect(Token::Colon)?;
            let value = self.expr()?;
            entries.push((key, value));
            if self.peek() == &Token::Comma {
                self.advance();
            } else {
                self.expect(Token::RBrace)?;
                return Ok(entries);
            }
        }
    }
}
