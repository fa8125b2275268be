#include "loaders/vov_tcl.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {
namespace {

constexpr size_t kMaxForeachDepth = 8, kMaxCommands = 1000000, kMaxValue = 65536;
constexpr size_t kMaxStored = size_t{64} << 20;  // bytes of resource lists and maps a file may define
constexpr char kLiteralDollar = '\x01';          // an escaped \$ until substitution is done

struct Word {
  std::string text;
  bool subst = true;  // bare or quoted: $ substitution applies; braced: literal
  size_t line = 0;
};

struct Command {
  std::vector<Word> words;
  size_t line = 0;
};

class Reader {
 public:
  Reader(const std::string& source, VovTclFile& out) : source_(source), out_(out) {}

  void run(std::string_view text, size_t first_line, size_t depth) {
    for (const Command& c : split(text, first_line)) execute(c, depth);
  }

 private:
  [[noreturn]] void fail(size_t line, const std::string& command, const std::string& why) const {
    throw LoadError(source_, line, command, why);
  }

  // The commands of `text`, whose first line is `line`.
  std::vector<Command> split(std::string_view t, size_t line) const {
    std::vector<Command> out;
    Command cur;
    size_t i = 0;
    auto end_command = [&] {
      if (!cur.words.empty()) out.push_back(std::move(cur));
      cur = Command{};
    };
    while (i < t.size()) {
      const char c = t[i];
      if (c == '\\' && i + 1 < t.size() && t[i + 1] == '\n') {  // continuation
        i += 2;
        ++line;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
        continue;
      }
      if (c == '\n' || c == ';') {
        if (c == '\n') ++line;
        ++i;
        end_command();
        continue;
      }
      if (c == '#' && cur.words.empty()) {  // a comment, to the end of the line
        while (i < t.size() && t[i] != '\n') ++i;
        continue;
      }
      Word w;
      w.line = line;
      if (cur.words.empty()) cur.line = line;
      if (c == '{') {
        int level = 1;
        size_t j = i + 1;
        for (; j < t.size() && level > 0; ++j) {
          if (t[j] == '\\' && j + 1 < t.size()) {
            if (t[j + 1] == '\n') ++line;
            ++j;
            continue;
          }
          if (t[j] == '{') ++level;
          if (t[j] == '}') --level;
          if (t[j] == '\n') ++line;
        }
        if (level > 0) fail(w.line, first_word(cur), "'{' without '}'");
        w.text = std::string(t.substr(i + 1, j - i - 2));
        w.subst = false;
        i = j;
      } else if (c == '"') {
        size_t j = i + 1;
        std::string s;
        for (; j < t.size() && t[j] != '"'; ++j) {
          if (t[j] == '\\' && j + 1 < t.size()) {
            const char e = t[++j];
            s += e == 'n' ? '\n' : e == 't' ? '\t' : e == '$' ? kLiteralDollar : e;
            if (e == '\n') ++line;
            continue;
          }
          if (t[j] == '\n') ++line;
          s += t[j];
        }
        if (j >= t.size()) fail(w.line, first_word(cur), "'\"' without its closing '\"'");
        w.text = std::move(s);
        i = j + 1;
      } else {
        size_t j = i;
        std::string s;
        for (; j < t.size() && t[j] != ' ' && t[j] != '\t' && t[j] != '\r' && t[j] != '\n' && t[j] != ';'; ++j) {
          if (t[j] == '\\' && j + 1 < t.size() && t[j + 1] != '\n') {
            ++j;
            s += t[j] == '$' ? kLiteralDollar : t[j];
            continue;
          }
          s += t[j];
        }
        w.text = std::move(s);
        i = j;
      }
      if (w.subst && w.text.find('[') != std::string::npos)
        fail(w.line, cur.words.empty() ? w.text : first_word(cur), "command substitution [...] is not supported");
      cur.words.push_back(std::move(w));
    }
    end_command();
    return out;
  }

  static std::string first_word(const Command& c) { return c.words.empty() ? std::string() : c.words[0].text; }

  std::string value(const Word& w, const std::string& command) const {
    if (!w.subst) return w.text;
    std::string out = substitute(w, command);
    for (char& ch : out)
      if (ch == kLiteralDollar) ch = '$';
    return out;
  }

