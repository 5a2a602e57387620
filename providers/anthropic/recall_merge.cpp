// RecallMerge for Anthropic Messages (docs/design.md §Recall): one
// message_start and one message_delta/message_stop, content block indices
// consecutive across rounds, usage summed in the last message_delta.
#include <algorithm>
#include <map>

#include "json/json_append.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/recall_tool.hpp"

namespace td::providers {
namespace {

using namespace recall_merge;

// The assistant turn and the tool results that continue a round.
std::string continuation_messages(const std::vector<std::string>& blocks, const std::vector<RecallCall>& calls,
                                  const std::vector<std::string>& results) {
  std::string s = R"({"role":"assistant","content":[)";
  for (std::size_t i = 0; i < blocks.size(); ++i) s.append(i ? "," : "").append(blocks[i]);
  s.append(R"(]},{"role":"user","content":[)");
  for (std::size_t i = 0; i < calls.size(); ++i) {
    s.append(i ? "," : "").append(R"({"type":"tool_result","tool_use_id":)");
    json::append_json_string(s, calls[i].call_id);
    s.append(R"(,"content":)");
    json::append_json_string(s, i < results.size() ? results[i] : std::string());
    s.append("}");
  }
  return s.append("]}");
}

bool is_recall_tool_use(const Value& block) {
  return str(block, "type") == "tool_use" && str(block, "name") == kRecallToolName;
}

bool is_tool_use(const Value& block) { return str(block, "type") == "tool_use"; }

// An empty text block is refused in a request: not carried into the turn.
bool worth_carrying(const Value& block) { return !(str(block, "type") == "text" && str(block, "text").empty()); }

class AnthropicSseMerge final : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string& out) override {
    splitter_.feed(bytes, [&](const json::SseEvent& ev) { on_event(ev, out); });
  }

  const std::vector<RecallCall>& end_round(std::string& out) override {
    splitter_.finish([&](const json::SseEvent& ev) { on_event(ev, out); });
    calls_.clear();
    for (auto& [i, b] : blocks_)
      if (b.kind == Kind::recall) calls_.push_back({std::string(str(b.content, "id")), b.input});
    add_counts(total_, round_usage_, total_.GetAllocator());
    if (calls_.empty()) finish(out);
    return calls_;
  }

  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    std::vector<std::string> turn;
    for (auto& [i, b] : blocks_)
      if (b.kind != Kind::held && worth_carrying(b.content)) turn.push_back(to_json(b.content));
    if (!json::append_to_array_member(body, "messages", continuation_messages(turn, calls_, results))) return false;
    ++round_;
    blocks_.clear();
    calls_.clear();  // the round's end stays held: a continuation that fails ends with it
    round_usage_.SetObject();
    return true;
  }

  // The held client calls released; the recall calls never (the round cap,
  // a failed continuation): with no client call left, the turn ended.
  void finish(std::string& out) override {
    bool client_calls = false, recalls = false;
    for (auto& [i, b] : blocks_) {
      if (b.kind == Kind::held) {
        release(b, out);
        client_calls = true;
      }
      recalls = recalls || b.kind == Kind::recall;
    }
    if (round_ == 0 && !recalls && !end_delta_.empty()) {
      out.append(end_delta_);  // a response of one round: its end as it came
    } else if (!end_delta_.empty()) {
      Document d;
      if (parse(event_data(end_delta_), d) && d.IsObject()) {
        if (round_ > 0) set(d, "usage", Value(total_, d.GetAllocator()), d.GetAllocator());
        if (!client_calls && d.HasMember("delta") && str(d["delta"], "stop_reason") == "tool_use")
          set(d["delta"], "stop_reason", Value("end_turn"), d.GetAllocator());
        append_event(out, "message_delta", to_json(d));
      }
    }
    out.append(end_stop_.empty() ? std::string("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
                                 : end_stop_);
    end_delta_.clear();
    end_stop_.clear();
    blocks_.clear();
  }

 private:
  enum class Kind { pass, held, recall };
  struct Block {
    Kind kind = Kind::pass;
    int client_index = -1;
    Document content;                       // the block as a request carries it
    std::string text, thinking, signature;  // from its deltas, until its stop
    std::string input;                      // tool_use: the input's JSON, from its deltas
    std::vector<std::string> events;        // held: the data of its events, in order
    std::vector<std::string> names;
  };

  void emit(Block& b, std::string_view name, Document& d, std::string_view raw, std::string& out) {
    if (!d.HasMember("index") || num(d, "index") == b.client_index) {
      out.append(raw);
      return;
    }
    d["index"].SetInt(b.client_index);
    append_event(out, name, to_json(d));
  }

  void release(Block& b, std::string& out) {
    b.client_index = next_index_++;
    for (std::size_t i = 0; i < b.events.size(); ++i) {
      Document d;
      if (!parse(b.events[i], d) || !d.IsObject() || !d.HasMember("index")) continue;
      d["index"].SetInt(b.client_index);
      append_event(out, b.names[i], to_json(d));
    }
  }

  // Deltas append to strings (a long answer comes in thousands of them); the
  // block takes them at its stop.
  static void accumulate(Block& b, const Value& delta) {
    const std::string_view type = str(delta, "type");
    if (type == "text_delta")
      b.text.append(str(delta, "text"));
    else if (type == "thinking_delta")
      b.thinking.append(str(delta, "thinking"));
    else if (type == "signature_delta")
      b.signature.append(str(delta, "signature"));
    else if (type == "input_json_delta")
      b.input.append(str(delta, "partial_json"));
  }

  static void complete(Block& b) {
    if (!b.content.IsObject()) return;  // not a block a request could carry
    auto& a = b.content.GetAllocator();
    auto add = [&](const char* field, const std::string& more) {
      if (more.empty()) return;
      std::string s(str(b.content, field));
      s.append(more);
      set(b.content, field, Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a), a);
    };
    add("text", b.text);
    add("thinking", b.thinking);
    add("signature", b.signature);
    if (is_tool_use(b.content)) {
      Document input;
      if (!b.input.empty() && parse(b.input, input) && input.IsObject()) set(b.content, "input", Value(input, a), a);
      if (b.input.empty()) b.input = "{}";
    }
  }

  void on_event(const json::SseEvent& ev, std::string& out) {
    Document d;
    if (ev.continuation || ev.overflow || !ev.has_data || !parse(ev.data, d) || !d.IsObject()) {
      out.append(ev.raw);
      return;
    }
    const std::string_view type = str(d, "type");
    const int index = static_cast<int>(num(d, "index"));
    if (type == "message_start") {
      if (const Value* message = object_at(d, "message"))
        if (const Value* usage = object_at(*message, "usage"))
          round_usage_.CopyFrom(*usage, round_usage_.GetAllocator());
      if (round_ == 0) out.append(ev.raw);
    } else if (type == "content_block_start" && d.HasMember("content_block")) {
      Block& b = blocks_[index];
      b.content.CopyFrom(d["content_block"], b.content.GetAllocator());
      if (is_tool_use(b.content)) {
        b.kind = is_recall_tool_use(b.content) ? Kind::recall : Kind::held;
        if (auto in = b.content.FindMember("input"); in != b.content.MemberEnd()) in->value.SetObject();
      } else {
        b.client_index = next_index_++;
      }
      route(b, ev, d, out);
    } else if (type == "content_block_delta" || type == "content_block_stop") {
      auto it = blocks_.find(index);
      if (it == blocks_.end()) {
        out.append(ev.raw);
        return;
      }
      Block& b = it->second;
      if (type == "content_block_delta" && d.HasMember("delta")) accumulate(b, d["delta"]);
      if (type == "content_block_stop") complete(b);
      route(b, ev, d, out);
    } else if (type == "message_delta") {
      if (Value* usage = object_at(d, "usage"))
        for (auto& m : usage->GetObject())
          set(round_usage_, m.name.GetString(), Value(m.value, round_usage_.GetAllocator()),
              round_usage_.GetAllocator());
      end_delta_.assign(ev.raw);
    } else if (type == "message_stop") {
      end_stop_.assign(ev.raw);
    } else {
      out.append(ev.raw);  // ping, error, what comes later
    }
  }

  void route(Block& b, const json::SseEvent& ev, Document& d, std::string& out) {
    if (b.kind == Kind::pass) {
      emit(b, ev.name, d, ev.raw, out);
    } else {
      b.events.emplace_back(ev.data);
      b.names.emplace_back(ev.name);
    }
  }

  json::SseSplitter splitter_;
  std::map<int, Block> blocks_;  // this round's, by upstream index
  std::vector<RecallCall> calls_;
  int next_index_ = 0;  // the client's next block index
  unsigned round_ = 0;
  Document round_usage_{rapidjson::kObjectType};
  Document total_{rapidjson::kObjectType};  // usage of the rounds ended
  std::string end_delta_, end_stop_;        // this round's end, held
};

