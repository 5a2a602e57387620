// The diet on Anthropic and Gemini bodies, through their adapters: recorded
// trajectories converted to each format (thinking with signatures, tool_use /
// functionCall with thoughtSignature, tool results in user turns,
// cache_control), every request checked against each provider's rules.
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "pruning/reanchor.hpp"
#include "config/load.hpp"
#include "providers/request.hpp"
#include "providers/route.hpp"
#include "diet/diet.hpp"

using namespace td;
namespace rj = rapidjson;

namespace {

constexpr std::string_view kAnchorMark = R"(,"cache_control":{"type":"ephemeral"})";

std::string compact(const rj::Value& v) {
  rj::StringBuffer b;
  rj::Writer<rj::StringBuffer> w(b);
  v.Accept(w);
  return {b.GetString(), b.GetSize()};
}

rj::Document load(const char* name) {
  std::ifstream in(std::string(TD_FIXTURES "/replay/") + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  rj::Document d;
  d.Parse(ss.str().c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string str(const rj::Value& m, const char* key) {
  auto it = m.FindMember(key);
  return it != m.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string();
}

// One message of a provider body being built: role and its blocks/parts.
struct Turn {
  std::string role;
  std::vector<std::string> items;  // JSON of each block / part
};

std::string json_str(const std::string& s) {
  rj::Value v(s.c_str(), static_cast<rj::SizeType>(s.size()));
  return compact(v);
}

// Trajectory messages [0, n) as provider turns, consecutive same roles merged.
std::vector<Turn> turns(const rj::Value& msgs, std::size_t n, bool gemini, std::string& system) {
  std::vector<Turn> out;
  int sig = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& m = msgs[static_cast<rj::SizeType>(i)];
    std::string role = str(m, "role"), content = str(m, "content");
    if (role == "system") {
      system = content;
      continue;
    }
    Turn t;
    if (role == "assistant") {
      t.role = gemini ? "model" : "assistant";
      std::string reasoning = str(m, "reasoning_content");
      if (!reasoning.empty())
        t.items.push_back(gemini ? "{\"text\":" + json_str(reasoning) + ",\"thought\":true}"
                                 : "{\"type\":\"thinking\",\"thinking\":" + json_str(reasoning) +
                                       ",\"signature\":\"sig-" + std::to_string(++sig) + "\"}");
      if (!content.empty())
        t.items.push_back(gemini ? "{\"text\":" + json_str(content) + "}"
                                 : "{\"type\":\"text\",\"text\":" + json_str(content) + "}");
      if (m.HasMember("tool_calls")) {
        bool first = true;
        for (const auto& c : m["tool_calls"].GetArray()) {
          std::string args = c["function"]["arguments"].GetString();
          std::string name = c["function"]["name"].GetString();
          if (gemini) {
            // With the call's id, as Gemini's API carries it, so that each response names its call.
            t.items.push_back("{\"functionCall\":{\"name\":" + json_str(name) + ",\"args\":" + args +
                              ",\"id\":" + json_str(c["id"].GetString()) + "}" +
                              (first ? ",\"thoughtSignature\":\"tsig-" + std::to_string(++sig) + "\"" : "") + "}");
          } else {
            t.items.push_back("{\"type\":\"tool_use\",\"id\":" + json_str(c["id"].GetString()) +
                              ",\"name\":" + json_str(name) + ",\"input\":" + args + "}");
          }
          first = false;
        }
      }
      if (t.items.empty()) t.items.push_back(gemini ? "{\"text\":\"ok\"}" : "{\"type\":\"text\",\"text\":\"ok\"}");
    } else if (role == "tool") {
      t.role = "user";
      std::string id = str(m, "tool_call_id");
      t.items.push_back(gemini ? "{\"functionResponse\":{\"name\":\"bash\",\"id\":" + json_str(id) +
                                     ",\"response\":{\"output\":" + json_str(content) + "}}}"
                               : "{\"type\":\"tool_result\",\"tool_use_id\":" + json_str(id) +
                                     ",\"content\":" + json_str(content) + "}");
    } else {
      t.role = "user";
      t.items.push_back(gemini ? "{\"text\":" + json_str(content) + "}"
                               : "{\"type\":\"text\",\"text\":" + json_str(content) + "}");
    }
    if (!out.empty() && out.back().role == t.role)
      out.back().items.insert(out.back().items.end(), t.items.begin(), t.items.end());
    else
      out.push_back(std::move(t));
  }
  return out;
}

std::string anthropic_body(const rj::Value& msgs, std::size_t n) {
  std::string system;
  auto ts = turns(msgs, n, false, system);
  std::string body = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":1024,";
  if (!system.empty())
    body += "\"system\":[{\"type\":\"text\",\"text\":" + json_str(system) +
            ",\"cache_control\":{\"type\":\"ephemeral\"}}],";
  body += "\"messages\":[";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (i) body += ',';
    body += "{\"role\":\"" + ts[i].role + "\",\"content\":[";
    for (std::size_t k = 0; k < ts[i].items.size(); ++k) {
      std::string item = ts[i].items[k];
      // Claude Code marks the newest block of the last message.
      if (i + 1 == ts.size() && k + 1 == ts[i].items.size())
        item = item.substr(0, item.size() - 1) + ",\"cache_control\":{\"type\":\"ephemeral\"}}";
      body += (k ? "," : "") + item;
    }
    body += "]}";
  }
  return body + "]}";
}

std::string gemini_body(const rj::Value& msgs, std::size_t n) {
  std::string system;
  auto ts = turns(msgs, n, true, system);
  std::string body = "{";
  if (!system.empty()) body += "\"systemInstruction\":{\"parts\":[{\"text\":" + json_str(system) + "}]},";
  body += "\"contents\":[";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (i) body += ',';
    body += "{\"role\":\"" + ts[i].role + "\",\"parts\":[";
    for (std::size_t k = 0; k < ts[i].items.size(); ++k) body += (k ? "," : "") + ts[i].items[k];
    body += "]}";
  }
  return body + "],\"generationConfig\":{\"temperature\":0}}";
}

std::vector<std::string> raw_messages(providers::Api api, const std::string& body) {
  auto p = providers::parse(api, body);
  REQUIRE(p.request);
  std::vector<std::string> out;
  for (const auto& m : p.request->conversation.messages)
    if (!m.system_field) out.emplace_back(p.request->doc.raw(p.request->messages[m.origin].node));
  return out;
}

std::size_t count_of(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

// The blocks (or parts) of `kind` in a body, as compact JSON.
std::multiset<std::string> items_of(const rj::Document& d, const char* array, const char* blocks,
                                    bool (*pick)(const rj::Value&)) {
  std::multiset<std::string> out;
  for (const auto& m : d[array].GetArray()) {
    const auto it = m.FindMember(blocks);
    if (it == m.MemberEnd() || !it->value.IsArray()) continue;  // a string content (the restated task): no blocks
    for (const auto& b : it->value.GetArray())
      if (pick(b)) out.insert(compact(b));
  }
  return out;
}

bool is_thinking(const rj::Value& b) { return b.HasMember("type") && std::string(b["type"].GetString()) == "thinking"; }
bool is_signed_part(const rj::Value& b) { return b.HasMember("thoughtSignature"); }

std::string anthropic_pairing(const rj::Document& d) {
  const auto& msgs = d["messages"].GetArray();
  std::vector<std::string> open;
  for (rj::SizeType i = 0; i < msgs.Size(); ++i) {
    std::vector<std::string> uses;
    const auto content = msgs[i].FindMember("content");
    if (content == msgs[i].MemberEnd() || !content->value.IsArray()) {  // a string content (the restated task)
      if (!open.empty()) return "tool_use not answered in the next message, before " + std::to_string(i);
      continue;
    }
    for (const auto& b : msgs[i]["content"].GetArray()) {
      std::string type = b["type"].GetString();
      if (type == "tool_result") {
        auto it = std::find(open.begin(), open.end(), std::string(b["tool_use_id"].GetString()));
        if (it == open.end()) return "orphan tool_result in message " + std::to_string(i);
        open.erase(it);
      } else if (type == "tool_use") {
        uses.emplace_back(b["id"].GetString());
      }
    }
    if (!open.empty()) return "tool_use not answered in the next message, before " + std::to_string(i);
    open = uses;
  }
  return "";
}

std::string gemini_pairing(const rj::Document& d) {
  const auto& msgs = d["contents"].GetArray();
  std::size_t open = 0;
  for (rj::SizeType i = 0; i < msgs.Size(); ++i) {
    std::size_t calls = 0, responses = 0;
    for (const auto& p : msgs[i]["parts"].GetArray()) {
      calls += p.HasMember("functionCall");
      responses += p.HasMember("functionResponse");
    }
    if (responses != open) return "functionResponse count differs from the calls before, message " + std::to_string(i);
    open = calls;
  }
  return "";
}

// Returns how many requests went with tombstones (semantic mode).
std::size_t check_format(providers::Api api, const char* trajectory,
                         const config::Config& cfg = config::default_config()) {
  rj::Document t = load(trajectory);
  const auto& msgs = t["messages"];
  const bool gemini = api == providers::Api::gemini;
  const providers::ChatRoute route{api, gemini ? "gemini-2.5-pro" : "", false};
  std::vector<std::string> prev;
  std::uint32_t prev_stale = 0;
  std::size_t requests = 0, changed = 0, tombstoned = 0, prev_archived = 0;
  diet::DietCaches caches;  // the conversation's requests warm them, as the proxy's
  for (rj::SizeType n = 1; n < msgs.Size(); ++n) {
    if (str(msgs[n], "role") != "assistant") continue;
    const std::string original = gemini ? gemini_body(msgs, n) : anthropic_body(msgs, n);
    std::string body = original;
    diet::DietOutcome diet = diet::diet_body(route, body, cfg, caches);
    INFO(std::string(trajectory) << " request at message " << n);
    REQUIRE(diet.parsed);
    CHECK_FALSE(diet.fail_open);
    ++requests;
    changed += diet.rewritten;
    rj::Document a, b;
    a.Parse(original.c_str());
    b.Parse(body.c_str());
    REQUIRE_FALSE(b.HasParseError());
    if (gemini) {
      REQUIRE(gemini_pairing(a) == "");
      CHECK(gemini_pairing(b) == "");
      CHECK(a.HasMember("systemInstruction") == b.HasMember("systemInstruction"));
      if (a.HasMember("systemInstruction")) CHECK(compact(a["systemInstruction"]) == compact(b["systemInstruction"]));
      CHECK(a.HasMember("generationConfig") == b.HasMember("generationConfig"));
      if (a.HasMember("generationConfig")) CHECK(compact(a["generationConfig"]) == compact(b["generationConfig"]));
      // Signed parts (functionCall + thoughtSignature) are never changed.
      auto before = items_of(a, "contents", "parts", is_signed_part);
      for (const auto& part : items_of(b, "contents", "parts", is_signed_part)) CHECK(before.count(part) == 1);
    } else {
      REQUIRE(anthropic_pairing(a) == "");
      CHECK(anthropic_pairing(b) == "");
      CHECK(a.HasMember("system") == b.HasMember("system"));
      if (a.HasMember("system")) CHECK(compact(a["system"]) == compact(b["system"]));
      // The client's breakpoints stay; tokendiet adds at most two (at the
      // frontier, and before a read held there), and only beside the
      // client's own and within four.
      const auto marks_before = count_of(original, "cache_control"), marks_after = count_of(body, "cache_control");
      CHECK(marks_after >= marks_before);
      CHECK(marks_after <= marks_before + 2);
      if (marks_after > marks_before) CHECK((marks_before >= 1 && marks_after <= 4));
      // Thinking blocks: dropped whole or kept byte for byte, never edited;
      // the last assistant message keeps all of its own.
      auto before = items_of(a, "messages", "content", is_thinking);
      for (const auto& block : items_of(b, "messages", "content", is_thinking)) CHECK(before.count(block) == 1);
      const auto& am = a["messages"].GetArray();
      const auto& bm = b["messages"].GetArray();
      // The task restated after a compression step (F22): a message of the
      // request's own at its end.
      const rj::SizeType restated =
          bm.Size() > 0 && compact(bm[bm.Size() - 1]).find(pruning::kReanchorMarker) != std::string::npos;
      REQUIRE(am.Size() + restated == bm.Size());
      for (rj::SizeType i = am.Size(); i-- > 0;)
        if (std::string(am[i]["role"].GetString()) == "assistant") {
          CHECK(compact(am[i]) == compact(bm[i]));
          break;
        }
    }
    // Stable from one request to the next, unless the frontier moved. (The
    // client itself moves its cache_control to the newest block, so for
    // Anthropic the previous request's last message is not compared; and
    // tokendiet moves its own to the new frontier on the request after a
    // step. Anthropic's cache does not key on breakpoints: they are left out.)
    auto raw = raw_messages(api, body);
    for (std::string& m : raw)
      for (std::size_t at; (at = m.find(kAnchorMark)) != std::string::npos;) m.erase(at, kAnchorMark.size());
    if (!raw.empty() && raw.back().find(pruning::kReanchorMarker) != std::string::npos) raw.pop_back();
    tombstoned += !diet.result.archived.empty();
    if (!prev.empty() && diet.result.stale_messages == prev_stale && diet.result.archived.size() == prev_archived) {
      const std::size_t same = gemini ? prev.size() : prev.size() - 1;
      CHECK((same <= raw.size() && std::equal(prev.begin(), prev.begin() + same, raw.begin())));
    }
    prev = raw;
    prev_stale = diet.result.stale_messages;
    prev_archived = diet.result.archived.size();
  }
  CHECK(requests > 50);
  CHECK(changed > requests / 3);
  return tombstoned;
}

// Semantic mode alone (the frontier held off) on a real Codex session with update_plan.
config::Config semantic_only() {
  config::Config cfg = config::default_config();
  cfg.profiles.front().trigger_tokens = 1u << 30;
  cfg.profiles.front().semantic_threshold = 8000;
  cfg.profiles.front().completed_tasks_min_output_bytes = 256;  // every output a tombstone can replace
  return cfg;
}

}  // namespace

TEST_CASE("anthropic bodies (signed thinking, tool_use/tool_result, cache_control) through the diet") {
  check_format(providers::Api::anthropic, "mini-swe-agent-9.json");  // deepseek-reasoner: reasoning on every turn
}

TEST_CASE("gemini bodies (thought parts, functionCall with thoughtSignature) through the diet") {
  check_format(providers::Api::gemini, "mini-swe-agent-9.json");
}

TEST_CASE("semantic mode's tombstones in anthropic and gemini bodies: valid, paired, stable between steps") {
  CHECK(check_format(providers::Api::anthropic, "codex-1.json", semantic_only()) > 0);
  CHECK(check_format(providers::Api::gemini, "codex-1.json", semantic_only()) > 0);
}
