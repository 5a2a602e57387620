// Reusing the parse of resent messages (the subtree memo under
// json::Document, the parsed-message memo above it) changes how fast a body
// parses, never what it parses to: every request of every trajectory, in
// order (each resends what the memos hold), and every recorded request of
// every format, parses with them exactly as without them (every node, the
// view, sources, slots), also with the same messages at other offsets and
// node indices, and an edit writes back the same bytes either way.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <cstring>

#include "../pruning/pruning_support.hpp"
#include "bodies.hpp"
#include "providers/parsed_message_memo.hpp"
#include "providers/request.hpp"
#include "providers/route.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
namespace json = td::json;
using namespace td::providers::test;

namespace {

bool same_slot(const TextSlot& a, const TextSlot& b) {
  const bool keys = (a.key == nullptr) == (b.key == nullptr) && (a.key == nullptr || std::strcmp(a.key, b.key) == 0);
  return a.kind == b.kind && a.begin == b.begin && a.end == b.end && keys && a.object_empty == b.object_empty;
}

bool same_node(const json::Node& a, const json::Node& b) {
  return a.begin == b.begin && a.end == b.end && a.key_begin == b.key_begin && a.key_end == b.key_end &&
         a.first == b.first && a.next == b.next && a.count == b.count && a.type == b.type && a.escaped == b.escaped &&
         a.key_escaped == b.key_escaped;
}

void check_same(const ParsedRequest& a, const ParsedRequest& b) {
  const auto& na = a.doc.nodes();
  const auto& nb = b.doc.nodes();
  REQUIRE(na.size() == nb.size());
  std::size_t differing = 0;
  for (std::size_t i = 0; i < na.size(); ++i) differing += !same_node(na[i], nb[i]);
  CHECK(differing == 0);
  CHECK(a.model == b.model);
  CHECK(a.stream == b.stream);
  CHECK(a.array == b.array);
  CHECK(a.system == b.system);
  CHECK(a.conversation.fixed_overhead_bytes == b.conversation.fixed_overhead_bytes);
  REQUIRE(a.conversation.messages.size() == b.conversation.messages.size());
  for (std::size_t i = 0; i < a.conversation.messages.size(); ++i) {
    INFO("message " << i);
    CHECK(td::pruning::test::dump(a.conversation.messages[i]) == td::pruning::test::dump(b.conversation.messages[i]));
  }
  REQUIRE(a.messages.size() == b.messages.size());
  for (std::size_t i = 0; i < a.messages.size(); ++i) {
    CHECK(a.messages[i].node == b.messages[i].node);
    CHECK(a.messages[i].first_part == b.messages[i].first_part);
    CHECK(a.messages[i].part_count == b.messages[i].part_count);
    CHECK(a.messages[i].system_field == b.messages[i].system_field);
  }
  REQUIRE(a.parts.size() == b.parts.size());
  for (std::size_t i = 0; i < a.parts.size(); ++i) {
    INFO("part source " << i);
    CHECK(a.parts[i].elem == b.parts[i].elem);
    CHECK(a.parts[i].field == b.parts[i].field);
    CHECK(same_slot(a.parts[i].slot, b.parts[i].slot));
  }
}

// Edits the first editable part of every third message the same way in both
// views; the bodies they write must be equal.
void check_same_write(ParsedRequest a, ParsedRequest b, std::string_view body) {
  for (std::size_t i = 0; i < a.conversation.messages.size(); i += 3) {
    auto& ma = a.conversation.messages[i];
    auto& mb = b.conversation.messages[i];
    for (std::size_t k = 0; k < ma.parts.size(); ++k) {
      if (!ma.parts[k].editable) continue;
      td::pruning::set_text(ma, ma.parts[k], "[edited " + std::to_string(i) + "]");
      td::pruning::set_text(mb, mb.parts[k], "[edited " + std::to_string(i) + "]");
      break;
    }
  }
  const WriteOutcome wa = write(a, body), wb = write(b, body);
  REQUIRE(wa.ok);
  REQUIRE(wb.ok);
  CHECK(wa.body == wb.body);
}

std::string path_of(std::string_view uri) {
  auto scheme = uri.find("://");
  return std::string(uri.substr(uri.find('/', scheme == std::string_view::npos ? 0 : scheme + 3)));
}

}  // namespace

