// Profile keys that were renamed, so that a strategy's switch is its name and
// its settings start with it (pruning/profile.hpp). A config that still uses
// an old name loads as before: the value is read under the new name, and the
// load reports one deprecation warning per old key it meets (serve logs it
// as a config_warning at start and on every SIGHUP; check-config prints it).
// Internal to config/.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace td::config::detail {

struct RenamedKey {
  std::string_view old_name;
  std::array<std::string_view, 2> new_names;  // the second only for a key that was split in two

  std::span<const std::string_view> names() const { return std::span(new_names.data(), new_names[1].empty() ? 1 : 2); }
};

inline constexpr RenamedKey kRenamedProfileKeys[] = {
    {"prune_thinking", {"old_thinking"}},
    {"thinking_keep_last_messages", {"old_thinking_keep_last_messages"}},
    {"dedup_tool_calls", {"identical_tool_calls"}},
    {"dedup_call_min_bytes", {"identical_tool_calls_min_bytes"}},
    {"dedup_tool_outputs", {"identical_tool_outputs"}},
    {"dedup_min_bytes", {"identical_tool_outputs_min_bytes"}},
    {"fold_low_entropy", {"low_entropy"}},
    {"fold_min_run", {"low_entropy_min_run"}},
    {"fold_blob_min_bytes", {"low_entropy_blob_min_bytes"}},
    {"snip_stale_outputs", {"stale_tool_outputs"}},
    {"snippet_threshold_bytes", {"stale_tool_outputs_threshold_bytes"}},
    {"snippet_head_bytes", {"stale_tool_outputs_head_bytes"}},
    {"snippet_tail_bytes", {"stale_tool_outputs_tail_bytes"}},
    {"snippet_error_lines", {"stale_tool_outputs_error_lines"}},
    // One setting served both strategies that list hidden names.
    {"snippet_names", {"stale_tool_outputs_names", "stale_assistant_text_names"}},
    {"snip_assistant_text", {"stale_assistant_text_prose"}},
    {"snip_tool_arguments", {"stale_assistant_text_tool_arguments"}},
    {"assistant_threshold_bytes", {"stale_assistant_text_threshold_bytes"}},
    {"assistant_head_bytes", {"stale_assistant_text_head_bytes"}},
    {"assistant_tail_bytes", {"stale_assistant_text_tail_bytes"}},
    {"sink_messages", {"trim_middle_sink_messages"}},
    {"recent_messages", {"trim_middle_recent_messages"}},
    {"trim_budget_tokens", {"trim_middle_budget_tokens"}},
    // Outputs an agent truncated itself are cut once stale now; what the old
    // key listed is still left alone, as the placeholders of saved outputs
    // are (docs/design.md §Strategies, stale_tool_outputs).
    {"stale_tool_outputs_skip_markers", {"stale_tool_outputs_saved_markers"}},
    // The budget covers every held read now, fresh ones too (strategies/edited_files.hpp).
    {"stale_tool_outputs_keep_edited_bytes", {"stale_tool_outputs_held_reads_bytes"}},
};

}  // namespace td::config::detail
