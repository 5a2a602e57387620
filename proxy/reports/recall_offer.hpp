// The recall offer (proxy/filters/recall_offer_filter.hpp): a request that
// went out with notices naming what its cuts hid (or tombstones) and the
// tokendiet_recall tool; the recall filter answers the model's recall calls
// from it (docs/design.md §Recall).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pruning/archived_output.hpp"
#include "pruning/snip.hpp"

namespace td::proxy {

// What one round of the recall loop may answer (docs/design.md §Recall,
// bounds): the profile's recall_max_calls and recall_max_answer_bytes (the
// defaults here are the profile's), and the proxy's limits.max_body_bytes
// for the continuation's body (0: none).
struct RecallLimits {
  std::uint32_t max_calls = 4;
  std::size_t max_answer_bytes = 16384;
  std::uint64_t max_body_bytes = 0;
};

// Where the loop reads archived outputs back.
struct RecallSource {
  virtual ~RecallSource() = default;
  // The archived text of entry `id` under API-key fingerprint `key_fp`;
  // nullopt when there is none (an unknown id, or another key's entry).
  virtual std::optional<std::string> read(std::string_view key_fp, std::string_view id) const = 0;
};

// What this request's notices name, kept with the request until its
// response ends: the entries its tombstones name (just written to the
// archive) and the texts its other cuts hid, by their recall handles
// (pruning/snip.hpp), as the diet found them in the client's own history
// (PipelineResult::hidden). So the loop answers from memory, never a file on
// an I/O thread, with nothing stored between requests; an id the request's
// notices do not name is unknown to the loop (GET /v1/tokendiet/archive/<id>
// still gives an archived entry back). Like the archive, it answers only the
// key that sent the request.
class RequestRecall final : public RecallSource {
 public:
  RequestRecall(std::string key_fp, std::vector<pruning::ArchivedOutput> entries,
                std::vector<std::shared_ptr<const std::string>> hidden = {})
      : key_fp_(std::move(key_fp)), entries_(std::move(entries)), hidden_(std::move(hidden)) {}
  std::optional<std::string> read(std::string_view key_fp, std::string_view id) const override {
    if (key_fp != key_fp_) return std::nullopt;
    for (const pruning::ArchivedOutput& e : entries_)
      if (e.id == id) return e.text;
    // A handle is hashed on demand: a request that is never asked pays nothing.
    // Two different texts under one handle (docs/design.md §Recall, handles):
    // unknown, never the wrong text.
    const std::string* found = nullptr;
    for (const auto& t : hidden_) {
      if (pruning::recall_handle(*t) != id) continue;
      if (found && *found != *t) return std::nullopt;
      found = t.get();
    }
    if (found) return *found;
    return std::nullopt;
  }
  bool empty() const { return entries_.empty() && hidden_.empty(); }
  // This source with `more` texts (a recovery retry's cuts).
  RequestRecall with(const std::vector<std::shared_ptr<const std::string>>& more) const {
    RequestRecall r = *this;
    r.hidden_.insert(r.hidden_.end(), more.begin(), more.end());
    return r;
  }

 private:
  std::string key_fp_{};  // the key that sent the request: only it reads them
  std::vector<pruning::ArchivedOutput> entries_{};
  std::vector<std::shared_ptr<const std::string>> hidden_{};
};

struct RecallOffer {
  // Where the answers come from: the request's own entries, or (tests, the
  // recall test proxy) a source of their own. Outlives the request.
  std::shared_ptr<const RecallSource> source{};
  RecallLimits limits{};
};

// What the recall loop did (log line, ledger, /metrics).
struct RecallReport {
  std::vector<std::string> recalled{};  // the entries the model recalled, in order
  unsigned rounds = 0;                  // continuation rounds made
};

}  // namespace td::proxy
