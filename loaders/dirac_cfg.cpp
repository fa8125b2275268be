#include <charconv>
#include <cmath>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "loaders/dirac_resources.hpp"
#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::dirac {
namespace {

constexpr size_t kMaxDepth = 64;

// One section of the tree. Options and subsections keep their order and are found by name through an
// index (a section of 200,000 options was a linear search per option: 82 s).
struct Section {
  std::vector<std::pair<std::string, std::string>> options;  // in order; a repeated one replaced in place
  std::vector<std::pair<std::string, std::unique_ptr<Section>>> sections;
  std::unordered_map<std::string, size_t> option_at, section_at;  // name -> index in the vectors above
  std::string path;                                               // "Sites/LCG.CERN.ch", for errors
  size_t line = 0;
  std::string* option(const std::string& name) {
    const auto it = option_at.find(name);
    return it == option_at.end() ? nullptr : &options[it->second].second;
  }
  Section* section(const std::string& name) const {
    const auto it = section_at.find(name);
    return it == section_at.end() ? nullptr : sections[it->second].second.get();
  }
  void add_option(const std::string& name, const std::string& value) {
    option_at.emplace(name, options.size());
    options.emplace_back(name, value);
  }
  Section* add_section(const std::string& name, std::unique_ptr<Section> s) {
    section_at.emplace(name, sections.size());
    sections.emplace_back(name, std::move(s));
    return sections.back().second.get();
  }
};

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r") - b + 1));
}

void check_name(const std::string& name, const std::string& path, size_t line, const std::string& where) {
  if (name.empty()) throw LoadError(path, line, where, "an option or section without a name");
  if (name.find('/') != std::string::npos)
    throw LoadError(path, line, where, fmt::format("'{}': names must not hold '/'", name));
}

std::unique_ptr<Section> parse(const std::string& path) {
  auto root = std::make_unique<Section>();
  std::vector<Section*> stack{root.get()};
  std::string pending;  // a section name read so far
  size_t pending_line = 0;
  LineReader in(path);
  std::string_view raw;
  while (in.next(raw)) {
    const std::string line = trim(raw);
    const size_t ln = in.line();
    if (line.empty() || line[0] == '#') continue;
    // A name alone on a line is a section's whose '{' opens the next line; anything else after it is a
    // line that is neither option nor section (diraccfg glues the two into one name: 'junkQueues', and
    // the site loses its queues without a word).
    if (!trim(pending).empty() && line[0] != '{')
      throw LoadError(
          path, pending_line, stack.back()->path,
          fmt::format("'{}' is neither an option nor a section (no '=', and no '{{' follows)", trim(pending)));
    Section& here = *stack.back();
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '{') {
        const std::string name = trim(pending);
        check_name(name, path, pending_line ? pending_line : ln, here.path);
        if (here.option(name))
          throw LoadError(path, ln, here.path, fmt::format("'{}' is an option and a section", name));
        if (stack.size() > kMaxDepth) throw LoadError(path, ln, here.path, "sections nested more than 64 deep");
        Section* s = stack.back()->section(name);  // opened twice: one section
        if (!s) {
          auto fresh = std::make_unique<Section>();
          fresh->path = stack.back()->path.empty() ? name : stack.back()->path + "/" + name;
          fresh->line = ln;
          s = stack.back()->add_section(name, std::move(fresh));
        }
        stack.push_back(s);
        pending.clear();
        pending_line = 0;
      } else if (c == '}') {
        if (!trim(pending).empty())
          throw LoadError(path, ln, stack.back()->path,
                          fmt::format("'{}' is neither an option nor a section", trim(pending)));
        if (stack.size() == 1) throw LoadError(path, ln, "", "'}' closes more sections than were opened");
        stack.pop_back();
        pending.clear();
      } else if (c == '=' || (c == '+' && i + 1 < line.size() && line[i + 1] == '=')) {
        // the whole line is the option, as diraccfg reads it: key before the first '=' (or '+='), the rest
        const bool append = c == '+';
        const size_t at = append ? line.find("+=") : line.find('=');
        const std::string key = trim(std::string_view(line).substr(0, at)),
                          value = trim(std::string_view(line).substr(at + (append ? 2 : 1)));
        Section& s = *stack.back();
        check_name(key, path, ln, s.path);
        if (s.section(key)) throw LoadError(path, ln, s.path, fmt::format("'{}' is a section and an option", key));
        std::string* old = s.option(key);
        if (append) {
          if (!old) throw LoadError(path, ln, s.path + "/" + key, "'+=' on an option not declared before");
          *old += ", " + value;
        } else if (old) {
          *old = value;
        } else {
          s.add_option(key, value);
        }
        pending.clear();
        break;
      } else {
        if (pending.empty()) pending_line = ln;
        pending += c;
      }
    }
  }
  if (stack.size() > 1)
    throw LoadError(path, stack.back()->line, stack.back()->path, "section not closed: '{' without its '}'");
  if (!trim(pending).empty())
    throw LoadError(path, pending_line, "", fmt::format("'{}' is neither an option nor a section", trim(pending)));
  return root;
}

