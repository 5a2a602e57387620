#include "pruning/tasks.hpp"

#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>

#include "pruning/json_nesting.hpp"
#include "pruning/tokenizer/hash.hpp"

namespace td::pruning {

namespace {

bool valid_pointer(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  return rapidjson::Pointer(p.data(), p.size()).IsValid();
}

const rapidjson::Value* at(const rapidjson::Value& root, std::string_view pointer) {
  if (pointer.empty()) return nullptr;
  return rapidjson::Pointer(pointer.data(), pointer.size()).Get(root);
}

std::optional<std::string> string_at(const rapidjson::Value& root, std::string_view pointer) {
  const rapidjson::Value* v = at(root, pointer);
  if (!v) return std::nullopt;
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsInt64()) return std::to_string(v->GetInt64());  // ids may be numbers
  return std::nullopt;
}

std::optional<std::string> first_text(const rapidjson::Value& root, const std::vector<std::string>& pointers) {
  for (const std::string& p : pointers)
    if (auto s = string_at(root, p)) return s;
  return std::nullopt;
}

TaskStatus status_of(std::string_view s) {
  if (s == "completed") return TaskStatus::Completed;
  if (s == "in_progress") return TaskStatus::InProgress;
  return TaskStatus::Other;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

using Item = TaskCallFacts::Item;

// "[ ] a\n[-] b\n[x] c" (a leading "- " or "* " allowed): Roo Code's checklist.
std::vector<Item> checklist_items(std::string_view md) {
  std::vector<Item> items;
  while (!md.empty()) {
    const std::size_t nl = md.find('\n');
    std::string_view line = trim(md.substr(0, nl));
    md.remove_prefix(nl == std::string_view::npos ? md.size() : nl + 1);
    if (line.starts_with("- ") || line.starts_with("* ")) line = trim(line.substr(2));
    if (line.size() < 3 || line[0] != '[' || line[2] != ']') continue;
    const char mark = line[1];
    TaskStatus st = mark == 'x' || mark == 'X'   ? TaskStatus::Completed
                    : mark == '-' || mark == '~' ? TaskStatus::InProgress
                                                 : TaskStatus::Other;
    std::string text(trim(line.substr(3)));
    if (text.empty()) continue;
    items.push_back({"text:" + text, text, st});
  }
  return items;
}

// What a call of `tt` with arguments `text` says; nullopt when it says
// nothing (not a JSON object, no list, no id).
std::optional<TaskCallFacts> read_task_call(const TaskTool& tt, std::string_view text) {
  if (!json_nesting_within(text)) return std::nullopt;
  rapidjson::Document d;
  d.Parse<rapidjson::kParseStopWhenDoneFlag>(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  TaskCallFacts f;
  switch (tt.kind) {
    case TaskTool::Kind::Checklist: {
      const std::optional<std::string> md = string_at(d, tt.list);
      if (!md) return std::nullopt;
      f.items = checklist_items(*md);
      return f;
    }
    case TaskTool::Kind::List: {
      const rapidjson::Value* list = at(d, tt.list);
      if (!list || !list->IsArray()) return std::nullopt;
      for (const rapidjson::Value& v : list->GetArray()) {
        if (!v.IsObject()) continue;
        const std::string title = first_text(v, tt.text).value_or("");
        const std::optional<std::string> id = string_at(v, tt.id);
        if (title.empty() && !id) continue;
        f.items.push_back({id ? "id:" + *id : "text:" + title, title.empty() ? *id : title,
                           status_of(string_at(v, tt.status).value_or(""))});
      }
      return f;
    }
    case TaskTool::Kind::Single: {
      std::optional<std::string> id = string_at(d, tt.id);
      if (!id) return std::nullopt;
      f.id = std::move(*id);
      f.text = first_text(d, tt.text);
      f.has_status = !tt.status.empty() && at(d, tt.status);
      f.status = status_of(string_at(d, tt.status).value_or(""));
      return f;
    }
    case TaskTool::Kind::Create:
      f.text = first_text(d, tt.text);
      return f;
  }
  return std::nullopt;
}

// A memo salt for the calls of `t`: what read_task_call() reads depends on it whole.
std::uint64_t tool_salt(const TaskTool& t) {
  std::string spec = t.name;
  for (const std::string* s : {&t.list, &t.status, &t.id, &t.id_after}) (spec += '\x1f') += *s;
  for (const std::string& s : t.text) (spec += '\x1e') += s;
  spec += char('0' + static_cast<int>(t.kind));
  return memo_salt("task_call", {tok::hash_bytes(spec.data(), spec.size())});
}

// The walk over the history: task states now, and what each call belongs to.
class Tracker {
 public:
  Tracker(std::vector<TaskTool> tools, Memo<TaskCallFacts>* calls) : tools_(std::move(tools)), calls_(calls) {
    for (const TaskTool& t : tools_) salts_.push_back(tool_salt(t));
  }

  TaskHistory run(const Conversation& conv) {
    owners_.reserve(conv.messages.size());
    for (std::uint32_t i = 0; i < conv.messages.size(); ++i) {
      const Message& m = conv.messages[i];
      if (m.removed) continue;
      for (std::uint32_t j = 0; j < m.parts.size(); ++j) {
        const Part& p = m.parts[j];
        if (p.kind == PartKind::ToolCall)
          call(i, j, p);
        else if (p.kind == PartKind::ToolResult)
          result(i, j, p);
      }
    }
    return std::move(h_);
  }

 private:
  std::optional<std::size_t> tool(std::string_view name) const {
    for (std::size_t i = 0; i < tools_.size(); ++i)
      if (tools_[i].name == name) return i;
    return std::nullopt;
  }

  std::uint32_t task(const std::string& key, const std::string& title, std::uint32_t message) {
    auto [it, added] = index_.try_emplace(key, std::uint32_t(h_.tasks.size()));
    if (added) h_.tasks.emplace_back();
    TrackedTask& t = h_.tasks[it->second];
    if (!title.empty() && (t.titles.empty() || t.title != title)) {
      t.title = title;
      t.titles.push_back({message, title});
    }
    return it->second;
  }

  void set(std::uint32_t t, TaskStatus st, std::uint32_t message) {
    TrackedTask& task = h_.tasks[t];
    const TaskStatus now = task.changes.empty() ? TaskStatus::Other : task.changes.back().status;
    if (now == st) return;
    task.changes.push_back({message, st});
    auto it = std::lower_bound(in_progress_.begin(), in_progress_.end(), t);
    const bool listed = it != in_progress_.end() && *it == t;
    if (st == TaskStatus::InProgress && !listed) in_progress_.insert(it, t);
    if (st != TaskStatus::InProgress && listed) in_progress_.erase(it);
    if ((st == TaskStatus::InProgress) != listed) in_progress_set_.reset();
  }

  // A list tool's call: the items it lists, and the end of those it no longer does.
  void update_list(const std::vector<Item>& items, std::uint32_t message) {
    std::vector<std::uint32_t> seen;
    for (const Item& item : items) {
      const std::uint32_t t = task(item.key, item.title, message);
      from_list_.resize(h_.tasks.size(), false);
      from_list_[t] = true;
      seen.push_back(t);
      set(t, item.status, message);
    }
    std::sort(seen.begin(), seen.end());
    for (std::uint32_t t = 0; t < from_list_.size(); ++t)
      if (from_list_[t] && !std::binary_search(seen.begin(), seen.end(), t) &&
          h_.tasks[t].status_before(message + 1) == TaskStatus::InProgress)
        set(t, TaskStatus::Other, message);
  }

  void task_call(std::size_t tool_index, std::uint32_t message, const Part& p) {
    const TaskTool& tt = tools_[tool_index];
    const std::shared_ptr<const TaskCallFacts> facts =
        memoized(calls_, salts_[tool_index], p,
                 [&](std::string_view text) -> std::optional<TaskCallFacts> { return read_task_call(tt, text); });
    if (!facts) return;
    switch (tt.kind) {
      case TaskTool::Kind::Checklist:
      case TaskTool::Kind::List:
        update_list(facts->items, message);
        return;
      case TaskTool::Kind::Single: {
        const std::string key = "id:" + facts->id;
        const std::string title = facts->text.value_or(index_.count(key) ? "" : "#" + facts->id);
        const std::uint32_t t = task(key, title, message);
        if (facts->has_status) set(t, facts->status, message);
        return;
      }
      case TaskTool::Kind::Create:
        if (!p.id.empty()) creating_[p.id] = {facts->text.value_or(""), &tt};
        return;
    }
  }

  void call(std::uint32_t message, std::uint32_t part, const Part& p) {
    if (const std::optional<std::size_t> tt = tool(p.name)) {
      task_call(*tt, message, p);
      own(p.id, message, {});  // its result belongs to no task
      return;
    }
    const std::span<const std::uint32_t> tasks = in_progress();
    if (!tasks.empty()) h_.owned.push_back({message, part, message, tasks});
    own(p.id, message, tasks);
  }

  // A result belongs to the tasks of the latest call with its id: kept only
  // where there are some (most calls of a session without a task tool have none).
  void own(std::string_view id, std::uint32_t message, std::span<const std::uint32_t> tasks) {
    if (id.empty()) return;
    if (!tasks.empty())
      owners_[id] = {message, tasks};
    else if (!owners_.empty())
      owners_.erase(id);
  }

  // The tasks in progress now, as a set kept in the history (added once per change).
  std::span<const std::uint32_t> in_progress() {
    if (in_progress_.empty()) return {};
    if (!in_progress_set_) {
      h_.task_sets.push_back(in_progress_);
      in_progress_set_ = h_.task_sets.size() - 1;
    }
    return h_.task_sets[*in_progress_set_];
  }

  void result(std::uint32_t message, std::uint32_t part, const Part& p) {
    if (auto c = creating_.empty() ? creating_.end() : creating_.find(p.id); c != creating_.end()) {
      const std::string& after = c->second.tool->id_after;
      const std::size_t at = p.text.find(after);
      if (at != std::string::npos) {
        std::size_t end = at + after.size();
        while (end < p.text.size() && p.text[end] != ' ' && p.text[end] != '\n' && p.text[end] != '\t') ++end;
        const std::string id = p.text.substr(at + after.size(), end - at - after.size());
        if (!id.empty()) task("id:" + id, c->second.title.empty() ? "#" + id : c->second.title, message);
      }
      creating_.erase(c);
    }
    if (owners_.empty()) return;
    auto it = owners_.find(p.id);
    if (it == owners_.end()) return;
    h_.owned.push_back({message, part, it->second.message, it->second.tasks});
  }

  struct Owner {
    std::uint32_t message = 0;
    std::span<const std::uint32_t> tasks;
  };
  struct Creating {
    std::string title;
    const TaskTool* tool = nullptr;
  };

  std::vector<TaskTool> tools_;
  Memo<TaskCallFacts>* calls_;
  std::vector<std::uint64_t> salts_;  // each tool's, for calls_
  TaskHistory h_;
  std::map<std::string, std::uint32_t> index_;  // task key -> index
  std::vector<bool> from_list_;                 // task came from a list tool
  std::vector<std::uint32_t> in_progress_;      // ascending
  std::optional<std::size_t> in_progress_set_;  // its copy in h_.task_sets, while unchanged
  // Keyed by views of the conversation's ids: the tracker lives within run().
  std::unordered_map<std::string_view, Owner> owners_;  // call id -> the tasks of its call (latest call)
  std::unordered_map<std::string, Creating> creating_;  // call id -> a task being created
};

}  // namespace

std::optional<TaskTool> parse_task_tool(std::string_view spec, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<TaskTool> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  TaskTool t;
  std::size_t pos = 0;
  bool first = true;
  while (pos < spec.size()) {
    while (pos < spec.size() && spec[pos] == ' ') ++pos;
    if (pos == spec.size()) break;
    std::size_t end = spec.find(' ', pos);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view word = spec.substr(pos, end - pos);
    pos = end;
    if (first) {
      first = false;
      if (word.find('=') != std::string_view::npos) return fail("the spec must start with the tool's name");
      t.name = word;
      continue;
    }
    const std::size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq + 1 == word.size())
      return fail("'" + std::string(word) + "': expected key=value");
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    auto pointer = [&](std::string& out) -> bool {
      if (!valid_pointer(value)) return false;
      out = value;
      return true;
    };
    bool ok = true;
    if (key == "list" || key == "checklist") {
      ok = pointer(t.list);
      t.kind = key == "list" ? TaskTool::Kind::List : TaskTool::Kind::Checklist;
    } else if (key == "status") {
      ok = pointer(t.status);
    } else if (key == "id") {
      ok = pointer(t.id);
    } else if (key == "id_after") {
      t.id_after = value;
    } else if (key == "text") {
      std::string_view rest = value;
      while (ok && !rest.empty()) {
        const std::size_t bar = rest.find('|');
        const std::string_view one = rest.substr(0, bar);
        ok = valid_pointer(one);
        t.text.emplace_back(one);
        rest.remove_prefix(bar == std::string_view::npos ? rest.size() : bar + 1);
      }
    } else {
      return fail("unknown key '" + std::string(key) + "' (list, checklist, text, status, id, id_after)");
    }
    if (!ok) return fail("'" + std::string(word) + "': not a JSON pointer (RFC 6901, starting with '/')");
  }
  if (t.name.empty()) return fail("empty spec: expected the tool's name");
  const bool list = t.kind == TaskTool::Kind::List || t.kind == TaskTool::Kind::Checklist;
  if (!list && !t.id_after.empty()) {
    if (!t.id.empty()) return fail("id= and id_after= exclude each other");
    t.kind = TaskTool::Kind::Create;
  }
  if (t.kind == TaskTool::Kind::List && (t.status.empty() || (t.text.empty() && t.id.empty())))
    return fail("list= needs status= and text= or id=");
  if (t.kind == TaskTool::Kind::Single && (t.id.empty() || t.status.empty()))
    return fail("a tool without list= or checklist= needs id= and status= (or id_after= for one that creates tasks)");
  return t;
}

TaskStatus TrackedTask::status_before(std::uint32_t end) const {
  TaskStatus st = TaskStatus::Other;
  for (const Change& c : changes) {
    if (c.message >= end) break;
    st = c.status;
  }
  return st;
}

const std::string& TrackedTask::title_at(std::uint32_t message) const {
  static const std::string kNone;
  const std::string* t = titles.empty() ? &kNone : &titles.front().title;
  for (const Titled& x : titles) {
    if (x.message > message) break;
    t = &x.title;
  }
  return *t;
}

std::optional<std::uint32_t> TrackedTask::completed_after(std::uint32_t after) const {
  for (const Change& c : changes)
    if (c.message > after && c.status == TaskStatus::Completed) return c.message;
  return std::nullopt;
}

std::size_t TaskCallFacts::memo_bytes() const {
  std::size_t n = sizeof(TaskCallFacts) + id.size() + (text ? text->size() : 0);
  for (const Item& i : items) n += sizeof(Item) + i.key.size() + i.title.size();
  return n;
}

TaskHistory track_tasks(const Conversation& conv, const TaskToolsOptions& opt, Memo<TaskCallFacts>* calls) {
  std::vector<TaskTool> tools;
  for (const std::string& spec : opt.completed_tasks_tools)
    if (auto t = parse_task_tool(spec)) tools.push_back(std::move(*t));
  if (tools.empty()) return {};
  return Tracker(std::move(tools), calls).run(conv);
}

}  // namespace td::pruning
