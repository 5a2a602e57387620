// RecallMerge for OpenAI chat completions (docs/design.md §Recall): one chunk
// id, the finish_reason of the last round, one usage chunk (summed) and one
// [DONE]. Chunks carrying tool calls are held until their round ends.
#include <algorithm>

#include "json/json_append.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/recall_tool.hpp"

namespace td::providers {
namespace {

using namespace recall_merge;

struct ToolCall {
  std::string id, name, arguments;
};

// The assistant turn and the tool results that continue a round.
std::string continuation_messages(const std::string& content, const std::string& reasoning,
                                  const std::vector<RecallCall>& calls, const std::vector<std::string>& results) {
  std::string s = R"({"role":"assistant","content":)";
  if (content.empty())
    s.append("null");
  else
    json::append_json_string(s, content);
  if (!reasoning.empty()) {
    s.append(R"(,"reasoning_content":)");
    json::append_json_string(s, reasoning);
  }
  s.append(R"(,"tool_calls":[)");
  for (std::size_t i = 0; i < calls.size(); ++i) {
    s.append(i ? "," : "").append(R"({"id":)");
    json::append_json_string(s, calls[i].call_id);
    s.append(R"(,"type":"function","function":{"name":")").append(kRecallToolName).append(R"(","arguments":)");
    json::append_json_string(s, calls[i].arguments);
    s.append("}}");
  }
  s.append("]}");
  for (std::size_t i = 0; i < calls.size(); ++i) {
    s.append(R"(,{"role":"tool","tool_call_id":)");
    json::append_json_string(s, calls[i].call_id);
    s.append(R"(,"content":)");
    json::append_json_string(s, i < results.size() ? results[i] : std::string());
    s.append("}");
  }
  return s;
}

// A tool call of a chat.completion's message that calls tokendiet_recall.
bool is_recall_call(const Value& call) {
  const Value* f = object_at(call, "function");
  return f && str(*f, "name") == kRecallToolName;
}

// Adds the tool-call deltas of `delta` to `calls` (by their index).
void add_tool_deltas(const Value& delta, std::vector<ToolCall>& calls) {
  auto tc = delta.FindMember("tool_calls");
  if (tc == delta.MemberEnd() || !tc->value.IsArray()) return;
  for (auto& c : tc->value.GetArray()) {
    const auto i = static_cast<std::size_t>(num(c, "index"));
    if (i > 1024) continue;
    if (calls.size() <= i) calls.resize(i + 1);
    if (auto id = str(c, "id"); !id.empty()) calls[i].id = id;
    if (const Value* f = object_at(c, "function")) {
      calls[i].name.append(str(*f, "name"));
      calls[i].arguments.append(str(*f, "arguments"));
    }
  }
}

class OpenAiChatSseMerge final : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string& out) override {
    splitter_.feed(bytes, [&](const json::SseEvent& ev) { on_event(ev, out); });
  }

