#include "loaders/slurm_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::slurm {
namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '/' || c == '.' || c == '-';
}

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

double number(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v) || v < 0)
    throw std::invalid_argument(fmt::format("'{}' is not a number", text));
  return v;
}

// The sbatch options colmatch reads: short name -> long name, and whether each takes a value.
const std::map<std::string, std::string>& short_names() {
  static const std::map<std::string, std::string> m{{"N", "nodes"},      {"n", "ntasks"},    {"c", "cpus-per-task"},
                                                    {"C", "constraint"}, {"p", "partition"}, {"w", "nodelist"},
                                                    {"x", "exclude"},    {"t", "time"},      {"J", "job-name"},
                                                    {"A", "account"},    {"q", "qos"},       {"G", "gpus"}};
  return m;
}

bool is_flag(const std::string& name) { return name == "exclusive" || name == "hold" || name == "H"; }

// Splits a line into words: blanks separate, quotes group (and are dropped).
std::vector<std::string> words(std::string_view line, const std::string& path, size_t ln) {
  std::vector<std::string> out;
  std::string cur;
  bool in = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      if (in) out.push_back(std::move(cur)), cur.clear(), in = false;
    } else {
      cur += c;
      in = true;
    }
  }
  if (quote) throw LoadError(path, ln, "", "a quote is not closed");
  if (in) out.push_back(std::move(cur));
  return out;
}

void parse_options(const std::vector<std::string>& w, SbatchJob& job) {
  for (size_t i = 0; i < w.size() && job.error.empty(); ++i) {
    std::string name, value;
    bool has_value = false;
    if (w[i].rfind("--", 0) == 0) {
      const size_t eq = w[i].find('=');
      name = w[i].substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) value = w[i].substr(eq + 1), has_value = true;
    } else if (w[i].size() >= 2 && w[i][0] == '-') {
      const auto s = short_names().find(w[i].substr(1, 1));
      if (w[i] == "-H") {
        name = "hold";
      } else if (s == short_names().end()) {
        job.error = fmt::format("sbatch option '{}' is not one colmatch reads", w[i]);
        break;
      } else {
        name = s->second;
        if (w[i].size() > 2) value = w[i].substr(2), has_value = true;  // -N2
      }
    } else {
      job.error = fmt::format("'{}' is not an sbatch option (a script name or a stray word)", w[i]);
      break;
    }
    if (!is_flag(name) && !has_value) {
      if (i + 1 >= w.size()) {
        job.error = fmt::format("sbatch option '{}' needs a value", w[i]);
        break;
      }
      value = w[++i];
    }
    job.options.emplace_back(name, value);
  }
}

}  // namespace

std::optional<std::string_view> Record::get(std::string_view k) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (key(i) == k) return value(i);
  return std::nullopt;
}

void for_each_record(const std::string& path, std::string_view first_key,
                     const std::function<void(const Record&)>& each) {
  require_not_directory(path);
  LineReader in(path);
  Record r;
  size_t count = 0;
  std::string_view line;
  while (in.next(line)) {
    line = trim(line);
    if (line.empty()) continue;
    if (line.size() <= first_key.size() || line.substr(0, first_key.size()) != first_key ||
        line[first_key.size()] != '=')
      throw LoadError(path, in.line(), std::string(first_key), fmt::format("a record starts with {}=", first_key));
    if (count++ >= kMaxHosts) throw LoadError(path, in.line(), "", "too many records");
    if (line.size() > UINT32_MAX) throw LoadError(path, in.line(), std::string(first_key), "a line longer than 4 GiB");
    r.text.assign(line);
    r.fields.clear();
    r.line = in.line();
    // field starts: the beginning, and every blank followed by a word and '='; a field ends where the next
    // starts, less the blanks before it
    const std::string_view t = r.text;
    auto add = [&](size_t from, size_t to) {
      while (to > from && (t[to - 1] == ' ' || t[to - 1] == '\t' || t[to - 1] == '\r')) --to;
      const size_t eq = t.find('=', from);
      r.fields.push_back({static_cast<uint32_t>(from), static_cast<uint32_t>(eq), static_cast<uint32_t>(to)});
    };
    size_t start = 0;
    for (size_t i = 1; i < t.size(); ++i) {
      if (t[i - 1] != ' ' || t[i] == ' ') continue;
      size_t j = i;
      while (j < t.size() && word_char(t[j])) ++j;
      if (j > i && j < t.size() && t[j] == '=') {
        add(start, i);
        start = i;
      }
    }
    add(start, t.size());
    each(r);
  }
}

