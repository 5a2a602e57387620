// One wire format, everything tokendiet knows about it, behind one lookup
// (docs/design.md §Layout, "providers/ tree"). Shared code asks
// adapter(api).<operation> instead of switching on the Api; each format's
// folder (openai_chat/, openai_responses/, anthropic/, gemini/) fills one
// FormatAdapter in its adapter.cpp. Internal to providers/ and its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json/splice.hpp"
#include "providers/api.hpp"
#include "providers/formats.hpp"
#include "providers/generation_settings_fields.hpp"
#include "providers/recall_merge.hpp"
#include "providers/thinking_budget.hpp"
#include "providers/usage_fields.hpp"

namespace td::providers {

struct ChatRoute;

// The counts of one usage object, from whichever reader has it: the scan of
// its bytes, or (what the scan declines) a parsed object.
class UsageCounts {
 public:
  virtual std::optional<std::int64_t> count(std::string_view key) const = 0;
  virtual std::optional<std::int64_t> nested_count(std::string_view parent, std::string_view key) const = 0;

 protected:
  ~UsageCounts() = default;
};

// A usage sum's term (an absent count adds 0), and the sum as a count: the
// provider's counts are signed, a negative sum (a broken upstream) reads as 0.
inline std::int64_t term(const std::optional<std::int64_t>& count) { return count.value_or(0); }
inline std::uint64_t as_count(std::int64_t sum) { return static_cast<std::uint64_t>(sum < 0 ? 0 : sum); }

// What a response has said so far, as one SSE event updates it.
struct UsageSeen {
  RawUsage& raw;
  std::string& model;
  std::string& error;  // the "error" member's JSON value
};

// The pairing rules of a format's settings, for the values a write changes
// (`want`; `now`: what the body has). `drop`: the index (into `fields`) of a
// member to remove with the write. False with `err` when the write is refused.
using SettingsShapeRule = bool (*)(std::span<const generation::Field> fields,
                                   const std::vector<generation::Found>& found, const GenerationSettings& now,
                                   const GenerationSettings& want, std::size_t& drop, std::string& err);

struct FormatAdapter {
  Api api;
  std::string_view name;  // name(Api): "openai_chat", "openai_responses", "gemini", "anthropic"

  // --- routing (providers/api.hpp, providers/route.hpp)
  // Whether a request path (no query, no trailing '/') speaks this format.
  bool (*serves_path)(std::string_view path);
  // The model and stream flag the path names, where the format puts them
  // there (Gemini); null: the body carries them.
  void (*route_from_path)(std::string_view path, ChatRoute& route);

  // --- request body (providers/request.hpp, docs/design.md §The neutral view)
  detail::FormatOps request;
  // Cache rule: how many cache breakpoints of tokendiet's this body takes
  // on parts marked pruning::Part::cache_anchor (Anthropic's: the client
  // caches, and as many as it leaves free), null for a format without
  // breakpoints; asked only when an anchored part is written, as it scans
  // the body. A part marked k takes one when k are free. And the edit that
  // gives the part's block one (false: the block cannot take it).
  std::uint32_t (*cache_anchors_free)(std::string_view body);
  bool (*cache_anchor_edit)(const ParsedRequest& r, const pruning::Message& m, const pruning::Part& p, json::Edit& out);
  // Billing (providers/billing.hpp): tool definitions as the model sees
  // them; null: counted raw.
  std::string (*render_tools)(std::string_view raw);

  // --- usage (providers/usage_fields.hpp, providers/usage_reader.hpp)
  std::string_view usage_member;  // a JSON response's top-level usage member
  std::string_view model_member;  // and the member naming the model
  RawUsage (*usage_counts)(const UsageCounts& counts);
  Usage (*normalise_usage)(const RawUsage& raw);  // raw has counts (usage.hpp: what each means)
  // One SSE event of a streamed response (`name`: its event name, maybe empty).
  void (*usage_event)(std::string_view name, std::string_view data, UsageSeen seen);

  // --- generation settings and thinking (providers/generation_settings.hpp,
  // providers/thinking_budget.hpp, docs/design.md §Thinking budget)
  std::span<const generation::Field> settings;  // in the order new members are written
  // Values the format refuses whatever the model: sets `err` (null: no rule).
  void (*settings_values)(const GenerationSettings& want, std::string& err);
  SettingsShapeRule settings_shape;  // null: no pairing rule
  ThinkingChange (*lower_thinking)(std::string_view model, const GenerationSettings& now, const LowerThinking& limits);

  // --- recall (providers/recall_tool.hpp, providers/recall_merge.hpp, docs/design.md §Recall)
  // The tokendiet_recall tool in the format's tools shape, from its
  // `"name":...,"description":...` members and its JSON schema.
  std::string (*recall_tool)(std::string_view name_and_description, std::string_view schema);
  std::unique_ptr<RecallMerge> (*recall_merge)(bool sse);

  // --- limits (docs/design.md §Policy)
  // The provider's quota and context window count the output the request
  // reserves (its output cap); false: they count input alone (Gemini).
  bool limits_count_output = true;
  // A streamed response reports usage only when the request asks for it
  // (OpenAI chat's stream_options.include_usage, openai_chat/include_usage.hpp).
  bool stream_usage_on_request = false;
};

// The one lookup by Api.
const FormatAdapter& adapter(Api api);

// Each format's, defined in its folder.
const FormatAdapter& openai_chat_adapter();
const FormatAdapter& openai_responses_adapter();
const FormatAdapter& anthropic_adapter();
const FormatAdapter& gemini_adapter();

}  // namespace td::providers
