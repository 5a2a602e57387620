// Semantic eviction's archive write (docs/design.md §The archive): a request
// the diet wrote with tombstones goes only once the outputs they replace are
// kept in the archive. The write runs on the archive's thread while the
// request is paused (proxy/phases/off_thread.hpp). A failed write re-runs the
// diet without semantic eviction there (fail open: the request goes unpruned
// of those outputs rather than without them), logged and counted; a write
// that does not end within kArchiveWait sends the body as it came.
//
// Publishes the EvictionReport (proxy/reports/eviction_report.hpp): the tasks
// whose outputs the request went without, or the write's error.
#pragma once

#include <chrono>
#include <memory>

#include "config/config.hpp"
#include "proxy/filters/diet_services.hpp"
#include "proxy/phases/filter.hpp"

namespace td::proxy {

class ArchiveWriteFilter final : public Filter {
 public:
  ArchiveWriteFilter(const config::Config& config, DietServices services)
      : config_(std::make_shared<const config::Config>(config)), services_(std::move(services)) {}

  // How long the archive's writes may take, queue included, before the
  // request goes as it came.
  static constexpr std::chrono::milliseconds kArchiveWait{30'000};
  std::string_view name() const override { return "archive_write"; }
  FilterResult request_body_filter(RequestContext& ctx, const HeaderMap& headers, std::string& body) override;

 private:
  std::shared_ptr<const config::Config> config_;
  DietServices services_;
};

}  // namespace td::proxy