std::vector<Record> read_records(const std::string& path, std::string_view first_key) {
  std::vector<Record> out;
  for_each_record(path, first_key, [&](const Record& r) { out.push_back(r); });
  return out;
}

std::vector<ConfigSetting> read_config(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::vector<ConfigSetting> out;
  std::string_view line;
  while (in.next(line)) {
    const size_t eq = line.find(" = ");
    if (eq == std::string_view::npos) continue;
    if (out.size() >= kMaxHosts) throw LoadError(path, in.line(), "", "too many settings");
    out.push_back({std::string(trim(line.substr(0, eq))), std::string(trim(line.substr(eq + 3))), in.line()});
  }
  return out;
}

std::vector<std::string> expand_hostlist(std::string_view list, size_t limit) {
  limit = std::min(limit, kMaxHosts);
  std::vector<std::string> out;
  // split at commas outside brackets
  size_t depth = 0, b = 0;
  std::vector<std::string_view> items;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > b) items.push_back(list.substr(b, i - b));
      b = i + 1;
    } else if (list[i] == '[') {
      if (++depth > 1) throw std::invalid_argument(fmt::format("'{}': nested brackets", list));
    } else if (list[i] == ']') {
      if (depth-- == 0) throw std::invalid_argument(fmt::format("'{}': ']' without '['", list));
    }
  }
  if (depth) throw std::invalid_argument(fmt::format("'{}': '[' without ']'", list));
  for (std::string_view item : items) {
    // expand bracket groups left to right (a name may have several: rack[1-2]-n[01-02])
    std::vector<std::string> names{""};
    size_t i = 0;
    while (i < item.size()) {
      const size_t open = item.find('[', i);
      const std::string_view lit = item.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i);
      for (auto& n : names) n.append(lit);
      if (open == std::string_view::npos) break;
      const size_t close = item.find(']', open);
      std::vector<std::string> next;
      const std::string_view inside = item.substr(open + 1, close - open - 1);
      size_t r = 0;
      while (r <= inside.size()) {
        size_t e = inside.find(',', r);
        if (e == std::string_view::npos) e = inside.size();
        const std::string_view range = inside.substr(r, e - r);
        const size_t dash = range.find('-');
        const std::string_view lo = range.substr(0, dash),
                               hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
        uint64_t a = 0, z = 0;
        auto [p1, e1] = std::from_chars(lo.data(), lo.data() + lo.size(), a);
        auto [p2, e2] = std::from_chars(hi.data(), hi.data() + hi.size(), z);
        if (lo.empty() || hi.empty() || e1 != std::errc() || e2 != std::errc() || p1 != lo.data() + lo.size() ||
            p2 != hi.data() + hi.size() || z < a)
          throw std::invalid_argument(fmt::format("'{}': '{}' is not a range", list, range));
        // (z - a first: a range of 2^64 numbers would wrap to 0)
        // bounded in total: the names made so far by this item's ranges count too (`n[1-100,1-100,...]`)
        if (z - a >= limit || (z - a + 1) * names.size() > limit - std::min(limit, out.size() + next.size()))
          throw std::invalid_argument(fmt::format("'{}' names more than {} hosts", list, limit));
        for (const auto& n : names)
          for (uint64_t v = a; v <= z; ++v) next.push_back(n + fmt::format("{:0{}d}", v, lo.size()));
        r = e + 1;
      }
      names = std::move(next);
      i = close + 1;
    }
    out.insert(out.end(), names.begin(), names.end());
  }
  return out;
}

double parse_number(std::string_view text) {
  // decimal only, as Slurm's own readers (strtol/strtod of base 10 on what scontrol printed): std::stod
  // also took hexadecimal ("0x20" CPUs) and leading blanks
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return std::numeric_limits<double>::quiet_NaN();
  return x;
}

double parse_mebibytes(std::string_view text) {
  text = trim(text);
  double scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K': scale = 1.0 / 1024; break;
      case 'M': scale = 1; break;
      case 'G': scale = 1024; break;
      case 'T': scale = 1024.0 * 1024; break;
      default: scale = 0;
    }
    if (scale != 0) text.remove_suffix(1);
    else scale = 1;
  }
  return number(text) * scale;
}

