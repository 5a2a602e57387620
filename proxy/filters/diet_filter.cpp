#include "proxy/filters/diet_filter.hpp"

#include <algorithm>
#include <array>
#include <exception>

#include "config/match.hpp"
#include "diet/diet.hpp"
#include "diet/recap_summary.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/phases/body_peek.hpp"
#include "proxy/phases/routing.hpp"
#include "proxy/reports/billed_usage.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy/telemetry/body_budget.hpp"
#include "pruning/tokenizer/calibration.hpp"

namespace td::proxy {

namespace {

// Marks a request whose body went to a diet thread.
struct Offloaded {};

// A diet on a diet thread: the run, and for a recap to summarize, the
// request's credentials for a call to its own provider. It holds a share of
// the big body's claim: a job that outlives its request's wait still holds
// the body, whose bytes stay in the budget until the job goes.
struct OffloadedDiet {
  DietRun run;
  std::vector<std::pair<std::string, std::string>> credentials;
  std::shared_ptr<BodyClaim> claim;
};

std::vector<std::pair<std::string, std::string>> summary_credentials(const HeaderMap& headers) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "authorization", "x-api-key", "x-goog-api-key", "anthropic-version", "openai-organization", "openai-project"};
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view name : kNames)
    if (std::string_view v = headers.get(name); !v.empty()) out.emplace_back(name, v);
  return out;
}

bool wants_summary(const DietServices& services, const diet::DietOutcome& outcome) {
  return services.summarizer && outcome.profile && diet::wants_summary(outcome, *outcome.profile);
}

}  // namespace

DietFilter::DietFilter(const config::Config& config, DietServices services)
    : config_(std::make_shared<const config::Config>(config)),
      services_(std::move(services)),
      any_profile_disabled_(std::any_of(config_->profiles.begin(), config_->profiles.end(),
                                        [](const pruning::Profile& p) { return !p.enabled; })) {
  if (!services_.workers) services_.summarizer = nullptr;  // its calls block: only on a diet thread
}

// A disabled profile keeps tokendiet out of the body altogether: neither
// parsed nor counted. The model comes from the path (Gemini) or a cheap peek
// (proxy/phases/body_peek.hpp); a peek that found some nested "model" key can
// only skip a diet (the request goes as sent), never change one, because an
// enabled profile still parses and uses the body's own model. Only a config
// with a disabled profile, or a request that chose a profile by name, pays
// for the peek.
bool DietFilter::disabled_profile(RequestContext& ctx, const providers::ChatRoute& route,
                                  const std::string& body) const {
  const std::string_view chosen = chosen_profile(ctx);
  if (!any_profile_disabled_ && chosen.empty()) return false;
  const BodyPeek peek = route.model.empty() ? peek_body(body) : BodyPeek{};
  const std::string_view model = route.model.empty() ? peek.model : std::string_view(route.model);
  const pruning::Profile& p = config::profile_for(*config_, model, chosen);
  if ((model.empty() && chosen.empty()) || p.enabled) return false;
  ctx.model = std::string(model);
  ctx.stream = ctx.stream || route.stream || peek.stream;
  ctx.objects.publish<DietReport>(DietReport{.mode = pruning::Mode::None, .profile = p.name});
  return true;
}

FilterResult DietFilter::request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) {
  try {
    auto target = origin_form(ctx.target);
    if (!target) return {};
    auto route = providers::chat_route(ctx.method, *target);
    if (!route) return {};  // not a chat request: never looked at
    // A compressed body is forwarded as it came: we do not inflate requests.
    std::string_view encoding = headers.get("content-encoding");
    if (!encoding.empty() && !iequals(encoding, "identity")) return {};
    if (disabled_profile(ctx, *route, body)) return {};
    // Big bodies, and every diet while the replicas share the policy's state
    // (its round trip is waited for on the diet thread, never here).
    if (services_.workers && (body.size() >= config_->limits.diet_offload_bytes || services_.policy.sharing()))
      return offload(ctx, headers, *route, body);

    // THE PIPELINE CALL SITE: parse -> count -> decide -> prune -> write
    // (diet/diet.hpp), the same function `tokendiet replay` measures.
    std::string rewritten;
    diet::DietOutcome outcome =
        run_diet(*config_, services_, *route, PolicyIdentity{ctx.provider, ctx.key_fingerprint, ctx.session_id}, body,
                 rewritten, services_.archive.on(), chosen_profile(ctx));
    // A recap to summarize first: on a diet thread, the request paused.
    if (wants_summary(services_, outcome)) return offload(ctx, headers, *route, body);
    publish_diet(ctx, std::move(*route), std::move(outcome), body, rewritten);
  } catch (const std::exception& e) {
    ctx.mark_fail_open(std::string("diet: ") + e.what());
  } catch (...) {
    ctx.mark_fail_open("diet: unknown exception");
  }
  return {};
}

FilterResult DietFilter::offload(RequestContext& ctx, const HeaderMap& headers, const providers::ChatRoute& route,
                                 std::string& body) {
  auto job = std::make_shared<OffloadedDiet>(OffloadedDiet{DietRun(ctx, route), {}, {}});
  if (services_.summarizer) job->credentials = summary_credentials(headers);
  if (const BigBodyClaim* held = ctx.objects.find<BigBodyClaim>()) job->claim = held->claim;
  job->run.body = std::move(body);
  ctx.objects.get<Offloaded>();  // a big body was freed: its memory goes back once the request ends
  return run_off_thread(
      services_.workers, kOffloadWait, std::move(job),
      OffThreadSteps<OffloadedDiet>{
          .work =
              [config = config_, services = services_](OffloadedDiet& job, const std::function<bool()>& stopped) {
                const bool eviction = services.archive.on();
                job.run.run(*config, services, eviction);
                // A recap to summarize: the model asked once, its text cached,
                // the diet run again with it (or with the extractive choice
                // cached on failure).
                if (!wants_summary(services, job.run.outcome)) return;
                diet::summarize_recap(*services.summarizer, job.run.outcome, *job.run.outcome.profile, job.run.provider,
                                      std::move(job.credentials), services.caches->summaries);
                if (!stopped()) job.run.run(*config, services, eviction);
              },
          .finish = [](PausedRequest request, OffloadedDiet& job) -> std::optional<LocalResponse> {
            *request.body = std::move(job.run.body);
            publish_diet(*request.ctx, job.run.route, std::move(job.run.outcome), *request.body, job.run.rewritten);
            return std::nullopt;
          },
          // The wait ended without the diet: the body goes as it came. The
          // job only reads it, so a copy races with nothing.
          .give_back = [](PausedRequest request, OffloadedDiet& job) -> std::optional<LocalResponse> {
            if (request.body) *request.body = job.run.body;
            return std::nullopt;
          },
      });
}

void DietFilter::logging(const RequestContext& ctx) {
  // The big body goes once the request ends: its memory back to the system
  // when the diet threads are next idle.
  if (ctx.objects.find<Offloaded>() && services_.workers) services_.workers->want_release();
  const DietResult* result = ctx.objects.find<DietResult>();
  if (!result) return;
  const BilledUsage* billed = ctx.objects.find<BilledUsage>();
  if (!services_.calibration || !billed || !billed->usage.present || ctx.fail_open || ctx.status < 200 ||
      ctx.status >= 300)
    return;
  if (result->outcome.raw_estimate > 0 && billed->usage.prompt > 0)
    services_.calibration->observe(ctx.model, result->outcome.raw_estimate, billed->usage.prompt);
}

}  // namespace td::proxy
