// RecallMerge for Gemini generateContent / streamGenerateContent (docs/design.md
// §Recall): chunks in order under the first round's responseId, the recall
// call's part cut from its chunk, usageMetadata summed over the rounds (every
// later chunk carries the rounds before it, so the last one counts all), the
// finishReason of the last round. A JSON body (one response, or the stream's
// array of them) is merged whole: its chunks' parts, in order.
#include "json/json_append.hpp"
#include "providers/recall_merge.hpp"
#include "providers/recall_merge_common.hpp"
#include "providers/recall_tool.hpp"

namespace td::providers {
namespace {

using namespace recall_merge;

Value* parts_of(Value& chunk) {
  if (!chunk.IsObject() || !chunk.HasMember("candidates") || !chunk["candidates"].IsArray() ||
      chunk["candidates"].Empty())
    return nullptr;
  Value& c = chunk["candidates"][0];
  if (!c.IsObject() || !c.HasMember("content") || !c["content"].IsObject() || !c["content"].HasMember("parts"))
    return nullptr;
  Value& p = c["content"]["parts"];
  return p.IsArray() ? &p : nullptr;
}

bool finishes(const Value& chunk) {
  return chunk.HasMember("candidates") && chunk["candidates"].IsArray() && !chunk["candidates"].Empty() &&
         chunk["candidates"][0].IsObject() && chunk["candidates"][0].HasMember("finishReason");
}

// The rounds as chunks: what the client gets, the turn that continues a round.
class GeminiRounds {
 public:
  // Takes `chunk` of the current round: its recall and client calls cut out
  // (kept), its other parts into the turn; its usage made the rounds' sum and
  // its responseId the first round's. False when nothing is left to send;
  // `changed` says whether the chunk is no longer the bytes it came as.
  bool take(Document& chunk, bool& changed) {
    if (!chunk.IsObject()) {  // not a response chunk: as it came
      changed = false;
      return true;
    }
    auto& a = chunk.GetAllocator();
    changed = rounds_ > 0;  // a later round's chunk: its id and usage are rewritten
    if (first_id_.empty())
      first_id_ = str(chunk, "responseId");
    else if (chunk.HasMember("responseId"))
      set(chunk, "responseId", Value(first_id_.c_str(), a), a);
    bool had_parts = false;
    if (Value* parts = parts_of(chunk)) {
      had_parts = !parts->Empty();
      Value kept(rapidjson::kArrayType);
      for (auto& p : parts->GetArray()) {
        const bool call = object_at(p, "functionCall") != nullptr;
        if (call && str(p["functionCall"], "name") == kRecallToolName) {
          // Never the client's: into the turn that continues the round only.
          const auto& fc = p["functionCall"];
          calls_.push_back({std::string(str(fc, "id")), fc.HasMember("args") ? to_json(fc["args"]) : "{}"});
          turn_.push_back(to_json(p));
          changed = true;
        } else if (call) {
          held_.PushBack(Value(p, held_.GetAllocator()), held_.GetAllocator());  // the client's: until the round ends
          changed = true;
        } else {
          turn_.push_back(to_json(p));
          kept.PushBack(Value(p, a), a);
        }
      }
      *parts = kept;
    }
    if (chunk.HasMember("usageMetadata") && chunk["usageMetadata"].IsObject()) {
      round_usage_.CopyFrom(chunk["usageMetadata"], round_usage_.GetAllocator());
      Value sum(total_, a);
      add_counts(sum, chunk["usageMetadata"], a);
      chunk["usageMetadata"] = sum;
    }
    const Value* parts = parts_of(chunk);
    return !had_parts || (parts && !parts->Empty()) || finishes(chunk);
  }

  // The held client calls back into `chunk` (the round's last), as they came.
  void release_into(Document& chunk) {
    Value* parts = parts_of(chunk);
    if (!parts) return;
    for (auto& p : held_.GetArray()) parts->PushBack(Value(p, chunk.GetAllocator()), chunk.GetAllocator());
    held_.Clear();
  }

  bool continue_with(std::string& body, const std::vector<std::string>& results) {
    std::string s = R"({"role":"model","parts":[)";
    for (std::size_t i = 0; i < turn_.size(); ++i) s.append(i ? "," : "").append(turn_[i]);
    s.append(R"(]},{"role":"user","parts":[)");
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      s.append(i ? "," : "").append(R"({"functionResponse":{)");
      if (!calls_[i].call_id.empty()) {
        s.append(R"("id":)");
        json::append_json_string(s, calls_[i].call_id);
        s.append(",");
      }
      s.append(R"("name":")").append(kRecallToolName).append(R"(","response":{"output":)");
      json::append_json_string(s, i < results.size() ? results[i] : std::string());
      s.append("}}}");
    }
    s.append("]}");
    if (!json::append_to_array_member(body, "contents", s)) return false;
    add_counts(total_, round_usage_, total_.GetAllocator());
    round_usage_.SetObject();
    turn_.clear();
    calls_.clear();
    held_.Clear();
    ++rounds_;
    return true;
  }

  const std::vector<RecallCall>& calls() const { return calls_; }
  bool holds_calls() const { return !held_.Empty(); }
  unsigned rounds() const { return rounds_; }

