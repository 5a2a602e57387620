// The recall loop's response side (docs/design.md §Recall): the rounds of one
// response, upstream's, merged into the one response the client sees.
//
// A RecallMerge reads each round's upstream body (an SSE stream or one JSON
// body) and writes what the client gets: everything but the model's
// tokendiet_recall calls, with the provider's framing made whole across the
// rounds (one start and one end, consecutive indices, usage summed, the stop
// reason of the last round). While a round runs, its tool calls are held back
// until the round ends: a round that called tokendiet_recall is continued,
// and the client's own calls of that round are dropped (the model may call
// them again); otherwise they are released as they came. Pure: no I/O.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/api.hpp"

namespace td::providers {

struct RecallCall {
  std::string call_id;    // the provider's id of the call ("" where it has none: Gemini)
  std::string arguments;  // the call's arguments, a JSON object
};

class RecallMerge {
 public:
  virtual ~RecallMerge() = default;
  // `sse`: the rounds are event streams (else JSON bodies).
  static std::unique_ptr<RecallMerge> make(Api api, bool sse);

  // Upstream bytes of the current round; what the client gets now is appended to `out`.
  virtual void feed(std::string_view bytes, std::string& out) = 0;
  // The current round's body ended: its recall calls (none: the response is
  // finished, its end appended to `out`). With calls, nothing more is written
  // until continue_with() or finish().
  virtual const std::vector<RecallCall>& end_round(std::string& out) = 0;
  // Appends the round's assistant turn (as the upstream sent it, minus the
  // client's tool calls) and one tool result per recall call (`results`, in
  // calls' order) to the request `body`; the next round's bytes then follow.
  // False, body untouched, when the body cannot take them.
  virtual bool continue_with(std::string& body, const std::vector<std::string>& results) = 0;
  // No next round after all (a round cap, a failed continuation): the held
  // calls are released as they came and the response ended in `out`.
  virtual void finish(std::string& out) = 0;
};

}  // namespace td::providers
