#pragma once
// The expression language's tokens and syntax tree (docs/expressions.md states the grammar). The
// parser keeps every node's 1-based column, so a type error can put its caret under the operator
// or name at fault.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace twobody::expr {

// Where an expression came from ("pair function", "where predicate") and its text: every error
// names the label and the column and repeats the text with a caret under that column.
struct Source {
  std::string label;
  std::string text;
};

// Error(Config): "<label>, column <c>: <what>", the text, and a caret under column c.
[[noreturn]] void fail_at(const Source& src, int column, const std::string& what);

enum class TokenKind {
  Number, Name, LParen, RParen, LBracket, RBracket, Comma, Dot,
  Plus, Minus, Star, Slash, Caret, Less, LessEq, Greater, GreaterEq, Equal, NotEqual, End
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;     // as written
  double number = 0;    // Number: its value, correctly rounded
  bool integer = false;  // Number written without '.' or an exponent
  int column = 1;       // 1-based
};

// Splits the text into tokens; an unknown character or a malformed number fails at its column.
std::vector<Token> lex(const Source& src);

enum class SyntaxKind {
  Number,   // value
  Name,     // text
  Member,   // children[0] . text   (a.t)
  Index,    // children[0] [ index ]  (a[2])
  Call,     // text ( children... )   (sum(x), if(c, x, y))
  Unary,    // text: "-" or "not"
  Binary,   // text: the operator, "and", "or"
};

struct Syntax {
  SyntaxKind kind = SyntaxKind::Number;
  std::string text;
  double value = 0;
  bool integer = false;
  long index = 0;  // Index: the index; Member: the name's column
  int column = 1;  // the operator's or name's
  int start = 1;   // where the whole subexpression starts (its first operand)
  std::vector<std::unique_ptr<Syntax>> children;
};

// The syntax tree of the whole text (the grammar of docs/expressions.md), or Error(Config) at the
// first token that does not fit.
std::unique_ptr<Syntax> parse_syntax(const Source& src);

}  // namespace twobody::expr