  const std::vector<RecallCall>& end_round(std::string& out) override {
    splitter_.finish([&](const json::SseEvent& ev) { on_event(ev, out); });
    recall_calls_.clear();
    for (const auto& c : calls_)
      if (c.name == kRecallToolName) recall_calls_.push_back({c.id, c.arguments});
    if (recall_calls_.empty()) finish(out);
    return recall_calls_;
  }

  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    if (!json::append_to_array_member(body, "messages",
                                      continuation_messages(content_, reasoning_, recall_calls_, results)))
      return false;
    ++round_;
    content_.clear();
    reasoning_.clear();
    calls_.clear();
    held_.clear();  // the round's end stays held: a continuation that fails ends with it
    return true;
  }

  // The held client calls released, the recall calls never (the round cap,
  // a failed continuation): with no client call left, the turn stopped.
  void finish(std::string& out) override {
    const bool recalls = std::any_of(calls_.begin(), calls_.end(), [](const ToolCall& c) { return is_recall(c); });
    const bool client_calls =
        std::any_of(calls_.begin(), calls_.end(), [](const ToolCall& c) { return !is_recall(c); });
    for (const auto& e : held_) {
      if (recalls)
        write_without_recalls(e, out);
      else
        write(e, out);
    }
    held_.clear();
    const bool rewrite_end = round_ > 0 || recalls;
    for (const auto& e : end_) {
      Document d;
      if (!rewrite_end || !parse(event_data(e), d) || !d.IsObject()) {
        write(e, out);
        continue;
      }
      auto& a = d.GetAllocator();
      if (round_ > 0 && has_usage_ && object_at(d, "usage")) set(d, "usage", Value(total_, a), a);
      if (round_ > 0 && !first_id_.empty() && d.HasMember("id")) set(d, "id", Value(first_id_.c_str(), a), a);
      if (!client_calls && d.HasMember("choices") && d["choices"].IsArray())
        for (auto& c : d["choices"].GetArray())
          if (str(c, "finish_reason") == "tool_calls") set(c, "finish_reason", Value("stop"), a);
      append_event(out, "", to_json(d));
    }
    end_.clear();
    calls_.clear();
  }

 private:
  // An event of a round after the first gets the first round's chunk id.
  void write(const std::string& raw, std::string& out) {
    Document d;
    if (round_ == 0 || first_id_.empty() || !parse(event_data(raw), d) || !d.IsObject() || !d.HasMember("id")) {
      out.append(raw);
      return;
    }
    set(d, "id", Value(first_id_.c_str(), d.GetAllocator()), d.GetAllocator());
    append_event(out, "", to_json(d));
  }

  // A held chunk without its recall calls' deltas, the client's calls
  // numbered as if the recall calls had not been made; nothing when nothing
  // else is left of it.
  void write_without_recalls(const std::string& raw, std::string& out) {
    Document d;
    if (!parse(event_data(raw), d) || !d.IsObject() || !d.HasMember("choices") || !d["choices"].IsArray() ||
        d["choices"].Empty() || !d["choices"][0].IsObject() || !d["choices"][0].HasMember("delta") ||
        !d["choices"][0]["delta"].IsObject()) {
      write(raw, out);
      return;
    }
    Value& delta = d["choices"][0]["delta"];
    auto tc = delta.FindMember("tool_calls");
    if (tc == delta.MemberEnd() || !tc->value.IsArray()) return write(raw, out);
    Value& list = tc->value;
    for (auto it = list.Begin(); it != list.End();) {
      const auto i = static_cast<std::size_t>(num(*it, "index"));
      if (i < calls_.size() && is_recall(calls_[i])) {
        it = list.Erase(it);
        continue;
      }
      std::int64_t client_index = 0;
      for (std::size_t j = 0; j < i && j < calls_.size(); ++j) client_index += is_recall(calls_[j]) ? 0 : 1;
      if (it->IsObject() && it->HasMember("index")) (*it)["index"].SetInt64(client_index);
      ++it;
    }
    if (list.Empty()) {
      delta.RemoveMember("tool_calls");
      if (delta.ObjectEmpty()) return;  // a chunk of the recall calls alone
    }
    if (round_ > 0 && !first_id_.empty() && d.HasMember("id"))
      set(d, "id", Value(first_id_.c_str(), d.GetAllocator()), d.GetAllocator());
    append_event(out, "", to_json(d));
  }

  static bool is_recall(const ToolCall& c) { return c.name == kRecallToolName; }

  // The round's end (finish chunk, usage chunk, [DONE]): a later round's replaces an earlier one's.
  void hold_end(std::string_view raw) {
    if (end_round_ != round_) end_.clear();
    end_round_ = round_;
    end_.emplace_back(raw);
  }

  void on_event(const json::SseEvent& ev, std::string& out) {
    Document d;
    if (ev.has_data && ev.data == "[DONE]") {
      hold_end(ev.raw);
      return;
    }
    if (ev.continuation || ev.overflow || !ev.has_data || !parse(ev.data, d) || !d.IsObject()) {
      out.append(ev.raw);
      return;
    }
    if (first_id_.empty()) first_id_ = str(d, "id");
    if (const Value* usage = object_at(d, "usage")) {
      add_counts(total_, *usage, total_.GetAllocator());
      has_usage_ = true;
    }
    const Value* choice = nullptr;
    if (d.HasMember("choices") && d["choices"].IsArray() && !d["choices"].Empty() && d["choices"][0].IsObject())
      choice = &d["choices"][0];
    const bool usage_only = !choice && object_at(d, "usage");
    if (usage_only || (choice && choice->HasMember("finish_reason") && !(*choice)["finish_reason"].IsNull())) {
      hold_end(ev.raw);
      return;
    }
    if (const Value* found = choice ? object_at(*choice, "delta") : nullptr) {
      const Value& delta = *found;
      content_.append(str(delta, "content"));
      reasoning_.append(str(delta, "reasoning_content"));
      if (delta.HasMember("tool_calls")) {
        add_tool_deltas(delta, calls_);
        held_.emplace_back(ev.raw);
        return;
      }
    }
    if (round_ > 0)
      write(std::string(ev.raw), out);
    else
      out.append(ev.raw);
  }

  json::SseSplitter splitter_;
  unsigned round_ = 0;
  std::string first_id_;
  std::string content_, reasoning_;  // this round's, for its assistant turn
  std::vector<ToolCall> calls_;      // this round's, by index
  std::vector<RecallCall> recall_calls_;
  std::vector<std::string> held_;  // events carrying tool calls
  std::vector<std::string> end_;   // finish chunk, usage chunk, [DONE]
  unsigned end_round_ = 0;         // the round end_ is of
  Document total_{rapidjson::kObjectType};
  bool has_usage_ = false;
};

