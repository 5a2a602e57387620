#include "roundtrip.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "trajectory_budget.hpp"

namespace td::providers::test {

using pruning::Conversation;
using pruning::Message;
using pruning::Part;
using pruning::PartKind;

const std::string kTricky =
    "edited \"quoted\" \\ back\\slash\nnew line\ttab \x01\x1f ctl, caf\xC3\xA9 \xE2\x9C\x93 \xF0\x9D\x84\x9E "
    "\xE2\x80\xA8 </script> {\"json\": [1]}";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fixture(const std::string& relative) { return read_file(std::string(TD_FIXTURES) + "/" + relative); }

std::vector<std::string> fixture_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TD_FIXTURES) + "/" + dir)) {
    std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        (dir != "replay" || td::fixtures::trajectory_in_budget(e.path())))
      out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

const char* kind_name(PartKind k) {
  switch (k) {
    case PartKind::Text:
      return "text";
    case PartKind::ToolCall:
      return "call";
    case PartKind::ToolResult:
      return "result";
    case PartKind::Thinking:
      return "thinking";
    case PartKind::Opaque:
      return "opaque";
  }
  return "?";
}

std::string part_summary(const Part& p) {
  std::string s = kind_name(p.kind);
  if (!p.id.empty()) s += "#" + p.id;
  if (!p.name.empty()) s += "(" + p.name + ")";
  if (!p.signature.empty()) s += "[signed]";
  if (p.is_error) s += "[error]";
  return s + "=" + p.text;
}

std::string parts_summary(const Message& m) {
  std::string s;
  for (const Part& p : m.parts) s += " | " + part_summary(p);
  return s;
}

// The message of `after` that sits where `index` was in `before` (system
// field messages first in both, as the parsers emit them).
const Message& nth(const Conversation& c, std::size_t i) {
  REQUIRE(i < c.messages.size());
  return c.messages[i];
}

std::string_view message_bytes(const ParsedRequest& r, const Message& m) {
  return r.doc.raw(r.messages[m.origin].node);
}

}  // namespace

std::vector<std::string> summary(const Conversation& c) {
  std::vector<std::string> out;
  for (const Message& m : c.messages) {
    if (m.removed) continue;
    std::string s = std::to_string(static_cast<int>(m.role));
    if (m.system_field) s += "S";
    out.push_back(s + parts_summary(m));
  }
  return out;
}

ParsedMessageMemo& test_memo() {
  static ParsedMessageMemo memo;
  return memo;
}

ParsedRequest parse_ok(Api f, std::string_view body, const std::string& label) {
  INFO(label);
  ParseOutcome p = parse(f, body, &test_memo());
  INFO("parse error: " << p.error);
  REQUIRE(p.request.has_value());
  WriteOutcome w = write(*p.request, body);
  CHECK(w.ok);
  CHECK_FALSE(w.changed);
  CHECK(w.body.empty());
  return std::move(*p.request);
}

bool check_edit(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label) {
  INFO(label << " edit message " << index);
  Message& m = r.conversation.messages[index];
  auto it = std::find_if(m.parts.begin(), m.parts.end(),
                         [](const Part& p) { return p.editable && p.kind != PartKind::Opaque; });
  if (it == m.parts.end()) return false;
  const std::size_t part_index = it - m.parts.begin();
  const Message saved = m;
  const PartSource& src = r.parts[r.messages[m.origin].first_part + it->origin];
  const std::string text = src.slot.kind == TextSlot::Kind::JsonObject
                               ? std::string("{\"edited\": \"yes \\\"quoted\\\" \xE2\x9C\x93\", \"n\": [1, 2.5e3]}")
                               : kTricky;
  pruning::set_text(m, *it, text);
  WriteOutcome w = write(r, body);
  INFO("write error: " << w.error);
  REQUIRE(w.ok);
  CHECK(w.changed);
  const json::Node& node = r.doc.node(r.messages[m.origin].node);
  const std::size_t tail = body.size() - node.end;
  REQUIRE(w.body.size() >= node.begin + tail);
  CHECK(std::string_view(w.body).substr(0, node.begin) == body.substr(0, node.begin));
  CHECK(std::string_view(w.body).substr(w.body.size() - tail) == body.substr(node.end));
  if (src.slot.kind == TextSlot::Kind::String) {
    std::string expected(body.substr(0, src.slot.begin));
    json::append_json_string(expected, text);
    expected += body.substr(src.slot.end);
    CHECK(w.body == expected);
  }
  ParseOutcome back = parse(f, w.body, &test_memo());
  INFO("reparse error: " << back.error);
  REQUIRE(back.request.has_value());
  REQUIRE(back.request->conversation.messages.size() == r.conversation.messages.size());
  const Message& again = nth(back.request->conversation, index);
  REQUIRE(part_index < again.parts.size());
  CHECK(again.parts[part_index].text == text);
  m = saved;
  return true;
}

