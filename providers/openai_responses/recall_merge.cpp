// RecallMerge for OpenAI Responses (docs/design.md §Recall): one
// response.created and one response.completed (the first round's id, every
// round's output items but the recall calls, usage summed), output_index and
// sequence_number counted across the rounds. Function-call items are held
// until their round ends.
#include <map>

#include "json/json_append.hpp"
#include "json/json_scan.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/recall_tool.hpp"

namespace td::providers {
namespace {

using namespace recall_merge;

bool is_call(const Value& item) { return str(item, "type") == "function_call"; }
bool is_recall_call(const Value& item) { return is_call(item) && str(item, "name") == kRecallToolName; }

// The round's output items and a function_call_output per call, appended to
// the request's input (a string input becomes its user message first).
bool append_input(std::string& body, const std::vector<std::string>& items, const std::vector<RecallCall>& calls,
                  const std::vector<std::string>& results) {
  std::string s;
  for (const auto& item : items) s.append(s.empty() ? "" : ",").append(item);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    s.append(s.empty() ? "" : ",").append(R"({"type":"function_call_output","call_id":)");
    json::append_json_string(s, calls[i].call_id);
    s.append(R"(,"output":)");
    json::append_json_string(s, i < results.size() ? results[i] : std::string());
    s.append("}");
  }
  for (const auto& m : json::top_level_members(body)) {
    if (m.key != "input" || m.value.empty() || m.value.front() != '"') continue;
    const std::string first = R"({"role":"user","content":)" + std::string(m.value) + "}";
    body.replace(m.value_pos, m.value.size(), "[" + first + "," + s + "]");
    return true;
  }
  return json::append_to_array_member(body, "input", s);
}

class ResponsesSseMerge final : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string& out) override {
    splitter_.feed(bytes, [&](const json::SseEvent& ev) { on_event(ev, out); });
  }

  const std::vector<RecallCall>& end_round(std::string& out) override {
    splitter_.finish([&](const json::SseEvent& ev) { on_event(ev, out); });
    calls_.clear();
    for (auto& [i, it] : items_)
      if (it.recall) calls_.push_back({std::string(str(it.done, "call_id")), std::string(str(it.done, "arguments"))});
    if (calls_.empty()) finish(out);
    return calls_;
  }

  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    std::vector<std::string> turn;
    for (auto& [i, it] : items_)
      if (!it.held || it.recall) turn.push_back(to_json(it.done));
    if (!append_input(body, turn, calls_, results)) return false;
    // The round's usage counted once: its end stays held (a continuation that fails ends with it).
    if (Value* response = object_at(end_, "response")) {
      if (const Value* usage = object_at(*response, "usage")) {
        add_counts(total_, *usage, total_.GetAllocator());
        response->RemoveMember("usage");
      }
    }
    ++round_;
    items_.clear();
    calls_.clear();
    return true;
  }

  // The held client calls released, the recall calls never (the round cap,
  // a failed continuation).
  void finish(std::string& out) override {
    bool recalls = false;
    for (auto& [i, it] : items_) {
      if (it.held && !it.recall) release(it, out);
      recalls = recalls || it.recall;
    }
    items_.clear();
    if (!end_.IsObject()) return;
    if (round_ == 0 && !recalls) {  // one round: its end as it came
      write(end_name_, end_, out, end_raw_);
      end_.SetNull();
      return;
    }
    auto& a = end_.GetAllocator();
    if (Value* response = object_at(end_, "response")) {
      Value& r = *response;
      if (round_ > 0) {
        if (const Value* usage = object_at(r, "usage")) add_counts(total_, *usage, total_.GetAllocator());
        set(r, "usage", Value(total_, a), a);
        set(r, "id", Value(first_id_.c_str(), a), a);
      }
      Value output(rapidjson::kArrayType);
      for (auto& item : output_.GetArray()) output.PushBack(Value(item, a), a);
      set(r, "output", std::move(output), a);
    }
    write(end_name_, end_, out);
    end_.SetNull();
  }

 private:
  struct Item {
    bool held = false, recall = false;
    int client_index = -1;
    Document done;                           // the item as response.output_item.done gave it
    std::vector<std::string> events, names;  // held: its events
  };

  // With the sequence number the client expects next (and, for an item's
  // event, its output index): as it came when those are unchanged.
  void write(std::string_view name, Document& d, std::string& out, std::string_view raw = {}) {
    if (!seq_known_ && d.HasMember("sequence_number")) {  // the upstream's own first number (0 or 1)
      seq_ = num(d, "sequence_number");
      seq_known_ = true;
    }
    const std::int64_t seq = seq_++;
    if (!raw.empty() && num(d, "sequence_number") == seq) {
      out.append(raw);
      return;
    }
    if (d.HasMember("sequence_number")) d["sequence_number"].SetInt64(seq);
    append_event(out, name, to_json(d));
  }

  void release(Item& it, std::string& out) {
    it.client_index = next_index_++;
    add_output(it.done);
    for (std::size_t i = 0; i < it.events.size(); ++i) {
      Document d;
      if (!parse(it.events[i], d) || !d.IsObject()) continue;
      if (d.HasMember("output_index")) d["output_index"].SetInt(it.client_index);
      write(it.names[i], d, out);
    }
  }

  void add_output(const Value& item) { output_.PushBack(Value(item, output_.GetAllocator()), output_.GetAllocator()); }

  void on_event(const json::SseEvent& ev, std::string& out) {
    Document d;
    if (ev.continuation || ev.overflow || !ev.has_data || !parse(ev.data, d) || !d.IsObject()) {
      out.append(ev.raw);
      return;
    }
    const std::string_view type = str(d, "type");
    if (type == "response.created" || type == "response.in_progress" || type == "response.queued") {
      if (first_id_.empty() && d.HasMember("response")) first_id_ = str(d["response"], "id");
      if (round_ == 0) write(ev.name, d, out, ev.raw);
      return;
    }
    if (type == "response.completed" || type == "response.incomplete" || type == "response.failed") {
      end_.CopyFrom(d, end_.GetAllocator());
      end_name_ = ev.name;
      end_raw_ = ev.raw;
      return;
    }
    if (!d.HasMember("output_index")) {
      write(ev.name, d, out, ev.raw);
      return;
    }
    const int index = static_cast<int>(num(d, "output_index"));
    Item& it = items_[index];
    if (type == "response.output_item.added" && d.HasMember("item") && is_call(d["item"])) {
      it.held = true;
      it.recall = is_recall_call(d["item"]);
    }
    if (type == "response.output_item.done" && d.HasMember("item")) {
      it.done.CopyFrom(d["item"], it.done.GetAllocator());
      if (!it.held) add_output(it.done);
    }
    if (it.held) {
      it.events.emplace_back(ev.data);
      it.names.emplace_back(ev.name);
      return;
    }
    if (it.client_index < 0) it.client_index = next_index_++;
    const bool same = it.client_index == index;
    if (!same) d["output_index"].SetInt(it.client_index);
    write(ev.name, d, out, same ? ev.raw : std::string_view{});
  }

  json::SseSplitter splitter_;
  unsigned round_ = 0;
  std::int64_t seq_ = 0;    // the client's next sequence number
  bool seq_known_ = false;  // seq_ starts at the upstream's first
  int next_index_ = 0;      // the client's next output index
  std::string first_id_;
  std::map<int, Item> items_;  // this round's, by upstream output index
  std::vector<RecallCall> calls_;
  Document output_{rapidjson::kArrayType};  // every item the client got
  Document end_;                            // the round's response.completed, held
  std::string end_name_, end_raw_;
  Document total_{rapidjson::kObjectType};
};

