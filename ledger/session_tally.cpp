#include "ledger/session_tally.hpp"

#include <algorithm>
#include <tuple>

namespace td::ledger {
namespace {

std::string_view view(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string_view(reinterpret_cast<const char*>(t), static_cast<std::size_t>(sqlite3_column_bytes(s, col)))
           : std::string_view();
}

}  // namespace

std::string session_columns(const std::function<std::string(std::string_view)>& col) {
  return "id, " + col("session_key") + ", session, model, " + col("arm") + ", " + col("input_cost_usd") +
         ", usage_present, prompt_tokens, cached_read_tokens, cache_write_tokens, " + col("rereads") + ", " +
         col("recall_rounds") + ", " + col("context_errors") + ", status";
}

SessionRow session_row(sqlite3_stmt* s, int c) {
  SessionRow r;
  r.id = sqlite3_column_int64(s, c++);
  r.session_key = view(s, c++);
  r.session = view(s, c++);
  r.model = view(s, c++);
  r.arm = view(s, c++);
  if (sqlite3_column_type(s, c) != SQLITE_NULL) r.cost = sqlite3_column_double(s, c);
  ++c;
  r.usage_present = sqlite3_column_int64(s, c++) != 0;
  for (std::int64_t* v :
       {&r.prompt, &r.cached_read, &r.cache_write, &r.rereads, &r.recall_rounds, &r.context_errors, &r.status})
    *v = sqlite3_column_int64(s, c++);
  return r;
}

std::size_t SessionTally::find(const SessionRow& r) {
  if (r.model.empty() || r.arm == "shadow") return kNone;
  // The session: its key, else its id, else the row alone.
  key_.clear();
  if (!r.session_key.empty())
    key_.append("k:").append(r.session_key);
  else if (!r.session.empty())
    key_.append("s:").append(r.session);
  else
    key_.append("r:").append(std::to_string(r.id));
  const std::size_t unit_size = key_.size();
  const std::string_view arm = r.arm == "control" ? "control" : "treatment";
  key_.append(1, '\0').append(r.model).append(1, '\0').append(arm);
  auto [it, added] = index_.try_emplace(key_, sums_.size());
  if (added) {
    SessionSums s;
    s.unit = key_.substr(0, unit_size);
    s.model = std::string(r.model);
    s.arm = std::string(arm);
    sums_.push_back(std::move(s));
  }
  return it->second;
}

void SessionTally::add(std::size_t at, const SessionRow& r) {
  SessionSums& s = sums_[at];
  ++s.requests;
  if (r.cost) {
    s.cost_usd += *r.cost;
  } else {
    s.unpriced += r.usage_present;
    s.prompt += r.prompt;
    s.cached_read += r.cached_read;
    s.cache_write += r.cache_write;
  }
  s.rereads += r.rereads;
  s.recall_rounds += r.recall_rounds;
  s.context_errors += r.context_errors;
  s.rate_limited += r.status == 429;
}

namespace {

std::vector<SessionSums> in_order(std::vector<SessionSums> out) {
  std::sort(out.begin(), out.end(), [](const SessionSums& a, const SessionSums& b) {
    return std::tie(a.unit, a.model, a.arm) < std::tie(b.unit, b.model, b.arm);
  });
  return out;
}

}  // namespace

std::vector<SessionSums> SessionTally::take() {
  std::vector<SessionSums> out = std::move(sums_);
  sums_.clear();
  index_.clear();
  return in_order(std::move(out));
}

std::vector<SessionSums> SessionTally::sorted() const { return in_order(sums_); }

}  // namespace td::ledger