TEST_CASE("parse reuse: every recorded request of every format, again and shifted, as without it") {
  const auto files = fixture_files("wire", ".request.json");
  REQUIRE(files.size() >= 25);
  ParsedMessageMemo memo;
  std::size_t checked = 0, spliced = 0;
  for (const auto& file : files) {
    const std::string text = fixture(file);
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    REQUIRE(!d.HasParseError());
    const auto route = chat_route("POST", path_of(d["uri"].GetString()));
    REQUIRE(route.has_value());
    for (Style style : {Style::Compact, Style::Pretty, Style::PythonAscii}) {
      const std::string body = serialize(d["body"], style);
      const std::string shifted =
          "{\"zz_first\":[\"" + std::string(37, 'z') + "\",{}]," + body.substr(body.find('{') + 1);
      for (const std::string* b : {&body, &body, &shifted}) {  // the second time from the memos
        INFO(file << " style " << int(style));
        ParseOutcome with = parse(route->api, *b, &memo);
        if (with.request) spliced += with.request->spliced.size();
        ParseOutcome without = parse(route->api, *b);
        REQUIRE(with.request);
        REQUIRE(without.request);
        check_same(*with.request, *without.request);
        ++checked;
      }
    }
  }
  CHECK(checked >= 225);
  CHECK(spliced >= 225);                // parsed again, elements are copied into the Document, not parsed
  CHECK(memo.spliced_members() >= 20);  // and so are tool definitions
}

TEST_CASE("parse reuse: our bodies for each format (cache_control breakpoints, every part kind)") {
  struct Case {
    const char* file;
    Api format;
  };
  for (Case c :
       {Case{"providers/openai-chat.json", Api::openai_chat}, Case{"providers/anthropic.json", Api::anthropic},
        Case{"providers/gemini.json", Api::gemini}, Case{"providers/openai-responses.json", Api::openai_responses}}) {
    const std::string body = fixture(c.file);
    const std::string shifted = "{\"zz_first\":{\"a\":[]}," + body.substr(body.find('{') + 1);
    ParsedMessageMemo memo;
    const std::string* bodies[] = {&body, &body, &shifted};
    for (int pass = 0; pass < 3; ++pass) {
      const std::string* b = bodies[pass];
      INFO(c.file << " pass " << pass);
      ParseOutcome with = parse(c.format, *b, &memo);
      ParseOutcome without = parse(c.format, *b);
      REQUIRE(with.request);
      REQUIRE(without.request);
      check_same(*with.request, *without.request);
      // Parsed again, the body's elements are spliced into the Document.
      if (pass > 0) CHECK(!with.request->spliced.empty());
    }
    // Parsed again, the body's messages came from the memo.
    CHECK(memo.hits() > 0);
  }
}

TEST_CASE("parsed-message memo: every trajectory request parses and writes as without it") {
  const auto files = fixture_files("replay", ".json");
  REQUIRE(files.size() >= 20);
  const std::uint64_t hits_before = test_memo().hits();
  std::size_t requests = 0, messages = 0, spliced = 0;
  for (const auto& file : files) {
    const Trajectory t = load_trajectory(std::string(TD_FIXTURES) + "/" + file);
    for (std::size_t turn = 0; turn < t.assistant_at.size(); ++turn) {
      const std::size_t count = t.assistant_at[turn];
      if (count == 0) continue;
      const std::string body = chat_body(t, count);
      // The same messages further on: another member first moves every
      // message's bytes and node indices.
      const std::string shifted =
          "{\"user\":\"" + std::string(turn * 7 + 1, 'u') + "\",\"metadata\":{\"a\":[1,2]}," + body.substr(1);
      for (const std::string* b : {&body, &shifted}) {
        INFO(t.id << " request " << turn << (b == &shifted ? " shifted" : ""));
        ParsedRequest with = parse_ok(Api::openai_chat, *b, t.id);
        spliced += with.spliced.size();
        ParseOutcome without = parse(Api::openai_chat, *b);
        REQUIRE(without.request);
        check_same(with, *without.request);
        if (turn % 4 == 0) check_same_write(std::move(with), std::move(*without.request), *b);
        messages += count;
      }
      ++requests;
    }
  }
  CHECK(requests > 1000);
  // Most messages of a request were in the one before it.
  CHECK(test_memo().hits() - hits_before > messages / 2);
  CHECK(spliced > messages / 2);  // and most were not even parsed
}