// A response per round: the merged one is the last round's, with every
// round's output items but the recall calls, usage summed, the first id.
class ResponsesJsonMerge final : public JsonRoundsMerge {
 public:
  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    std::vector<std::string> turn;
    for (auto& item : round_["output"].GetArray()) {
      if (is_call(item) && !is_recall_call(item)) continue;
      turn.push_back(to_json(item));
      if (!is_call(item)) output_.PushBack(Value(item, output_.GetAllocator()), output_.GetAllocator());
    }
    if (!append_input(body, turn, calls_, results)) return false;
    keep_round();
    return true;
  }

 private:
  bool well_formed() override { return round_.HasMember("output") && round_["output"].IsArray(); }
  void collect_recall_calls() override {
    for (auto& item : round_["output"].GetArray())
      if (is_recall_call(item))
        calls_.push_back({std::string(str(item, "call_id")), std::string(str(item, "arguments"))});
  }
  void drop_recall_calls() override {
    Value& output = round_["output"];
    for (auto it = output.Begin(); it != output.End();) it = is_recall_call(*it) ? output.Erase(it) : it + 1;
  }
  void carry_over() override {
    for (auto& item : round_["output"].GetArray())
      output_.PushBack(Value(item, output_.GetAllocator()), output_.GetAllocator());
  }
  void write_merged(Document::AllocatorType& a) override {
    set(round_, "output", Value(output_, a), a);
    set(round_, "usage", Value(total_, a), a);
    set(round_, "id", Value(first_id_.c_str(), a), a);
  }

  Document output_{rapidjson::kArrayType};  // every round's items but the calls of the rounds continued
};

}  // namespace

std::unique_ptr<RecallMerge> make_responses_merge(bool sse) {
  if (sse) return std::make_unique<ResponsesSseMerge>();
  return std::make_unique<ResponsesJsonMerge>();
}

}  // namespace td::providers
