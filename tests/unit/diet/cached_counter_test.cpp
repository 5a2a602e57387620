#include <doctest/doctest.h>

#include <string>

#include "diet/cached_counter.hpp"

using namespace td::diet;

namespace {

// Counts bytes and how often it was asked.
class Probe final : public td::pruning::TokenCounter {
 public:
  explicit Probe(std::uint64_t salt) : salt_(salt) {}
  std::uint64_t count(std::string_view text) const override {
    ++calls;
    return text.size();
  }
  std::uint64_t cache_salt() const override { return salt_; }
  mutable int calls = 0;

 private:
  std::uint64_t salt_;
};

}  // namespace

TEST_CASE("cached counter: a text is counted once, then looked up") {
  td::tok::CountCache cache(1024);
  Probe inner(42);
  CachedCounter counter(inner, cache);
  const std::string long_text(500, 'x');
  CHECK(counter.count(long_text) == 500);
  CHECK(counter.count(long_text) == 500);
  CHECK(inner.calls == 1);
  CHECK(counter.count(long_text + "y") == 501);
  CHECK(inner.calls == 2);
  // Short texts are not worth a hash.
  counter.count("short");
  counter.count("short");
  CHECK(inner.calls == 4);
  // Another salt (another tokenizer) never sees these counts.
  Probe other(43);
  CachedCounter other_counter(other, cache);
  CHECK(other_counter.count(long_text) == 500);
  CHECK(other.calls == 1);
}

TEST_CASE("cached counter: counters that drift (salt 0) are never cached") {
  td::tok::CountCache cache(1024);
  Probe inner(0);
  CachedCounter counter(inner, cache);
  const std::string long_text(500, 'x');
  counter.count(long_text);
  counter.count(long_text);
  CHECK(inner.calls == 2);
}