void check_remove(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label) {
  INFO(label << " remove message " << index);
  Message& m = r.conversation.messages[index];
  const Message saved = m;
  pruning::remove_message(m);
  WriteOutcome w = write(r, body);
  INFO("write error: " << w.error);
  REQUIRE(w.ok);
  CHECK(w.changed);
  ParseOutcome back = parse(f, w.body, &test_memo());
  INFO("reparse error: " << back.error << "\n" << w.body.substr(0, 2000));
  REQUIRE(back.request.has_value());
  const auto& before = r.conversation.messages;
  const auto& after = back.request->conversation.messages;
  REQUIRE(after.size() + 1 == before.size());
  for (std::size_t i = 0, j = 0; i < before.size(); ++i) {
    if (i == index) continue;
    CHECK(message_bytes(r, before[i]) == message_bytes(*back.request, after[j]));
    ++j;
  }
  m = saved;
}

void check_drop_part(Api f, std::string_view body, ParsedRequest& r, std::size_t index, const std::string& label) {
  Message& m = r.conversation.messages[index];
  if (m.parts.size() < 2) return;
  INFO(label << " drop last part of message " << index);
  const Message saved = m;
  m.parts.pop_back();
  m.changed = true;
  WriteOutcome w = write(r, body);
  INFO("write error: " << w.error);
  REQUIRE(w.ok);
  ParseOutcome back = parse(f, w.body, &test_memo());
  INFO("reparse error: " << back.error << "\n" << w.body.substr(0, 2000));
  REQUIRE(back.request.has_value());
  REQUIRE(back.request->conversation.messages.size() == r.conversation.messages.size());
  CHECK(parts_summary(nth(back.request->conversation, index)) == parts_summary(m));
  // Everything outside the message is untouched.
  const json::Node& node = r.doc.node(r.messages[m.origin].node);
  CHECK(std::string_view(w.body).substr(0, node.begin) == body.substr(0, node.begin));
  m = saved;
}

void check_insert(Api f, std::string_view body, ParsedRequest& r, const std::string& label) {
  INFO(label << " insert");
  const Conversation saved = r.conversation;
  Message added;
  added.role = pruning::Role::User;
  added.changed = true;
  added.parts.emplace_back().text = "new message " + kTricky;
  r.conversation.messages.push_back(added);
  bool has_system_field = f != Api::openai_chat;
  if (has_system_field) {
    for (Message& m : r.conversation.messages)
      if (m.system_field) pruning::remove_message(m);
    Message sys;
    sys.role = pruning::Role::System;
    sys.system_field = true;
    sys.changed = true;
    sys.parts.emplace_back().text = "new system " + kTricky;
    r.conversation.messages.insert(r.conversation.messages.begin(), sys);
  }
  WriteOutcome w = write(r, body);
  INFO("write error: " << w.error);
  REQUIRE(w.ok);
  CHECK(w.changed);
  ParseOutcome back = parse(f, w.body, &test_memo());
  INFO("reparse error: " << back.error << "\n" << w.body.substr(0, 3000));
  REQUIRE(back.request.has_value());
  auto want = summary(r.conversation);
  auto got = summary(back.request->conversation);
  REQUIRE(got.size() == want.size());
  CHECK(got.back().substr(got.back().find(' ')) == want.back().substr(want.back().find(' ')));
  if (has_system_field) CHECK(got.front() == want.front());
  r.conversation = saved;
}

void check_all(Api f, std::string_view body, const std::string& label, std::size_t max_messages) {
  ParsedRequest r = parse_ok(f, body, label);
  const std::size_t n = r.conversation.messages.size();
  std::vector<std::size_t> indices;
  if (n <= max_messages) {
    for (std::size_t i = 0; i < n; ++i) indices.push_back(i);
  } else {
    for (std::size_t k = 0; k < max_messages; ++k) indices.push_back(k * (n - 1) / (max_messages - 1));
  }
  for (std::size_t i : indices) {
    check_edit(f, body, r, i, label);
    check_remove(f, body, r, i, label);
    check_drop_part(f, body, r, i, label);
  }
  check_insert(f, body, r, label);
  // The view was restored after every check: writing it changes nothing.
  WriteOutcome w = write(r, body);
  CHECK(w.ok);
  CHECK_FALSE(w.changed);
}

}  // namespace td::providers::test
