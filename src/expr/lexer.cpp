// The expression language's tokens: numbers, names, brackets and twelve operators.
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "twobody/detail/expr/syntax.hpp"
#include "twobody/error.hpp"

namespace twobody::expr {

void fail_at(const Source& src, int column, const std::string& what) {
  // The caret line is indented like the text; a column past the end points just after it.
  throw_config(fmt::format("{}, column {}: {}\n  {}\n  {}^", src.label, column, what, src.text,
                           std::string(static_cast<std::size_t>(column > 1 ? column - 1 : 0), ' ')));
}

std::vector<Token> lex(const Source& src) {
  const std::string_view s = src.text;
  std::vector<Token> out;
  std::size_t i = 0;
  const auto is_name_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  const auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.column = static_cast<int>(i) + 1;
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      std::size_t j = i;
      bool integer = true;
      while (j < s.size() && is_digit(s[j])) ++j;
      if (j < s.size() && s[j] == '.') {
        integer = false;
        ++j;
        while (j < s.size() && is_digit(s[j])) ++j;
      }
      if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
        std::size_t k = j + 1;
        if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
        if (k >= s.size() || !is_digit(s[k])) fail_at(src, static_cast<int>(j) + 1, "a number's exponent needs digits");
        while (k < s.size() && is_digit(s[k])) ++k;
        integer = false;
        j = k;
      }
      if (j < s.size() && is_name_start(s[j]))
        fail_at(src, static_cast<int>(j) + 1, fmt::format("unexpected '{}' after the number", s[j]));
      t.kind = TokenKind::Number;
      t.text = std::string(s.substr(i, j - i));
      // from_chars rounds correctly (round to nearest), the same on every platform.
      const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.number);
      if (r.ec != std::errc() || !std::isfinite(t.number))
        fail_at(src, t.column, fmt::format("the number {} is not a finite double", t.text));
      t.integer = integer;
      i = j;
    } else if (is_name_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      t.kind = TokenKind::Name;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else {
      const char n = i + 1 < s.size() ? s[i + 1] : '\0';
      std::size_t len = 1;
      switch (c) {
        case '(': t.kind = TokenKind::LParen; break;
        case ')': t.kind = TokenKind::RParen; break;
        case '[': t.kind = TokenKind::LBracket; break;
        case ']': t.kind = TokenKind::RBracket; break;
        case ',': t.kind = TokenKind::Comma; break;
        case '.': t.kind = TokenKind::Dot; break;
        case '+': t.kind = TokenKind::Plus; break;
        case '-': t.kind = TokenKind::Minus; break;
        case '*':
          if (n == '*') fail_at(src, t.column, "write powers with '^' ('**' is not an operator)");
          t.kind = TokenKind::Star;
          break;
        case '/': t.kind = TokenKind::Slash; break;
        case '^': t.kind = TokenKind::Caret; break;
        case '<':
          t.kind = n == '=' ? TokenKind::LessEq : TokenKind::Less;
          len = n == '=' ? 2 : 1;
          break;
        case '>':
          t.kind = n == '=' ? TokenKind::GreaterEq : TokenKind::Greater;
          len = n == '=' ? 2 : 1;
          break;
        case '=':
          if (n != '=') fail_at(src, t.column, "'=' is not an operator: compare with '=='");
          t.kind = TokenKind::Equal;
          len = 2;
          break;
        case '!':
          if (n != '=') fail_at(src, t.column, "'!' is not an operator: negate with 'not', compare with '!='");
          t.kind = TokenKind::NotEqual;
          len = 2;
          break;
        case '&':
        case '|':
          fail_at(src, t.column, fmt::format("'{}' is not an operator: write '{}'", c, c == '&' ? "and" : "or"));
        default:
          if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            fail_at(src, t.column, fmt::format("unexpected byte 0x{:02x}", static_cast<unsigned char>(c)));
          fail_at(src, t.column, fmt::format("unexpected character '{}'", c));
      }
      t.text = std::string(s.substr(i, len));
      i += len;
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.column = static_cast<int>(s.size()) + 1;
  out.push_back(end);
  return out;
}

}  // namespace twobody::expr
