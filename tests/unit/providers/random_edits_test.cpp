// Property test: random mixes of the edits strategies make (text edits with
// arbitrary text, message removals, dropped parts, new messages) always write
// a body that parses back to exactly the edited view.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "bodies.hpp"
#include "providers/request.hpp"
#include "roundtrip.hpp"

using namespace td::providers;
namespace json = td::json;
using namespace td::providers::test;
using td::pruning::Conversation;
using td::pruning::Message;
using td::pruning::Part;
using td::pruning::PartKind;
using td::pruning::Role;

namespace {

// Valid UTF-8 with the characters escaping must handle.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::string> atoms = {"a",
                                                 "Z",
                                                 " ",
                                                 "\"",
                                                 "\\",
                                                 "/",
                                                 "\n",
                                                 "\t",
                                                 "\r",
                                                 "\x01",
                                                 "\x1f",
                                                 "\x7f",
                                                 "\xC3\xA9",
                                                 "\xE2\x80\xA8",
                                                 "\xE2\x9C\x93",
                                                 "\xF0\x9F\x98\x80",
                                                 "{",
                                                 "}",
                                                 "[",
                                                 "]",
                                                 ",",
                                                 ":",
                                                 "\\u0041",
                                                 "0"};
  std::string s;
  int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) s += atoms[rng() % atoms.size()];
  return s;
}

std::string random_args(std::mt19937& rng) {
  return "{\"k\":" + json::json_string(random_text(rng)) + ",\"n\":[1,2.5,null,true]}";
}

bool object_args(Api api) { return api == Api::anthropic || api == Api::gemini; }

// Parts only, system-field messages first: how a body reads back.
std::vector<std::string> normal_form(const Conversation& c) {
  std::vector<std::string> sys, rest;
  for (const Message& m : c.messages) {
    if (m.removed) continue;
    std::string s;
    for (const Part& p : m.parts) {
      s += "|" + std::to_string(int(p.kind)) + "#" + p.id + "(" + p.name + ")=" + p.text;
      if (!p.signature.empty()) s += "[signed]";
    }
    (m.system_field ? sys : rest).push_back(s);
  }
  sys.insert(sys.end(), rest.begin(), rest.end());
  return sys;
}

Message random_new_message(Api api, std::mt19937& rng) {
  Message m;
  m.changed = true;
  Part p;
  switch (rng() % 5) {
    case 0:
      m.role = Role::User;
      p.kind = PartKind::Text;
      break;
    case 1:
      m.role = Role::Assistant;
      p.kind = PartKind::Text;
      break;
    case 2:
      m.role = Role::Assistant;
      p.kind = PartKind::ToolCall;
      p.id = "call_" + std::to_string(rng() % 1000);
      p.name = "tool" + std::to_string(rng() % 3);
      break;
    case 3:
      m.role = Role::Tool;
      p.kind = PartKind::ToolResult;
      p.id = "call_" + std::to_string(rng() % 1000);
      p.name = "tool" + std::to_string(rng() % 3);
      break;
    default:
      m.role = Role::System;
      p.kind = PartKind::Text;
  }
  p.text = p.kind == PartKind::ToolCall ? (object_args(api) ? random_args(rng) : random_text(rng)) : random_text(rng);
  // Gemini and Anthropic results carry no id of their own: Gemini pairs by
  // name, Anthropic results name only the call.
  if (api == Api::gemini && p.kind != PartKind::Text) p.id = p.name;
  if (api != Api::gemini && p.kind == PartKind::ToolResult) p.name.clear();
  m.parts.push_back(std::move(p));
  return m;
}

void mutate(Api api, Conversation& c, std::mt19937& rng) {
  const int ops = 1 + static_cast<int>(rng() % 6);
  for (int op = 0; op < ops; ++op) {
    if (c.messages.empty()) break;
    Message& m = c.messages[rng() % c.messages.size()];
    switch (rng() % 5) {
      case 0: {  // edit a random editable part
        std::vector<Part*> editable;
        for (Part& p : m.parts)
          if (p.editable && p.kind != PartKind::Opaque) editable.push_back(&p);
        if (editable.empty()) break;
        Part& p = *editable[rng() % editable.size()];
        td::pruning::set_text(m, p,
                              p.kind == PartKind::ToolCall && object_args(api) ? random_args(rng) : random_text(rng));
        break;
      }
      case 1:
        if (!m.system_field) td::pruning::remove_message(m);
        break;
      case 2:  // drop a part, never the last one
        if (m.parts.size() >= 2 && !m.removed) {
          m.parts.erase(m.parts.begin() + static_cast<long>(rng() % m.parts.size()));
          m.changed = true;
        }
        break;
      case 3: {  // a new text part after the message's last text part
        if (m.removed || (api == Api::openai_chat && m.role == Role::Tool)) break;
        if (api == Api::openai_responses && m.system_field) break;  // instructions: one string
        auto last_text =
            std::find_if(m.parts.rbegin(), m.parts.rend(), [](const Part& p) { return p.kind == PartKind::Text; });
        if (last_text == m.parts.rend()) {
          if (api == Api::openai_chat || api == Api::openai_responses) break;  // content order is fixed
          last_text = m.parts.rbegin();
        }
        Part p;
        p.kind = PartKind::Text;
        p.text = random_text(rng);
        m.parts.insert(last_text.base(), std::move(p));
        m.changed = true;
        break;
      }
      default: {
        std::size_t at = rng() % (c.messages.size() + 1);
        c.messages.insert(c.messages.begin() + static_cast<long>(at), random_new_message(api, rng));
        break;
      }
    }
  }
}

}  // namespace

TEST_CASE("random edits always write a body that reads back as the edited view") {
  std::vector<std::pair<Api, std::string>> bodies = {
      {Api::openai_chat, fixture("providers/openai-chat.json")},
      {Api::anthropic, fixture("providers/anthropic.json")},
      {Api::gemini, fixture("providers/gemini.json")},
      {Api::openai_responses, fixture("providers/openai-responses.json")},
      {Api::openai_responses, fixture("providers/openai-responses-string.json")},
  };
  {
    Trajectory t = load_trajectory(std::string(TD_FIXTURES) + "/replay/tau-bench-3.json");
    bodies.emplace_back(Api::openai_chat, chat_body(t, t.messages.size()));
  }
  std::mt19937 rng(20240607);
  for (const auto& entry : bodies) {
    const auto& api = entry.first;    // not a structured binding: clang 14's doctest
    const auto& body = entry.second;  // macros cannot capture one
    ParsedRequest original = std::move(*parse(api, body, &test_memo()).request);
    for (int round = 0; round < 300; ++round) {
      ParsedRequest r = original;
      mutate(api, r.conversation, rng);
      WriteOutcome w = write(r, body);
      INFO(std::string(name(api)) << " round " << round << ": " << w.error);
      REQUIRE(w.ok);
      std::string_view out = w.changed ? std::string_view(w.body) : std::string_view(body);
      ParseOutcome back = parse(api, out, &test_memo());
      INFO(back.error << "\n" << out.substr(0, 4000));
      REQUIRE(back.request.has_value());
      CHECK(normal_form(back.request->conversation) == normal_form(r.conversation));
    }
  }
}
