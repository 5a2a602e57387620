#include "proxy/filters/archive_write_filter.hpp"

#include <algorithm>

#include "archive/store.hpp"
#include "proxy/filters/diet_result.hpp"
#include "proxy/reports/diet_report.hpp"
#include "proxy/reports/eviction_report.hpp"
#include "proxy/telemetry/body_budget.hpp"

namespace td::proxy {

namespace {

struct ArchiveWrite {
  DietRun run;  // the client's body, the pruned one, and what the diet decided
  archive::Store* store = nullptr;
  bool written = false;
  std::string error;  // the write failed: the diet re-ran without semantic eviction
  // A big body's bytes stay claimed from the budget while the job holds them,
  // past a wait that ran out (docs/design.md §Big bodies).
  std::shared_ptr<BodyClaim> claim;
};

// The tasks whose outputs a written request went without, once each, in order.
std::vector<std::string> evicted_tasks(const std::vector<pruning::ArchivedOutput>& archived) {
  std::vector<std::string> tasks;
  for (const auto& a : archived)
    if (std::find(tasks.begin(), tasks.end(), a.task) == tasks.end()) tasks.push_back(a.task);
  return tasks;
}

}  // namespace

FilterResult ArchiveWriteFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string& body) {
  DietResult* result = ctx.objects.find<DietResult>();
  if (!result || !result->outcome.tombstoned()) return {};
  auto job = std::make_shared<ArchiveWrite>(ArchiveWrite{DietRun(ctx, result->route), nullptr, false, {}, {}});
  if (const BigBodyClaim* held = ctx.objects.find<BigBodyClaim>()) job->claim = held->claim;
  job->run.body = std::move(result->original);
  job->run.rewritten = std::move(body);
  job->run.outcome = std::move(result->outcome);
  job->store = services_.archive.store ? services_.archive.store() : nullptr;
  return run_off_thread(
      services_.archive.thread, kArchiveWait, std::move(job),
      OffThreadSteps<ArchiveWrite>{
          .work =
              [config = config_, services = services_](ArchiveWrite& job, const std::function<bool()>&) {
                if (job.store && job.store->write(job.run.key_fingerprint, job.run.outcome.result.archived)) {
                  job.written = true;
                  return;
                }
                job.error = job.store ? job.store->last_error() : "no archive";
                if (job.error.empty()) job.error = "archive write failed";
                job.run.run(*config, services, false);
              },
          .finish = [count_failure = services_.archive.count_failure](
                        PausedRequest request, ArchiveWrite& job) -> std::optional<LocalResponse> {
            RequestContext& ctx = *request.ctx;
            EvictionReport& report = ctx.objects.publish<EvictionReport>();
            if (job.written) {
              report.evicted_tasks = evicted_tasks(job.run.outcome.result.archived);
              DietResult& result = ctx.objects.get<DietResult>();
              result.outcome = std::move(job.run.outcome);
              *request.body = std::move(job.run.rewritten);
              return std::nullopt;
            }
            report.archive_error = std::move(job.error);
            if (count_failure) count_failure();
            *request.body = std::move(job.run.body);
            publish_diet(ctx, job.run.route, std::move(job.run.outcome), *request.body, job.run.rewritten);
            return std::nullopt;
          },
          // Not written in time: the body goes as it came (nothing archived is
          // missing from it), and nothing the diet decided for it stands.
          .give_back = [](PausedRequest request, ArchiveWrite& job) -> std::optional<LocalResponse> {
            if (request.body) *request.body = job.run.body;
            if (request.ctx) {
              request.ctx->objects.erase<DietResult>();
              request.ctx->objects.erase<DietReport>();
            }
            return std::nullopt;
          },
      });
}

}  // namespace td::proxy