 private:
  std::string first_id_;
  std::vector<std::string> turn_;  // this round's parts, the recall calls included
  std::vector<RecallCall> calls_;
  Document held_{rapidjson::kArrayType};  // this round's client call parts, in order
  Document round_usage_{rapidjson::kObjectType};
  Document total_{rapidjson::kObjectType};  // the rounds continued
  unsigned rounds_ = 0;
};

class GeminiSseMerge final : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string& out) override {
    splitter_.feed(bytes, [&](const json::SseEvent& ev) { on_event(ev, out); });
  }
  const std::vector<RecallCall>& end_round(std::string& out) override {
    splitter_.finish([&](const json::SseEvent& ev) { on_event(ev, out); });
    if (rounds_.calls().empty()) finish(out);
    return rounds_.calls();
  }
  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    return rounds_.continue_with(body, results);
  }
  void finish(std::string& out) override {
    if (last_.empty()) return;
    Document d;
    if (!rounds_.holds_calls() && last_is_raw_)
      out.append(last_raw_);  // as it came
    else if (parse(last_, d)) {
      rounds_.release_into(d);
      append_event(out, "", to_json(d));
    }
    last_.clear();
  }

 private:
  void on_event(const json::SseEvent& ev, std::string& out) {
    Document d;
    if (ev.continuation || ev.overflow || !ev.has_data || !parse(ev.data, d) || !d.IsObject()) {
      out.append(ev.raw);
      return;
    }
    bool changed = false;
    if (!rounds_.take(d, changed)) return;  // nothing left of it (a call alone)
    // The chunk before this one is not the round's last: it goes out now.
    flush_last(out);
    last_ = changed ? to_json(d) : std::string(ev.data);
    last_raw_.assign(ev.raw);
    last_is_raw_ = !changed;
  }
  void flush_last(std::string& out) {
    if (last_.empty()) return;
    if (last_is_raw_)
      out.append(last_raw_);
    else
      append_event(out, "", last_);
    last_.clear();
  }

  json::SseSplitter splitter_;
  GeminiRounds rounds_;
  std::string last_, last_raw_;  // the newest chunk, held: it may be the round's end
  bool last_is_raw_ = false;
};

class GeminiJsonMerge final : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string& out) override { body_.append(bytes); }
  const std::vector<RecallCall>& end_round(std::string& out) override {
    Document d;
    if (!parse(body_, d) || !(d.IsObject() || d.IsArray())) {
      out.append(body_);
      body_.clear();
      return none_;
    }
    array_ = d.IsArray();
    Value chunks(rapidjson::kArrayType);
    if (array_) {
      for (auto& c : d.GetArray()) chunks.PushBack(Value(c, d.GetAllocator()), d.GetAllocator());
    } else {
      chunks.PushBack(Value(d, d.GetAllocator()), d.GetAllocator());
    }
    for (auto& c : chunks.GetArray()) {
      Document one;
      one.CopyFrom(c, one.GetAllocator());
      bool changed = false;
      if (rounds_.take(one, changed)) round_.push_back(to_json(one));
    }
    if (rounds_.calls().empty()) finish(out);
    return rounds_.calls();
  }
  bool continue_with(std::string& body, const std::vector<std::string>& results) override {
    if (!rounds_.continue_with(body, results)) return false;
    for (auto& c : round_) kept_.push_back(std::move(c));
    round_.clear();
    body_.clear();
    return true;
  }
  void finish(std::string& out) override {
    if (rounds_.rounds() == 0 && rounds_.calls().empty()) {
      out.append(body_);  // one round, nothing cut: as it came
      body_.clear();
      return;
    }
    std::vector<std::string> all = kept_;
    if (!round_.empty()) {  // else a continuation failed: the rounds kept end it
      Document last;
      if (parse(round_.back(), last)) {
        rounds_.release_into(last);
        round_.back() = to_json(last);
      }
      all.insert(all.end(), round_.begin(), round_.end());
    }
    if (!all.empty()) {
      if (array_) {
        out.append("[");
        for (std::size_t i = 0; i < all.size(); ++i) out.append(i ? "," : "").append(all[i]);
        out.append("]");
      } else {
        out.append(merged_object(all));
      }
    }
    body_.clear();
    round_.clear();
    kept_.clear();
  }

 private:
  // One generateContent response from the rounds': the last one, with every
  // round's parts in order.
  static std::string merged_object(const std::vector<std::string>& rounds) {
    Document last;
    if (!parse(rounds.back(), last)) return rounds.back();
    Value parts(rapidjson::kArrayType);
    for (const auto& r : rounds) {
      Document d;
      if (!parse(r, d)) continue;
      if (Value* p = parts_of(d))
        for (auto& x : p->GetArray()) parts.PushBack(Value(x, last.GetAllocator()), last.GetAllocator());
    }
    if (Value* p = parts_of(last)) *p = parts;
    return to_json(last);
  }

  std::string body_;
  bool array_ = false;
  GeminiRounds rounds_;
  std::vector<std::string> round_, kept_;  // chunks of this round, of the rounds continued
  std::vector<RecallCall> none_;
};

}  // namespace

std::unique_ptr<RecallMerge> make_gemini_merge(bool sse) {
  if (sse) return std::make_unique<GeminiSseMerge>();
  return std::make_unique<GeminiJsonMerge>();
}

}  // namespace td::providers