TEST_CASE(
    "spliced elements: a guess whose bytes changed, ran past the body or is followed by junk parses as without it") {
  const std::string tool =
      std::string("{\"role\":\"tool\",\"tool_call_id\":\"call_guess\",\"content\":\"") + std::string(300, 'x');
  const std::string element = tool + "\"}";
  auto body_with = [](const std::string& el, const std::string& after = "]}") {
    return "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}," + el + after;
  };
  const std::string base = body_with(element);
  ParsedMessageMemo memo;
  REQUIRE(parse(Api::openai_chat, base, &memo).request);  // remembered, with its guess
  const ParseOutcome again = parse(Api::openai_chat, base, &memo);
  REQUIRE(again.request);
  CHECK(again.request->spliced.size() == 2);
  const std::vector<std::string> variants = {
      body_with(tool + "y\"}"),                            // the same first bytes, one byte longer
      body_with(tool.substr(0, tool.size() - 1) + "\"}"),  // one shorter
      body_with(tool + "\",\"name\":\"n\"}"),              // the known bytes, then more members
      body_with(element, "]"),                             // the object not closed
      body_with(element, "x]}"),                           // junk after the element
      body_with(element, ""),                              // the body ends right after it
      body_with(tool),                                     // the body ends inside it
  };
  for (const std::string& v : variants) {
    INFO(v.substr(v.size() - 40));
    const ParseOutcome with = parse(Api::openai_chat, v, &memo);
    const ParseOutcome without = parse(Api::openai_chat, v);
    REQUIRE(with.request.has_value() == without.request.has_value());
    CHECK(with.error == without.error);
    if (with.request) check_same(*with.request, *without.request);
  }
}

TEST_CASE("spliced elements: outputs that begin alike are each spliced on the next request") {
  // Agents' outputs often share their first hundred-odd bytes (Claude Code's
  // "The file … has been updated"); sharing a guess, they took it from each
  // other and were parsed on every request.
  const std::string alike(200, 'u');
  auto tool = [&](const char* id, const std::string& rest) {
    return "{\"role\":\"tool\",\"content\":\"The file src/app.py has been updated." + alike + rest +
           "\",\"tool_call_id\":\"" + id + "\"}";
  };
  std::string body = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}";
  for (int k = 0; k < 6; ++k) body += "," + tool(("call_" + std::to_string(k)).c_str(), std::string(64, char('a' + k)));
  body += "]}";
  ParsedMessageMemo memo;
  REQUIRE(parse(Api::openai_chat, body, &memo).request);
  const ParseOutcome again = parse(Api::openai_chat, body, &memo);
  REQUIRE(again.request);
  CHECK(again.request->spliced.size() == 7);
  check_same(*again.request, *parse(Api::openai_chat, body).request);
}

TEST_CASE("escaped texts: a pruned form written again comes from the memo, the same bytes") {
  std::string body = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}";
  for (int k = 0; k < 4; ++k)
    body += ",{\"role\":\"tool\",\"content\":\"out " + std::to_string(k) + "\",\"tool_call_id\":\"c" +
            std::to_string(k) + "\"}";
  body += "]}";
  // Long enough to be kept, with what JSON must escape: quotes, a backslash,
  // a line break, a control character, and UTF-8 left as it is.
  auto form = [](std::size_t k) {
    return "[… t1a2b3c4d:2-40 hidden]\n\"quoted\" C:\\path \x01 été " + std::to_string(k) + std::string(300, 'x');
  };
  auto write_edited = [&](ParsedMessageMemo* memo) {
    ParseOutcome o = parse(Api::openai_chat, body, memo);
    REQUIRE(o.request);
    auto& msgs = o.request->conversation.messages;
    for (std::size_t i = 1; i < msgs.size(); ++i) td::pruning::set_text(msgs[i], msgs[i].parts[0], form(i % 2));
    const WriteOutcome w = write(*o.request, body);
    REQUIRE(w.ok);
    return w.body;
  };
  const std::string plain = write_edited(nullptr);
  CHECK(plain.find("\\\"quoted\\\" C:\\\\path \\u0001 été") != std::string::npos);
  ParsedMessageMemo memo;
  CHECK(write_edited(&memo) == plain);
  const std::uint64_t hits = memo.escaped_hits();
  CHECK(hits == 2);  // four parts, two texts: each escaped once
  CHECK(write_edited(&memo) == plain);
  CHECK(memo.escaped_hits() == hits + 4);
}