// A chat.completion per round: the merged body is the last round's, its
// content every round's text in order, usage summed, the first round's id.
class OpenAiChatJsonMerge final : public JsonRoundsMerge {
 public:
  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    const std::string content(str(*message(), "content"));
    if (!json::append_to_array_member(
            body, "messages",
            continuation_messages(content, std::string(str(*message(), "reasoning_content")), calls_, results)))
      return false;
    text_ += content;
    keep_round();
    return true;
  }

 private:
  Value* message() {
    if (!round_.HasMember("choices") || !round_["choices"].IsArray() || round_["choices"].Empty()) return nullptr;
    Value& c = round_["choices"][0];
    return object_at(c, "message");
  }

  bool well_formed() override { return message() != nullptr; }
  void collect_recall_calls() override {
    if (auto tc = message()->FindMember("tool_calls"); tc != message()->MemberEnd() && tc->value.IsArray())
      for (auto& c : tc->value.GetArray())
        if (is_recall_call(c))
          calls_.push_back({std::string(str(c, "id")), std::string(str(c["function"], "arguments"))});
  }
  void drop_recall_calls() override {
    Value* m = message();
    auto tc = m->FindMember("tool_calls");
    if (tc == m->MemberEnd() || !tc->value.IsArray()) return;
    Value& list = tc->value;
    for (auto it = list.Begin(); it != list.End();) it = is_recall_call(*it) ? list.Erase(it) : it + 1;
    if (!list.Empty()) return;
    m->RemoveMember("tool_calls");
    Value& choice = round_["choices"][0];
    if (str(choice, "finish_reason") == "tool_calls")
      set(choice, "finish_reason", Value("stop"), round_.GetAllocator());
  }
  void carry_over() override { text_ += str(*message(), "content"); }
  void write_merged(Document::AllocatorType& a) override {
    set(*message(), "content", Value(text_.c_str(), static_cast<rapidjson::SizeType>(text_.size()), a), a);
    if (continued_) {  // a failed continuation: the round's calls stay out, so it stopped
      message()->RemoveMember("tool_calls");
      Value& choice = round_["choices"][0];
      if (str(choice, "finish_reason") == "tool_calls") set(choice, "finish_reason", Value("stop"), a);
    }
    if (round_.HasMember("usage")) set(round_, "usage", Value(total_, a), a);
    set(round_, "id", Value(first_id_.c_str(), a), a);
  }

  std::string text_;  // the text of the rounds carried over, in order
};

}  // namespace

std::unique_ptr<RecallMerge> make_openai_chat_merge(bool sse) {
  if (sse) return std::make_unique<OpenAiChatSseMerge>();
  return std::make_unique<OpenAiChatJsonMerge>();
}

}  // namespace td::providers
