// A Pratt parser for the expression language (docs/expressions.md): one function per prefix form
// and a loop over infix operators by binding power. Levels, loosest first: or, and, not,
// comparisons (no chains), + −, × /, unary −, ^ (right-associative; its right side may start
// with a unary −), then the postfix .NAME and [INT].
#include <fmt/format.h>

#include "twobody/detail/expr/syntax.hpp"

namespace twobody::expr {

namespace {

// Limits that keep every recursive pass (parser, graph builder, printers, destructors) well
// inside a thread's stack: a left-nested chain of n operators is n levels deep for all but the
// parser, and a hand-written pair function is a few hundred characters.
constexpr std::size_t kMaxText = 4096;
constexpr int kMaxNesting = 200;

constexpr int kOr = 1, kAnd = 2, kNot = 3, kCompare = 4, kSum = 5, kProduct = 6, kUnary = 7, kPower = 8, kPostfix = 9;

bool is_comparison(TokenKind k) {
  return k == TokenKind::Less || k == TokenKind::LessEq || k == TokenKind::Greater || k == TokenKind::GreaterEq ||
         k == TokenKind::Equal || k == TokenKind::NotEqual;
}

bool is_keyword(const std::string& s) { return s == "and" || s == "or" || s == "not" || s == "if"; }

class Parser {
 public:
  explicit Parser(const Source& src) : src_(src), tokens_(lex_checked(src)) {}

  std::unique_ptr<Syntax> whole() {
    if (peek().kind == TokenKind::End) fail_at(src_, peek().column, "the expression is empty");
    auto e = expression(0);
    if (peek().kind != TokenKind::End) {
      if (peek().kind == TokenKind::RParen) fail_at(src_, peek().column, "unmatched ')'");
      fail_at(src_, peek().column, fmt::format("expected an operator or the end, found {}", describe(peek())));
    }
    return e;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_++]; }
  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::End) return "the end";
    return fmt::format("'{}'", t.text);
  }
  void expect(TokenKind k, const char* what) {
    if (peek().kind != k) fail_at(src_, peek().column, fmt::format("expected {}, found {}", what, describe(peek())));
    ++pos_;
  }
  static std::unique_ptr<Syntax> node(SyntaxKind kind, std::string text, int column) {
    auto s = std::make_unique<Syntax>();
    s->kind = kind;
    s->text = std::move(text);
    s->column = column;
    s->start = column;
    return s;
  }

  // The binding power of the infix or postfix operator at `t` (0: none).
  static int infix_power(const Token& t) {
    switch (t.kind) {
      case TokenKind::Plus:
      case TokenKind::Minus: return kSum;
      case TokenKind::Star:
      case TokenKind::Slash: return kProduct;
      case TokenKind::Caret: return kPower;
      case TokenKind::Dot:
      case TokenKind::LBracket: return kPostfix;
      case TokenKind::Name:
        if (t.text == "or") return kOr;
        if (t.text == "and") return kAnd;
        return 0;
      default: return is_comparison(t.kind) ? kCompare : 0;
    }
  }

  static std::vector<Token> lex_checked(const Source& src) {
    if (src.text.size() > kMaxText)
      fail_at(src, static_cast<int>(kMaxText) + 1, fmt::format("the text is longer than {} characters", kMaxText));
    return lex(src);
  }

  std::unique_ptr<Syntax> expression(int min_power) {
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } depth{++depth_};
    if (depth_ > kMaxNesting) fail_at(src_, peek().column, fmt::format("nested more than {} deep", kMaxNesting));
    auto left = prefix();
    for (;;) {
      const Token& t = peek();
      const int power = infix_power(t);
      if (power == 0 || power <= min_power) {
        // A name or number right after an operand is a missing operator (`2 a`, `a.x b.x`).
        if (power == 0 && (t.kind == TokenKind::Name || t.kind == TokenKind::Number || t.kind == TokenKind::LParen) &&
            !is_keyword(t.text))
          fail_at(src_, t.column, fmt::format("expected an operator before {}", describe(t)));
        return left;
      }
      next();
      if (t.kind == TokenKind::Dot) {
        const Token& name = peek();
        if (name.kind != TokenKind::Name) fail_at(src_, name.column, "expected a column name after '.'");
        // The node points at its operand's start; the name's own column is kept for "no column".
        auto m = node(SyntaxKind::Member, name.text, left->column);
        m->index = name.column;
        m->start = left->start;
        next();
        m->children.push_back(std::move(left));
        left = std::move(m);
        continue;
      }
      if (t.kind == TokenKind::LBracket) {
        const Token& i = peek();
        if (i.kind != TokenKind::Number || !i.integer)
          fail_at(src_, i.column, "an index is a whole number written out (a[0], a[2])");
        if (i.number > 1e9) fail_at(src_, i.column, fmt::format("the index {} is too large", i.text));
        auto m = node(SyntaxKind::Index, i.text, t.column);
        m->index = static_cast<long>(i.number);
        m->start = left->start;
        next();
        expect(TokenKind::RBracket, "']'");
        m->children.push_back(std::move(left));
        left = std::move(m);
        continue;
      }
      auto b = node(SyntaxKind::Binary, t.text, t.column);
      // ^ is right-associative and its right side may be negated (2^-x); the others are left.
      auto right = t.kind == TokenKind::Caret ? expression(kUnary - 1) : expression(power);
      if (power == kCompare && is_comparison(peek().kind))
        fail_at(src_, peek().column, "comparisons do not chain: write 'x < y and y < z'");
      b->start = left->start;
      b->children.push_back(std::move(left));
      b->children.push_back(std::move(right));
      left = std::move(b);
    }
  }

  std::unique_ptr<Syntax> prefix() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Number: {
        auto n = node(SyntaxKind::Number, t.text, t.column);
        n->value = t.number;
        n->integer = t.integer;
        next();
        return n;
      }
      case TokenKind::Minus: {
        next();
        auto u = node(SyntaxKind::Unary, "-", t.column);
        u->children.push_back(expression(kUnary - 1));
        return u;
      }
      case TokenKind::LParen: {
        next();
        if (peek().kind == TokenKind::RParen) fail_at(src_, peek().column, "expected an expression inside '()'");
        auto e = expression(0);
        expect(TokenKind::RParen, "')'");
        return e;
      }
      case TokenKind::Name: {
        if (t.text == "not") {
          next();
          auto u = node(SyntaxKind::Unary, "not", t.column);
          u->children.push_back(expression(kNot - 1));
          return u;
        }
        if (t.text == "and" || t.text == "or")
          fail_at(src_, t.column, fmt::format("expected an operand before '{}'", t.text));
        auto n = node(SyntaxKind::Name, t.text, t.column);
        next();
        if (peek().kind != TokenKind::LParen) {
          if (t.text == "if") fail_at(src_, peek().column, "expected '(' after 'if': if(condition, then, else)");
          return n;
        }
        next();
        n->kind = SyntaxKind::Call;
        if (peek().kind == TokenKind::RParen) fail_at(src_, peek().column, fmt::format("{}() needs an argument", t.text));
        for (;;) {
          n->children.push_back(expression(0));
          if (peek().kind == TokenKind::Comma) {
            next();
            continue;
          }
          expect(TokenKind::RParen, "',' or ')'");
          break;
        }
        return n;
      }
      case TokenKind::End: fail_at(src_, t.column, "the expression ends where an operand was expected");
      default: fail_at(src_, t.column, fmt::format("expected an operand, found {}", describe(t)));
    }
  }

  const Source& src_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::unique_ptr<Syntax> parse_syntax(const Source& src) { return Parser(src).whole(); }

}  // namespace twobody::expr
