// The pair-expression fuzz target (tests/fuzz/expression_fuzz.cpp) in the CPU suite, without
// libFuzzer: every corpus text, alone and as a --where predicate, then random mutations of them
// (characters inserted, deleted, replaced from the language's alphabet; two texts spliced). The
// target aborts on anything but a parse or an Error(Config), so a failure is a crash here.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "expression_corpus.hpp"
#include "test_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int feed(const std::string& s) { return LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }

std::vector<std::string> corpus_texts() {
  std::vector<std::string> texts;
  for (const auto& v : expression_corpus::valid()) texts.push_back(v.text);
  for (const auto& v : expression_corpus::invalid_from_file()) texts.push_back(v.text);
  return texts;
}

TEST(ExpressionFuzz, CorpusTexts) {
  const auto texts = corpus_texts();
  for (const std::string& t : texts) {
    EXPECT_EQ(feed(t), 0) << t;
    EXPECT_EQ(feed("a.x - b.x\t" + t), 0) << t;  // as the predicate
  }
}

TEST(ExpressionFuzz, RandomMutations) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const auto texts = corpus_texts();
  const std::string alphabet = "ab.xyzt[]0123()+-*/^<>=!,. \tdpheswqsumaxinotrfiflgepbs1e5$&|";
  const char* words[] = {"sum(", "dot(", "norm(", "mean(", "min(", "max(", "abs(", "sqrt(", "exp(", "log(", "pow(", "if(",
                         " and ", " or ", "not ", "a.x", "b.t", "a[2]", "b", "a", "d", "p", "w", "1e308", "-0", "^-3", ")"};
  for (int n = 0; n < 20000; ++n) {
    std::string s = texts[rng() % texts.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 5) {
        case 0: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        case 1: if (at < s.size()) s.erase(at, 1 + rng() % 3); break;
        case 2: if (at < s.size()) s[at] = alphabet[rng() % alphabet.size()]; break;
        case 3: s.insert(at, words[rng() % std::size(words)]); break;
        default: {
          const std::string& o = texts[rng() % texts.size()];
          s = s.substr(0, at) + o.substr(rng() % (o.size() + 1));
        }
      }
    }
    ASSERT_EQ(feed(s), 0) << s;
  }
}

}  // namespace
