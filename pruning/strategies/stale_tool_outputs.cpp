#include "pruning/strategies/stale_tool_outputs.hpp"

#include "pruning/strategies/common.hpp"
#include "pruning/memo.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/read_outline.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

bool saved_by_agent(std::string_view text, const StaleToolOutputsOptions& opt) {
  for (const std::string& marker : opt.stale_tool_outputs_saved_markers)
    if (!marker.empty() && text.find(marker) != std::string_view::npos) return true;
  return false;
}

StrategyStats stale_tool_outputs(Conversation& conv, const StaleToolOutputsOptions& opt, std::uint32_t limit,
                                 Memo<Snipped>* snips, Memo<CallReads>* calls, const RecalledLines* recalled) {
  StrategyStats st{.name = "stale_tool_outputs"};
  if (!opt.stale_tool_outputs) return st;
  auto& msgs = conv.messages;
  if (limit > msgs.size()) limit = static_cast<std::uint32_t>(msgs.size());
  if (limit == 0) return st;  // nothing stale: the common case on short requests
  const SnipOptions options{.head_bytes = opt.stale_tool_outputs_head_bytes,
                            .tail_bytes = opt.stale_tool_outputs_tail_bytes,
                            .max_error_lines = opt.stale_tool_outputs_error_lines,
                            .max_names = opt.stale_tool_outputs_names,
                            .recall = opt.recall,
                            .keep_markers = &opt.stale_tool_outputs_truncated_markers};
  std::uint64_t markers = 0;  // the kept markers are part of the transform
  for (const std::string& m : opt.stale_tool_outputs_truncated_markers)
    markers = markers * 31 + tok::hash_bytes(m.data(), m.size());
  const std::uint64_t salt =
      memo_salt("snip", {options.head_bytes, options.tail_bytes, options.max_error_lines, options.max_names > 0,
                         opt.recall, markers, opt.stale_tool_outputs_read_outline});
  NameSet listed;                                     // names listed by earlier outputs are not listed again
  std::vector<std::shared_ptr<const Snipped>> alive;  // what `listed` points into
  detail::ToolNames names(opt.exclude_tools);
  const std::vector<bool> reads = opt.stale_tool_outputs_keep_reads_bytes > 0
                                      ? unsuperseded_reads(conv, opt, limit, calls)
                                      : std::vector<bool>(limit);
  KeptReadLines kept_lines(opt);  // fed every kept read, in order
  for (std::uint32_t i = 0; i < limit; ++i) {
    Message& m = msgs[i];
    names.learn(m);
    if (m.removed) continue;
    for (Part& p : m.parts) {
      if (p.kind != PartKind::ToolResult || !p.editable) continue;
      if (reads[i] && p.text.size() <= opt.stale_tool_outputs_keep_reads_bytes) {
        if (!opt.stale_tool_outputs_keep_reads_dedupe) continue;
        std::string deduped = kept_lines.dedupe(p.text);
        if (!saves_enough(p.text.size(), deduped.size(), opt.stale_tool_outputs_min_saving_bytes)) continue;
        st.add(i, p.text.size(), deduped.size());
        cut_text(m, p, std::move(deduped), opt.recall);
        continue;
      }
      if (p.text.size() < opt.stale_tool_outputs_threshold_bytes) continue;
      if (detail::excluded_tool(opt.exclude_tools, names.of_result(p))) continue;
      if (saved_by_agent(p.text, opt)) continue;
      // The lines the model recalled of this text stay (its handle names them).
      std::vector<std::pair<std::size_t, std::size_t>> ranges;
      std::uint64_t ranges_salt = 0;
      if (opt.recall && opt.recalled_lines != "off" && recalled && !recalled->empty()) {
        if (const auto bits = RecalledLines::handle_bits(recall_handle(p.text))) {
          ranges = recalled->of(*bits);

          ranges_salt = recalled->fingerprint(*bits);
        }
      }
      SnipOptions with_ranges = options;
      if (!ranges.empty()) with_ranges.keep_ranges = &ranges;
      const std::uint64_t part_salt = ranges_salt ? memo_salt("snip-recalled", {salt, ranges_salt}) : salt;
      auto snipped = memoized(snips, part_salt, p, [&](std::string_view t) -> std::optional<Snipped> {
        // A numbered read keeps its outline (strategies/read_outline.hpp).
        SnipOptions with_outline = with_ranges;
        const std::vector<std::uint64_t> outline =
            opt.stale_tool_outputs_read_outline ? read_outline(t) : std::vector<std::uint64_t>{};
        if (!outline.empty()) {
          with_outline.keep_lines = &outline;
          with_outline.keep_line_min_bytes = 1;
        }
        Snipped s = snip(t, with_outline);
        if (!s.cut) return std::nullopt;
        return s;
      });
      if (!snipped) continue;
      std::vector<std::string_view> used;
      std::string cut = render(*snipped, options.max_names, &listed, &used);
      if (!saves_enough(p.text.size(), cut.size(), opt.stale_tool_outputs_min_saving_bytes)) continue;
      listed.insert(used.begin(), used.end());
      alive.push_back(std::move(snipped));
      st.add(i, p.text.size(), cut.size());
      cut_text(m, p, std::move(cut), opt.recall);
    }
  }
  return st;
}

}  // namespace td::pruning