  std::string substitute(const Word& w, const std::string& command) const {
    std::string out;
    for (size_t i = 0; i < w.text.size();) {
      if (w.text[i] != '$') {
        out += w.text[i++];
        continue;
      }
      size_t start = i + 1, end = start;
      if (start < w.text.size() && w.text[start] == '{') {
        end = w.text.find('}', start);
        if (end == std::string::npos) fail(w.line, command, "'${' without '}'");
        ++start;
      } else {
        while (end < w.text.size() && (std::isalnum(static_cast<unsigned char>(w.text[end])) || w.text[end] == '_'))
          ++end;
      }
      const std::string name = w.text.substr(start, end - start);
      if (name.empty()) {  // a lone $ (VOV's own $ resources): kept
        out += '$';
        ++i;
        continue;
      }
      const auto v = vars_.find(name);
      if (v == vars_.end())  // as Tcl: write VOV's own $ resources as \$NAME or in braces
        fail(w.line, command,
             fmt::format("no variable '{}' (a VOV $ resource is written \\${} or in braces)", name, name));
      out += v->second;
      i = w.text[i + 1] == '{' ? end + 1 : end;
      if (out.size() > kMaxValue) fail(w.line, command, "a value longer than 65,536 bytes");
    }
    return out;
  }

  // Options -NAME VALUE after the fixed words; a flag without a value in `flags`.
  std::map<std::string, std::pair<std::string, size_t>> options(const Command& c, size_t from,
                                                                const std::vector<std::string>& known,
                                                                const std::vector<std::string>& flags) const {
    std::map<std::string, std::pair<std::string, size_t>> out;
    const std::string cmd = c.words[0].text;
    for (size_t i = from; i < c.words.size(); ++i) {
      const std::string opt = value(c.words[i], cmd);
      if (std::find(flags.begin(), flags.end(), opt) != flags.end()) {
        out[opt] = {"", c.words[i].line};
        continue;
      }
      if (std::find(known.begin(), known.end(), opt) == known.end())
        fail(c.words[i].line, cmd, fmt::format("unknown option '{}'", opt));
      if (i + 1 >= c.words.size()) fail(c.words[i].line, cmd, fmt::format("option '{}' needs a value", opt));
      out[opt] = {value(c.words[i + 1], cmd), c.words[i + 1].line};
      ++i;
    }
    return out;
  }

  double number(const std::string& text, size_t line, const std::string& cmd, const char* what, double max) const {
    double v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || !(v >= 0) || v > max || !std::isfinite(v))
      fail(line, cmd, fmt::format("{} '{}' is not a number from 0 to {}", what, text, max));
    return v;
  }

  void tasker_options(const Command& c, size_t from, VovTaskerDef& t, bool defaults) const {
    const std::string cmd = c.words[0].text;
    const auto o = options(c, from,
                           defaults ? std::vector<std::string>{"-resources", "-CPUS", "-power"}
                                    : std::vector<std::string>{"-resources", "-CPUS", "-power", "-name"},
                           {});
    if (auto it = o.find("-resources"); it != o.end()) t.resources = it->second.first;
    if (auto it = o.find("-CPUS"); it != o.end()) {
      const double n = number(it->second.first, it->second.second, cmd, "-CPUS", 1e6);
      if (n < 1 || n != std::floor(n)) fail(it->second.second, cmd, "-CPUS must be a whole number >= 1");
      t.cpus = static_cast<uint32_t>(n);
    }
    if (auto it = o.find("-power"); it != o.end())
      t.power = number(it->second.first, it->second.second, cmd, "-power", 1e12);
    if (auto it = o.find("-name"); it != o.end()) t.name = it->second.first;
  }

  // Sets a variable, counting the bytes every variable holds against the bound of definitions.
  void assign(const std::string& name, std::string v, size_t line, const std::string& cmd) {
    auto [it, fresh] = vars_.try_emplace(name);
    vars_bytes_ -= fresh ? 0 : name.size() + it->second.size();
    vars_bytes_ += name.size() + v.size();
    if (vars_bytes_ > kMaxStored) fail(line, cmd, "more than 64 MiB of variables");
    it->second = std::move(v);
  }

  void store(VovMapDef& m, const Command& c, const std::string& cmd) {
    stored_ += m.name.size() + (m.map ? m.map->size() : 0);
    if (stored_ > kMaxStored) fail(c.line, cmd, "more than 64 MiB of definitions");
    out_.maps.push_back(std::move(m));
  }

