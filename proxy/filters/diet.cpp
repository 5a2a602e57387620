#include "proxy/filters/diet.hpp"

#include <exception>

#include "config/match.hpp"
#include "proxy/filters/cached_counter.hpp"
#include "pruning/tokenizer/calibration.hpp"
#include "pruning/tokenizer/counter.hpp"
#include "pruning/tokenizer/message_count.hpp"

namespace td::proxy {

DietOutcome diet_body(const providers::ChatRoute& route, std::string& body, const config::Config& config,
                      const DietOptions& options) {
  DietOutcome out;
  try {
    providers::ParseOutcome parsed = providers::parse_request(route, body);
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

    const auto model_counter = tok::counter_for_model(out.model, options.calibration);
    const CachedCounter counter(*model_counter, text_count_cache());
    out.exact = counter.exact();
    // Whole messages are looked up by content hash before any text is
    // counted: a resent history costs a hash per message.
    out.result = pruning::run_pipeline(request.conversation, profile, counter, &text_count_cache());
    if (out.result.changed() && !out.result.shadow) {
      providers::WriteOutcome written = providers::write(request, body);
      if (!written.ok) {
        out.fail_open = true;
        out.error = "write: " + written.error;
        out.result.tokens_after = out.result.tokens_before;  // nothing was cut after all
        return out;
      }
      if (written.changed) {
        body = std::move(written.body);
        out.rewritten = true;
      }
    }
    if (!out.exact && options.calibration) {
      // In shadow mode the view is the request as sent, otherwise its diet.
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
