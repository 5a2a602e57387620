#include "proxy/filters/archive_filter.hpp"

#include "archive/store.hpp"
#include "proxy/phases/errors.hpp"
#include "proxy/telemetry/work_pool.hpp"

namespace td::proxy {

LocalResponse archive_answer(const archive::Store* store, Provider provider, std::string_view key_fp,
                             std::string_view id) {
  // An anonymous client's entries are never read back by a request: nothing
  // in one proves it is the client that wrote them (docs/design.md §The archive).
  std::optional<archive::Entry> entry = store && !key_fp.empty() ? store->read(key_fp, id) : std::nullopt;
  LocalResponse r;
  if (!entry) {
    r.status = 404;
    r.body = provider_error_body(provider, 404, "tokendiet: no archive entry " + std::string(id) + " for this API key");
    r.headers.emplace_back("x-tokendiet-error", "archive_entry_not_found");
    return r;
  }
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(entry->text);
  r.headers.emplace_back("x-tokendiet-archive-tokens", std::to_string(entry->info.tokens));
  return r;
}

FilterResult ArchiveFilter::request_filter(RequestContext& ctx, HeaderMap&) {
  if (!ctx.path().starts_with(kPathPrefix)) return {};
  if (ctx.method != "GET" && ctx.method != "HEAD") {
    LocalResponse r;
    r.status = 405;
    r.body = provider_error_body(ctx.provider, 405, "tokendiet: the archive is read with GET");
    r.headers.emplace_back("allow", "GET, HEAD");
    return FilterResult::respond(std::move(r));
  }
  const std::string id(ctx.path().substr(kPathPrefix.size()));
  archive::Store* store = store_();
  if (!thread_ || !store || ctx.key_fingerprint.empty()) return FilterResult::respond(archive_answer(store, ctx.provider, ctx.key_fingerprint, id));
  auto handle = std::make_shared<ResumeHandle>();
  thread_->post([handle, store, provider = ctx.provider, key_fp = ctx.key_fingerprint, id] {
    if (handle->cancelled()) return;
    handle->resume(archive_answer(store, provider, key_fp, id));
  });
  return FilterResult::pause(std::move(handle), kReadWait);
}

// Reached only when phase 1 did not answer an archive path: its read ran out
// of time (or failed). The request must not go upstream with the client's key.
FilterResult ArchiveFilter::request_body_filter(RequestContext& ctx, const HeaderMap&, std::string&) {
  if (!ctx.path().starts_with(kPathPrefix)) return {};
  LocalResponse r;
  r.status = 503;
  r.body = provider_error_body(ctx.provider, 503, "tokendiet: the archive did not answer in time; retry");
  r.headers.emplace_back("retry-after", "1");
  r.headers.emplace_back("x-tokendiet-error", "archive_unavailable");
  return FilterResult::respond(std::move(r));
}

}  // namespace td::proxy
