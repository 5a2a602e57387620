// The acceptance test of the exact encoders: every case of cases.jsonl
// (reference counts and ids from tiktoken 1.0.22 encode_ordinary) must match.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pruning/tokenizer/encoding.hpp"

using namespace td::tok;

namespace {

struct Case {
  std::string text, tag;
  std::uint64_t o200k = 0, cl100k = 0;
  std::vector<std::uint32_t> o200k_ids, cl100k_ids;
  bool has_ids = false;
};

std::vector<Case> load_cases() {
  std::ifstream in(TD_FIXTURES "/tokenizer/cases.jsonl", std::ios::binary);
  REQUIRE(in.good());
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    REQUIRE_FALSE(d.HasParseError());
    Case c;
    c.text.assign(d["text"].GetString(), d["text"].GetStringLength());
    c.tag = d["tag"].GetString();
    c.o200k = d["o200k_base"].GetUint64();
    c.cl100k = d["cl100k_base"].GetUint64();
    if (d.HasMember("o200k_ids")) {
      c.has_ids = true;
      for (auto& v : d["o200k_ids"].GetArray()) c.o200k_ids.push_back(v.GetUint());
      for (auto& v : d["cl100k_ids"].GetArray()) c.cl100k_ids.push_back(v.GetUint());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

void check_all(EncodingId id) {
  static const std::vector<Case> cases = load_cases();
  REQUIRE(cases.size() == 521);
  const Encoding& enc = Encoding::get(id);
  const bool o200k = id == EncodingId::O200kBase;
  std::size_t equal = 0, ids_checked = 0;
  for (const Case& c : cases) {
    const std::uint64_t want = o200k ? c.o200k : c.cl100k;
    const std::uint64_t got = enc.count(c.text);
    INFO("tag=" << c.tag << " text=" << c.text.substr(0, 120));
    CHECK(got == want);
    equal += got == want;
    auto ids = enc.encode(c.text);
    CHECK(ids.size() == got);
    if (c.has_ids) {
      CHECK(ids == (o200k ? c.o200k_ids : c.cl100k_ids));
      ++ids_checked;
    }
  }
  MESSAGE(enc.name() << ": " << equal << "/" << cases.size() << " counts equal, ids checked on " << ids_checked);
  CHECK(ids_checked == 100);
}

}  // namespace

TEST_CASE("o200k_base equals tiktoken on every case of cases.jsonl") { check_all(EncodingId::O200kBase); }
TEST_CASE("cl100k_base equals tiktoken on every case of cases.jsonl") { check_all(EncodingId::Cl100kBase); }
