// Helpers shared by the formats' RecallMerge implementations (internal to providers/).
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_strings.hpp"
#include "providers/recall_merge.hpp"
#include "json/sse.hpp"
#include "pruning/json_nesting.hpp"

namespace td::providers {

// Each format's merge, in its folder's recall_merge.cpp (its FormatAdapter's recall_merge).
std::unique_ptr<RecallMerge> make_anthropic_merge(bool sse);
std::unique_ptr<RecallMerge> make_openai_chat_merge(bool sse);
std::unique_ptr<RecallMerge> make_responses_merge(bool sse);
std::unique_ptr<RecallMerge> make_gemini_merge(bool sse);

}  // namespace td::providers

namespace td::providers::recall_merge {

using rapidjson::Document;
using rapidjson::Value;

inline std::string to_json(const Value& v) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  v.Accept(w);
  return {sb.GetString(), sb.GetSize()};
}

// Parses `json` into `d`; false for what is not JSON (or nested too deep).
inline bool parse(std::string_view json, Document& d) {
  if (!pruning::json_nesting_within(json)) return false;
  d.Parse(json.data(), json.size());
  return !d.HasParseError();
}

inline std::string_view str(const Value& obj, const char* key) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

// obj[key] when `obj` is an object whose `key` is an object, else null: the
// bodies merged are the upstream's, of any shape, and RapidJSON's operator[]
// on a missing member or a non-object is undefined.
inline Value* object_at(Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}
inline const Value* object_at(const Value& obj, const char* key) { return object_at(const_cast<Value&>(obj), key); }

inline std::int64_t num(const Value& obj, const char* key) {
  if (!obj.IsObject()) return 0;
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
}

// Sets obj[key] (an object) to `v`, adding the member if missing.
inline void set(Value& obj, const char* key, Value v, Document::AllocatorType& a) {
  auto it = obj.FindMember(key);
  if (it != obj.MemberEnd())
    it->value = v;
  else
    obj.AddMember(Value(key, a), v, a);
}

// The data of an event as an json::SseSplitter handed it over (its raw bytes): the
// one "data:" line the providers send.
inline std::string_view event_data(std::string_view raw) {
  auto p = raw.find("data:");
  if (p == std::string_view::npos) return {};
  raw.remove_prefix(p + 5);
  if (!raw.empty() && raw.front() == ' ') raw.remove_prefix(1);
  return raw.substr(0, raw.find('\n'));
}

// One SSE event: "event: name\n" (when named) and "data: json\n\n".
inline void append_event(std::string& out, std::string_view name, std::string_view data) {
  if (!name.empty()) out.append("event: ").append(name).append("\n");
  out.append("data: ").append(data).append("\n\n");
}

// Adds each integer member of `from` to the same member of `into` (created
// when missing); nested objects are summed member by member.
inline void add_counts(Value& into, const Value& from, Document::AllocatorType& a) {
  if (!into.IsObject() || !from.IsObject()) return;
  for (auto& m : from.GetObject()) {
    auto it = into.FindMember(m.name);
    if (m.value.IsInt64()) {
      if (it == into.MemberEnd())
        into.AddMember(Value(m.name, a), Value(m.value.GetInt64()), a);
      else if (it->value.IsInt64())
        it->value.SetInt64(it->value.GetInt64() + m.value.GetInt64());
      else if (it->value.IsNull())
        it->value.SetInt64(m.value.GetInt64());
    } else if (m.value.IsObject()) {
      if (it == into.MemberEnd())
        into.AddMember(Value(m.name, a), Value(m.value, a), a);
      else
        add_counts(it->value, m.value, a);
    }
  }
}

// The JSON (not streamed) merges of the formats with one object per round
// (Anthropic, Responses, OpenAI chat): the merged body is the last round's,
// with what the format carries over from the rounds continued (content
// blocks, output items, text), usage summed and the first round's id. A
// format says what a round is, which of its calls are recalls, what it
// carries over and how the merged body is written.
class JsonRoundsMerge : public RecallMerge {
 public:
  void feed(std::string_view bytes, std::string&) override { body_.append(bytes); }

  const std::vector<RecallCall>& end_round(std::string& out) override {
    calls_.clear();
    continued_ = false;
    if (!parse(body_, round_) || !round_.IsObject() || !well_formed()) {
      out.append(body_);  // not one of the format's bodies: as it came
      body_.clear();
      return calls_;
    }
    if (rounds_ == 0) first_id_ = std::string(str(round_, "id"));
    collect_recall_calls();
    if (calls_.empty()) finish(out);
    return calls_;
  }

  // The recall calls never reach the client (the round cap, a failed
  // continuation); a turn left without client calls ended.
  void finish(std::string& out) override {
    if (!round_.IsObject()) return;  // nothing to end (not one of the format's bodies)
    if (rounds_ == 0 && calls_.empty()) {
      out.append(body_);  // one round: as it came
    } else {
      if (!continued_) {  // else this round was carried over already (its continuation failed)
        drop_recall_calls();
        carry_over();
        add_usage();
      }
      write_merged(round_.GetAllocator());
      out.append(to_json(round_));
    }
    body_.clear();
    round_.SetNull();
  }

 protected:
  // round_ (an object) is a body of the format.
  virtual bool well_formed() = 0;
  // Appends the round's tokendiet_recall calls to calls_.
  virtual void collect_recall_calls() = 0;
  // Takes the tokendiet_recall calls out of round_ (a round ending without its continuation).
  virtual void drop_recall_calls() = 0;
  // Takes what the client gets of round_ (the last round, not continued) into the carried-over state.
  virtual void carry_over() = 0;
  // Writes the carried-over state, total_ and first_id_ into round_.
  virtual void write_merged(Document::AllocatorType& a) = 0;

  // After continue_with() appended the turn: the round is counted and its usage summed.
  void keep_round() {
    ++rounds_;
    add_usage();
    body_.clear();
    continued_ = true;
  }

  void add_usage() {
    if (auto it = round_.FindMember("usage"); it != round_.MemberEnd())
      add_counts(total_, it->value, total_.GetAllocator());
  }

  std::string body_;  // this round's bytes
  Document round_;
  std::vector<RecallCall> calls_;
  unsigned rounds_ = 0;     // rounds continued
  bool continued_ = false;  // round_ was continued (and carried over)
  std::string first_id_;
  Document total_{rapidjson::kObjectType};  // usage of the rounds carried over
};

}  // namespace td::providers::recall_merge