// A JSON message per round: the merged body is the last round's, its content
// every round's (minus the recall calls and the client's calls of the rounds
// continued), its usage summed, its id the first round's.
class AnthropicJsonMerge final : public JsonRoundsMerge {
 public:
  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    std::vector<std::string> turn;
    for (auto& b : round_["content"].GetArray()) {
      if (is_tool_use(b) && !is_recall_tool_use(b)) continue;
      if (worth_carrying(b)) turn.push_back(to_json(b));
      if (!is_tool_use(b)) content_.PushBack(Value(b, content_.GetAllocator()), content_.GetAllocator());
    }
    if (!json::append_to_array_member(body, "messages", continuation_messages(turn, calls_, results))) return false;
    keep_round();
    return true;
  }

 private:
  bool well_formed() override { return round_.HasMember("content") && round_["content"].IsArray(); }
  void collect_recall_calls() override {
    for (auto& b : round_["content"].GetArray())
      if (is_recall_tool_use(b))
        calls_.push_back({std::string(str(b, "id")), b.HasMember("input") ? to_json(b["input"]) : std::string("{}")});
  }
  void drop_recall_calls() override {
    Value& content = round_["content"];
    for (auto it = content.Begin(); it != content.End();) it = is_recall_tool_use(*it) ? content.Erase(it) : it + 1;
  }
  void carry_over() override {
    for (auto& b : round_["content"].GetArray())
      content_.PushBack(Value(b, content_.GetAllocator()), content_.GetAllocator());
  }
  void write_merged(Document::AllocatorType& a) override {
    set(round_, "content", Value(content_, a), a);
    set(round_, "usage", Value(total_, a), a);
    if (!first_id_.empty()) set(round_, "id", Value(first_id_.c_str(), a), a);
    const bool client_calls =
        std::any_of(content_.Begin(), content_.End(), [](const Value& b) { return is_tool_use(b); });
    if (!client_calls && str(round_, "stop_reason") == "tool_use") set(round_, "stop_reason", Value("end_turn"), a);
  }

  Document content_{rapidjson::kArrayType};  // what the client gets of the rounds continued
};

}  // namespace

std::unique_ptr<RecallMerge> make_anthropic_merge(bool sse) {
  if (sse) return std::make_unique<AnthropicSseMerge>();
  return std::make_unique<AnthropicJsonMerge>();
}

}  // namespace td::providers
