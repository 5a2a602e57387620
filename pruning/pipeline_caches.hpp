// What the pipeline remembers between requests: counts and pruned forms by
// content hash, so a resent history costs hashes and lookups instead of BPE
// and strategy work. Each is bounded and thread-safe, and changes how fast
// the pipeline runs, never what it decides (a miss recomputes the same
// result; pruning/memo.hpp, pruning/tokenizer/count_cache.hpp).
//
// pruning/ keeps none of its own: whoever runs the pipeline owns one and
// passes it in (the proxy one for the process, outliving config reloads;
// `tokendiet replay` its own), so two owners never share or warm each
// other's.
#pragma once

#include <cstddef>
#include <string>

#include "pruning/lossy_plan.hpp"
#include "pruning/memo.hpp"
#include "pruning/recall_span.hpp"
#include "pruning/snip.hpp"
#include "pruning/strategies/copied_lines.hpp"
#include "pruning/strategies/edited_files.hpp"
#include "pruning/strategies/file_reads.hpp"
#include "pruning/strategies/identical_tool_outputs.hpp"
#include "pruning/tasks.hpp"
#include "pruning/tokenizer/count_cache.hpp"

namespace td::pruning {

struct PipelineCaches {
  // Token counts of texts (diet/cached_counter.hpp) and of whole
  // messages (pruning/tally.hpp), keyed by salted content hashes.
  tok::CountCache counts;
  Memo<std::string> folds{std::size_t{64} << 20};        // low_entropy: a tool output's folded form
  Memo<Snipped> snips{std::size_t{64} << 20};            // stale_tool_outputs, stale_assistant_text: cuts
  Memo<LossyPlan> plans{std::size_t{32} << 20};          // lossy_plan: the plan of a history
  Memo<AheadFound> aheads{std::size_t{1} << 20};         // lossy_plan: the next plan of a history found memoized
  Memo<std::string> turn_lines{std::size_t{16} << 20};   // recap: a turn's line, by its messages
  Memo<CallReads> calls{std::size_t{8} << 20};           // file_reads: whether a call reads, the paths it names
  Memo<std::string> decoded{std::size_t{16} << 20};      // stale_assistant_text: a call's arguments decoded
  Memo<LineKeys> line_keys{std::size_t{32} << 20};       // copied_lines: the keys of a part's lines
  Memo<OutputBody> bodies{std::size_t{4} << 20};         // identical_tool_outputs: an output's body and its hash
  Memo<RecallSpan> spans{std::size_t{128} << 20};        // recap: the span it replaced, as text, and its handle
  Memo<TaskCallFacts> task_calls{std::size_t{4} << 20};  // completed_tasks: what a task tool's call says
  Memo<CallWrites> writes{std::size_t{1} << 20};         // completed_tasks: whether a call writes a file
};

}  // namespace td::pruning