  void execute(const Command& c, size_t depth) {
    if (++commands_ > kMaxCommands) fail(c.line, c.words[0].text, "more than 10^6 commands");
    const std::string cmd = value(c.words[0], "");
    const size_t n = c.words.size();
    if (cmd == "set") {
      if (n != 3) fail(c.line, cmd, "expected: set VAR VALUE");
      assign(value(c.words[1], cmd), value(c.words[2], cmd), c.line, cmd);
    } else if (cmd == "foreach") {
      if (n != 4) fail(c.line, cmd, "expected: foreach VAR {list} {body}");
      if (depth >= kMaxForeachDepth) fail(c.line, cmd, "foreach nested deeper than 8");
      const std::string var = value(c.words[1], cmd);
      const std::string list = value(c.words[2], cmd);
      std::vector<std::string> items;
      for (const Command& ic : split(list, c.words[2].line))  // a literal list: its words
        for (const Word& w : ic.words) items.push_back(w.text);
      // the body is split once; each pass counts as a command even when the body has none (a body of
      // blanks or comments), so a loop's work is bounded with the commands
      const std::vector<Command> body = split(c.words[3].text, c.words[3].line);
      for (const std::string& item : items) {
        if (++commands_ > kMaxCommands) fail(c.line, cmd, "more than 10^6 commands");
        assign(var, item, c.line, cmd);
        for (const Command& bc : body) execute(bc, depth + 1);
      }
    } else if (cmd == "vtk_tasker_define") {
      if (n < 2) fail(c.line, cmd, "expected: vtk_tasker_define HOST [options]");
      VovTaskerDef t = defaults_;
      t.host = value(c.words[1], cmd);
      t.name.clear();
      t.line = c.line;
      tasker_options(c, 2, t, false);
      if (t.name.empty()) t.name = t.host;
      stored_ += t.resources.size() + t.name.size() + t.host.size();
      if (stored_ > kMaxStored) fail(c.line, cmd, "more than 64 MiB of definitions");
      out_.taskers.push_back(std::move(t));
    } else if (cmd == "vtk_tasker_set_defaults") {
      tasker_options(c, 1, defaults_, true);
    } else if (cmd == "vtk_resourcemap_set") {
      if (n < 3) fail(c.line, cmd, "expected: vtk_resourcemap_set NAME COUNT [-map EXPR]");
      VovMapDef m;
      m.name = value(c.words[1], cmd);
      m.line = c.line;
      size_t from = 2;
      const std::string second = value(c.words[2], cmd);
      if (second.empty() || second[0] != '-') {
        m.count = static_cast<uint64_t>(number(second, c.words[2].line, cmd, "COUNT", 1e15));
        from = 3;
      }
      const auto o = options(c, from, {"-map", "-total", "-max"}, {"-local"});
      for (const char* key : {"-total", "-max"})
        if (auto it = o.find(key); it != o.end())
          m.count = static_cast<uint64_t>(number(it->second.first, it->second.second, cmd, key, 1e15));
      if (auto it = o.find("-map"); it != o.end()) m.map = it->second.first;
      store(m, c, cmd);
    } else if (cmd == "vovresourcemgr") {
      if (n < 3 || value(c.words[1], cmd) != "set")
        fail(c.line, cmd, "expected: vovresourcemgr set NAME [-max N] [-map EXPR]");
      VovMapDef m;
      m.name = value(c.words[2], cmd);
      m.line = c.line;
      const auto o = options(c, 3, {"-max", "-map"}, {"-local"});
      if (auto it = o.find("-max"); it != o.end())
        m.count = static_cast<uint64_t>(number(it->second.first, it->second.second, cmd, "-max", 1e15));
      if (auto it = o.find("-map"); it != o.end()) m.map = it->second.first;
      store(m, c, cmd);
    } else {
      fail(c.line, cmd,
           "not a command of the supported Tcl subset (vtk_tasker_define, vtk_tasker_set_defaults, "
           "vtk_resourcemap_set, vovresourcemgr set, set, foreach)");
    }
  }

  std::string source_;
  VovTclFile& out_;
  std::map<std::string, std::string> vars_;
  size_t vars_bytes_ = 0;  // names and values of vars_
  VovTaskerDef defaults_;
  size_t commands_ = 0, stored_ = 0;
};

}  // namespace

VovTclFile parse_vov_tcl(const std::string& text, const std::string& source) {
  VovTclFile out;
  Reader(source, out).run(text, 1, 0);
  return out;
}

VovTclFile read_vov_tcl(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::string text;
  std::string_view line;
  while (in.next(line)) {
    text.append(line);
    text += '\n';
  }
  return parse_vov_tcl(text, path);
}

}  // namespace colmatch::loaders
