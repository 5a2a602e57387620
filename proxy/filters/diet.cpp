#include "proxy/filters/diet.hpp"

#include <exception>

#include "config/match.hpp"
#include "proxy/filters/cached_counter.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::proxy {

providers::ParseOutcome parse_step(const providers::ChatRoute& route, std::string_view body, DietCaches& caches) {
  return providers::parse_request(route, body, &caches.parsed);
}

pruning::Counted count_step(const pruning::Conversation& conv, const pruning::TokenCounter& counter,
                            DietCaches& caches) {
  // Whole messages are looked up by content hash before any text is
  // counted: a resent history costs a hash per message.
  return pruning::count_tokens(conv, counter, &caches.pipeline);
}

pruning::PipelineResult prune_step(pruning::Conversation& conv, const pruning::Counted& counted,
                                   const pruning::Decision& decision, const pruning::TokenCounter& counter,
                                   DietCaches& caches) {
  return pruning::run_pipeline(conv, counted, decision, counter, &caches.pipeline);
}

Written write_step(const providers::ParsedRequest& request, const pruning::PipelineResult& result,
                   const pruning::Decision& decision, std::string_view body, std::string& rewritten) {
  Written out;
  if (!result.changed() || !decision.settings.write) return out;
  providers::WriteOutcome written = providers::write(request, body);
  if (!written.ok) {
    out.ok = false;
    out.error = std::move(written.error);
    return out;
  }
  if (written.changed) {
    rewritten = std::move(written.body);
    out.rewritten = true;
  }
  return out;
}

DietOutcome diet_body(const providers::ChatRoute& route, std::string& body, const config::Config& config,
                      DietCaches& caches, const DietOptions& options) {
  std::string rewritten;
  DietOutcome out = diet_body(route, std::string_view(body), rewritten, config, caches, options);
  if (out.rewritten) body = std::move(rewritten);
  return out;
}

DietOutcome diet_body(const providers::ChatRoute& route, std::string_view body, std::string& rewritten,
                      const config::Config& config, DietCaches& caches, const DietOptions& options) {
  DietOutcome out;
  try {
    providers::ParseOutcome parsed = parse_step(route, body, caches);
    if (!parsed.request) {
      out.fail_open = true;
      out.error = "parse: " + parsed.error;
      return out;
    }
    out.parsed = true;
    providers::ParsedRequest& request = *parsed.request;
    out.model = request.model;
    out.stream = request.stream;
    const pruning::Profile& profile = options.profile ? *options.profile : config::profile_for(config, out.model);
    out.profile = profile.name;

    // Counted with a pure function of the bytes: the model's tokenizer, or the
    // estimator uncalibrated. The learned ratio predicts bills, never what is cut
    // (docs/design.md §Token counting).
    const auto model_counter = tok::counter_for_model(out.model);
    const CachedCounter counter(*model_counter, caches.pipeline.counts);
    out.exact = counter.exact();
    const pruning::Counted counted = count_step(request.conversation, counter, caches);
    out.decision = pruning::decide(counted, profile);
    out.result = prune_step(request.conversation, counted, out.decision, counter, caches);
    Written written = write_step(request, out.result, out.decision, body, rewritten);
    if (!written.ok) {
      out.fail_open = true;
      out.error = "write: " + written.error;
      out.result.tokens_after = out.result.tokens_before;  // nothing was cut after all
      return out;
    }
    out.rewritten = written.rewritten;
    if (!out.exact && options.calibration) {
      // Not written (shadow): the view is the request as sent, otherwise its diet.
      out.raw_estimate = tok::count_conversation(request.conversation, tok::EstimatingCounter(1.0)).total;
    }
  } catch (const std::exception& e) {
    out.fail_open = true;
    out.error = std::string("diet: ") + e.what();
  } catch (...) {
    out.fail_open = true;
    out.error = "diet: unknown exception";
  }
  return out;
}

}  // namespace td::proxy
