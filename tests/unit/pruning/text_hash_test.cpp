// text_hash(): one hash per text, kept in the part, dropped by set_text().
#include <doctest/doctest.h>

#include "pruning/text_hash.hpp"

using namespace td::pruning;

namespace {
td::tok::Hash128 fresh(const std::string& s) { return td::tok::hash128(s.data(), s.size()); }
}  // namespace

TEST_CASE("text_hash: computed once, carried by copies, renewed by set_text and by a resized text") {
  Message m;
  m.parts.push_back(Part{.kind = PartKind::ToolResult, .text = std::string(1000, 'a')});
  Part& p = m.parts[0];
  CHECK_FALSE(p.digest.valid);
  CHECK(text_hash(p) == fresh(p.text));
  CHECK(p.digest.valid);

  const Part copy = p;  // a plan's copy: hashed already, with the same text
  CHECK(copy.digest.valid);
  CHECK(text_hash(copy) == fresh(copy.text));

  // An edit of the same size: only set_text() can tell.
  set_text(m, p, std::string(1000, 'b'));
  CHECK_FALSE(p.digest.valid);
  CHECK(text_hash(p) == fresh(std::string(1000, 'b')));
  CHECK(text_hash(copy) == fresh(std::string(1000, 'a')));

  // A direct write that skipped set_text() but changed the size is caught.
  p.text = "short";
  CHECK(text_hash(p) == fresh("short"));
}