double parse_slurm_time(std::string_view text) {
  text = trim(text);
  if (text == "UNLIMITED" || text == "INFINITE") return std::numeric_limits<double>::infinity();
  double days = 0;
  const size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    days = number(text.substr(0, dash));
    text = text.substr(dash + 1);
  }
  std::vector<double> parts;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find(':', b);
    if (e == std::string_view::npos) e = text.size();
    parts.push_back(number(text.substr(b, e - b)));
    b = e + 1;
  }
  if (parts.size() > 3) throw std::invalid_argument(fmt::format("'{}' is not a time", text));
  double s = 0;
  if (dash != std::string_view::npos) {  // D-HH[:MM[:SS]]
    s = parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) + (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {  // minutes
    s = parts[0] * 60;
  } else if (parts.size() == 2) {  // MM:SS
    s = parts[0] * 60 + parts[1];
  } else {
    s = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  return days * 86400 + s;
}

std::vector<SbatchJob> read_sbatch_jobs(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::vector<SbatchJob> out;
  std::vector<std::string> script;  // words of consecutive #SBATCH lines
  size_t script_line = 0;
  auto flush = [&] {
    if (script_line == 0) return;
    SbatchJob j;
    j.line = script_line;
    parse_options(script, j);
    out.push_back(std::move(j));
    script.clear();
    script_line = 0;
  };
  std::string_view raw;
  bool in_script = false;  // from a `#!` or `#SBATCH` line to the next blank line: the rest is the script's body
  while (in.next(raw)) {
    const std::string_view line = trim(raw);
    if (line.rfind("#SBATCH", 0) == 0) {
      if (script_line == 0) script_line = in.line();
      in_script = true;
      for (auto& w : words(line.substr(7), path, in.line())) script.push_back(std::move(w));
      continue;
    }
    flush();
    if (line.rfind("#!", 0) == 0) in_script = true;
    if (line.empty()) in_script = false;
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '-') in_script = false;  // an option line is a job of its own
    else if (in_script) continue;           // a line of a script's body
    if (out.size() >= kMaxHosts) throw LoadError(path, in.line(), "", "too many jobs");
    SbatchJob j;
    j.line = in.line();
    parse_options(words(line, path, in.line()), j);
    out.push_back(std::move(j));
  }
  flush();
  return out;
}

double parse_slurm_date(std::string_view text) {
  const std::string t(text);
  std::tm tm{};
  int n = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &n) != 6 ||
      static_cast<size_t>(n) != t.size())
    throw std::invalid_argument(fmt::format("'{}' is not YYYY-MM-DDTHH:MM:SS", text));
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

namespace {

// The items of a TRES list with their `gres:` or `gres/` prefix dropped.
std::vector<std::string> gres_items(std::string_view tres) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= tres.size()) {
    size_t e = tres.find(',', b);
    if (e == std::string_view::npos) e = tres.size();
    std::string_view item = tres.substr(b, e - b);
    if (item.substr(0, 5) == "gres:" || item.substr(0, 5) == "gres/") item.remove_prefix(5);
    out.emplace_back(item);
    b = e + 1;
  }
  return out;
}

}  // namespace

double tres_count(std::string_view tres, std::string_view name) {
  for (size_t b = 0; b <= tres.size();) {
    size_t e = tres.find(',', b);
    if (e == std::string_view::npos) e = tres.size();
    const std::string_view item = tres.substr(b, e - b);
    if (item.size() > name.size() && item.substr(0, name.size()) == name && item[name.size()] == '=') {
      const std::string_view v = item.substr(name.size() + 1);
      double x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      return ec == std::errc() && end == v.data() + v.size() ? x : std::nan("");
    }
    b = e + 1;
  }
  return std::nan("");
}

std::string gres_of_tres(std::string_view tres) {
  std::string out;
  for (const std::string& item : gres_items(tres)) out += (out.empty() ? "" : ",") + item;
  return out;
}

std::string gpus_of_tres(std::string_view tres) {
  const std::vector<std::string> items = gres_items(tres);
  if (items.size() != 1 || items[0].substr(0, 4) != "gpu:" || items[0].size() == 4) return {};
  return items[0].substr(4);
}

std::string per_gpu_of_tres(std::string_view tres) {
  const std::string n = gpus_of_tres(tres);
  return n.find(':') == std::string::npos ? n : std::string();
}

std::vector<std::string_view> split_fields(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  for (size_t b = 0;;) {
    const size_t e = line.find(sep, b);
    out.push_back(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

}  // namespace colmatch::loaders::slurm
