#include "cli/replay_retention.hpp"

#include <unordered_set>

namespace td::cli {

namespace {

bool in_class(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == ':' || c == '-';
}

bool qualifies(std::string_view run) {
  if (run.size() < 6) return false;
  for (char c : run)
    if ((c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == ':') return true;
  return false;
}

}  // namespace

std::vector<std::string> extract_references(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!in_class(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && in_class(text[j])) ++j;
    std::string_view run = text.substr(i, j - i);
    // A sentence's full stop, a label's colon: not part of the name.
    while (!run.empty() && (run.back() == '.' || run.back() == ':')) run.remove_suffix(1);
    if (qualifies(run) && seen.insert(run).second) out.emplace_back(run);
    i = j;
  }
  return out;
}

std::vector<std::string> extract_copy_lines(std::string_view text) {
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (line.size() >= kMinCopiedLine && seen.insert(line).second) out.emplace_back(line);
  }
  return out;
}

const ReferenceIndex::Seen& ReferenceIndex::seen(const std::string& ref) {
  auto it = memo_.find(ref);
  if (it != memo_.end()) return it->second;
  Seen s{messages_.size(), messages_.size()};
  for (std::size_t i = 0; i < messages_.size(); ++i) {
    const MessageText& m = messages_[i];
    bool user = m.speaker == Speaker::System || m.speaker == Speaker::User;
    if (s.first < messages_.size() && !user) continue;  // only a user sighting can still matter
    if (m.text.find(ref) == std::string::npos) continue;
    if (s.first == messages_.size()) s.first = i;
    if (user) {
      s.first_user = i;
      break;
    }
  }
  return memo_.emplace(ref, s).first->second;
}

std::vector<std::string> ReferenceIndex::counted(std::size_t k) {
  if (k >= messages_.size() || messages_[k].speaker != Speaker::Assistant) return {};
  return from_tool_outputs(extract_references(messages_[k].text), k);
}

std::vector<std::string> ReferenceIndex::copied_lines(std::size_t k) {
  if (k >= messages_.size() || messages_[k].speaker != Speaker::Assistant) return {};
  return from_tool_outputs(extract_copy_lines(messages_[k].text), k);
}

std::vector<std::string> ReferenceIndex::from_tool_outputs(std::vector<std::string> candidates, std::size_t k) {
  std::vector<std::string> out;
  for (std::string& ref : candidates) {
    const Seen& s = seen(ref);
    if (s.first >= k || messages_[s.first].speaker != Speaker::Tool) continue;
    if (s.first_user < k) continue;  // a system or user message said it before k
    out.push_back(std::move(ref));
  }
  return out;
}

std::vector<std::string> counted_references(const std::vector<MessageText>& messages, std::size_t k) {
  return ReferenceIndex(messages).counted(k);
}

RetentionCount retained(const std::vector<std::string>& refs, std::string_view sent_text) {
  RetentionCount r;
  for (const auto& ref : refs) {
    ++r.counted;
    if (sent_text.find(ref) != std::string_view::npos) ++r.retained;
  }
  return r;
}

}  // namespace td::cli