// A value that reads as a number past the range of a double (`1e400`) is an error, not a string: read as
// text, a queue's `CPUTime = 1e400` turned every job's numeric requirement into a type error.
struct OutOfRange {};

Param param_of(const std::string& value) {
  Param p;
  std::vector<std::string> items;
  size_t b = 0;
  while (b <= value.size()) {
    size_t e = value.find(',', b);
    if (e == std::string::npos) e = value.size();
    std::string item = trim(std::string_view(value).substr(b, e - b));
    if (!item.empty()) items.push_back(std::move(item));
    b = e + 1;
  }
  if (items.size() > 1) {
    p.list = true;
    p.items = std::move(items);
    return p;
  }
  p.text = items.empty() ? std::string() : items[0];
  double d = 0;
  const auto [end, ec] = std::from_chars(p.text.data(), p.text.data() + p.text.size(), d);
  if (!p.text.empty() && ec == std::errc::result_out_of_range && end == p.text.data() + p.text.size())
    throw OutOfRange{};
  if (!p.text.empty() && ec == std::errc() && end == p.text.data() + p.text.size() && std::isfinite(d)) {
    p.number = true;
    p.num = d;
  }
  return p;
}

Params params_of(const Section& s, const std::string& file) {
  Params out;
  for (const auto& [k, v] : s.options) try {
      out[k] = param_of(v);
    } catch (const OutOfRange&) {
      throw LoadError(file, s.line, s.path + "/" + k, fmt::format("'{}' is a number beyond the range of a double", v));
    }
  return out;
}

void read_site(const std::string& name, const Section& site, std::vector<Queue>& out, const std::string& file) {
  const Params sp = params_of(site, file);
  const Section* ces = site.section("CEs");
  if (!ces) return;
  for (const auto& [cname, ce] : ces->sections) {
    Params cp = sp;  // CE parameters override the site's
    for (auto& [k, v] : params_of(*ce, file)) cp[k] = v;
    const Section* queues = ce->section("Queues");
    if (!queues) continue;
    for (const auto& [qname, q] : queues->sections) {
      Queue queue{name, cname, qname, cp};  // queue parameters override the CE's
      for (auto& [k, v] : params_of(*q, file)) queue.params[k] = v;
      out.push_back(std::move(queue));
    }
  }
}

}  // namespace

bool is_cfg_text(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::string_view raw;
  while (in.next(raw)) {
    std::string line = trim(raw);
    if (line.compare(0, 3, "\xEF\xBB\xBF") == 0) line = trim(std::string_view(line).substr(3));
    if (line.empty() || line[0] == '#') continue;
    return line[0] != '{';
  }
  return false;  // empty: the JSON reader says so
}

std::vector<Queue> read_resources_cfg(const std::string& path) {
  const std::unique_ptr<Section> root = parse(path);
  const Section* top = root->section("Resources") ? root->section("Resources") : root.get();
  const Section* sites = top->section("Sites");
  if (!sites) throw LoadError(path, 0, "Sites", "no Sites section (Resources/Sites/<site>/CEs/<ce>/Queues/<queue>)");
  std::vector<Queue> out;
  for (const auto& [name, s] : sites->sections) {
    if (s->section("CEs") || !s->options.empty()) {
      read_site(name, *s, out, path);
    } else {  // a grid section (DIRAC's Sites/LCG/LCG.CERN.ch): its sections are the sites
      for (const auto& [sname, site] : s->sections) read_site(sname, *site, out, path);
    }
  }
  return out;
}

}  // namespace colmatch::loaders::dirac
