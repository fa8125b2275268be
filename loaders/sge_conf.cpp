#include "loaders/sge_conf.hpp"

#include <unordered_set>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::sge {
namespace {

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool blank(char c) { return c == ' ' || c == '\t'; }

// The lines of a qconf file with their numbers, continuations (a trailing backslash) joined: the
// number is the first line's. Bounded in bytes.
struct Line {
  std::string text;
  size_t line;
};

std::vector<Line> logical_lines(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::vector<Line> out;
  std::string_view raw;
  size_t bytes = 0;
  bool open = false;  // the last line ended with a backslash
  while (in.next(raw)) {
    bytes += raw.size() + 1;
    if (bytes > kMaxConfBytes)
      throw LoadError(path, in.line(), "", fmt::format("more than {} MiB of qconf output", kMaxConfBytes >> 20));
    std::string_view t = trim(raw);
    const bool cont = !t.empty() && t.back() == '\\';
    if (cont) t = trim(t.substr(0, t.size() - 1));
    if (open) {  // qconf wraps between items: keep a blank between them
      out.back().text.append(" ").append(t);
    } else {
      out.push_back({std::string(t), in.line()});
    }
    open = cont;
  }
  if (open) throw LoadError(path, out.back().line, "", "the last line ends with a backslash: the file is cut short");
  return out;
}

}  // namespace

std::vector<Complex> read_complexes(const std::string& path) {
  static const char* kColumns[] = {"name",        "shortcut",   "type",    "relop",
                                   "requestable", "consumable", "default", "urgency"};
  std::vector<Complex> out;
  std::unordered_set<std::string> names;
  for (const Line& l : logical_lines(path)) {
    if (l.text.empty() || l.text[0] == '#') continue;
    std::vector<std::string> cols;
    size_t i = 0;
    const std::string& s = l.text;
    while (i < s.size()) {
      while (i < s.size() && blank(s[i])) ++i;
      const size_t b = i;
      while (i < s.size() && !blank(s[i])) ++i;
      if (i > b) cols.emplace_back(s.substr(b, i - b));
    }
    if (cols.size() != 8)
      throw LoadError(path, l.line, cols.size() < 8 ? kColumns[cols.size()] : "",
                      fmt::format("expected the 8 columns of qconf -sc (name shortcut type relop requestable "
                                  "consumable default urgency), found {}",
                                  cols.size()));
    if (out.size() >= kMaxRecords) throw LoadError(path, l.line, "", "too many complexes");
    if (!names.insert(cols[0]).second)
      throw LoadError(path, l.line, "name", fmt::format("complex '{}' is defined twice", cols[0]));
    out.push_back({cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], l.line});
  }
  return out;
}

const Field* Record::find(std::string_view key) const {
  for (const Field& f : fields)
    if (f.key == key) return &f;
  return nullptr;
}

std::string Record::value(std::string_view key, std::string_view fallback) const {
  const Field* f = find(key);
  return f ? f->value : std::string(fallback);
}

std::vector<Record> read_records(const std::string& path, std::string_view first_key) {
  std::vector<Record> out;
  std::unordered_set<std::string> keys;  // of the current record
  for (const Line& l : logical_lines(path)) {
    if (l.text.empty() || l.text[0] == '#') continue;
    size_t k = 0;
    while (k < l.text.size() && !blank(l.text[k])) ++k;
    Field f{l.text.substr(0, k), std::string(trim(std::string_view(l.text).substr(k))), l.line};
    if (f.value.empty()) throw LoadError(path, l.line, f.key, "no value (qconf prints NONE for an empty one)");
    if (f.key == first_key) {
      if (out.size() >= kMaxRecords) throw LoadError(path, l.line, f.key, "too many records");
      out.push_back({{}, l.line});
      keys.clear();
    } else if (out.empty()) {
      throw LoadError(path, l.line, f.key, fmt::format("a record starts with '{}'", first_key));
    }
    if (!keys.insert(f.key).second)
      throw LoadError(path, l.line, f.key, fmt::format("given twice in the record of line {}", out.back().line));
    out.back().fields.push_back(std::move(f));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> split_values(std::string_view text, const Where& at) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : split_words(text)) {  // the same items: blanks or commas between them
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw LoadError(at.path, at.line, at.field, fmt::format("'{}' is not name=value", item));
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

Overrides split_overrides(std::string_view text, const Where& at) {
  Overrides out;
  text = trim(text);
  const size_t first = text.find('[');
  std::string_view fallback = trim(text.substr(0, first));
  if (!fallback.empty() && fallback.back() == ',') fallback = trim(fallback.substr(0, fallback.size() - 1));
  out.fallback = std::string(fallback);
  if (first == std::string_view::npos) return out;
  if (out.fallback.empty())
    throw LoadError(at.path, at.line, at.field, "per-host values need a default before them (queue_conf(5))");
  std::unordered_set<std::string> seen;
  size_t i = first;
  while (i < text.size()) {
    if (text[i] != '[')
      throw LoadError(at.path, at.line, at.field, fmt::format("unexpected '{}' between per-host values", text[i]));
    const size_t close = text.find(']', i);
    if (close == std::string_view::npos)
      throw LoadError(at.path, at.line, at.field, "a per-host value '[' is not closed");
    const std::string_view inner = trim(text.substr(i + 1, close - i - 1));
    const size_t eq = inner.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == inner.size())
      throw LoadError(at.path, at.line, at.field, fmt::format("'[{}]' is not [host=value]", inner));
    std::string host(trim(inner.substr(0, eq)));
    if (!seen.insert(host).second)
      throw LoadError(at.path, at.line, at.field, fmt::format("'{}' has two per-host values", host));
    out.specific.emplace_back(std::move(host), std::string(trim(inner.substr(eq + 1))));
    i = close + 1;
    while (i < text.size() && (blank(text[i]) || text[i] == ',')) ++i;
  }
  return out;
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> out;
  text = trim(text);
  if (text == "NONE") return out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (blank(text[i]) || text[i] == ',')) ++i;
    const size_t b = i;
    while (i < text.size() && !blank(text[i]) && text[i] != ',') ++i;
    if (i > b) out.emplace_back(text.substr(b, i - b));
  }
  return out;
}

}  // namespace colmatch::loaders::sge
