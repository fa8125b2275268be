// The parallel reader of an Altair Accelerator jobs.jsonl: loaders/vov_jobs.hpp.
#include "loaders/vov_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <simdjson.h>

namespace colmatch::loaders::vov_jobs {
namespace {

// The kind's key: each text with its length before it (no separator a text could hold). The duration is
// the job's own (JobPiece::duration): only which taskers TIMELEFT#<duration> keeps tells kinds apart
// (build_vov), so a million distinct durations do not make a million kinds.
void kind_key(const KindView& r, std::string& key) {
  const std::string_view texts[] = {r.resources, r.tool, r.owner, r.group, r.priority};
  size_t size = 0;
  for (const std::string_view t : texts) size += sizeof(uint32_t) + t.size();
  key.resize(size);  // written in place: one size for the whole key, no append per part
  char* at = key.data();
  for (const std::string_view t : texts) {
    const auto n = static_cast<uint32_t>(t.size());
    std::memcpy(at, &n, sizeof n);
    if (!t.empty()) std::memcpy(at + sizeof n, t.data(), t.size());  // an absent field's view has no data
    at += sizeof n + t.size();
  }
}

// Whether a JSON key is the literal (its length known when compiled: no memcmp call per key).
template <size_t N>
bool is(std::string_view name, const char (&literal)[N]) noexcept {
  return name.size() == N - 1 && std::memcmp(name.data(), literal, N - 1) == 0;
}

}  // namespace

// The kind whose key (kind_key) is `key`, with the command and the duration as read: views into `key`
// and `command`.
KindView kind_of_key(std::string_view key, std::string_view command, double expected_duration) {
  std::string_view texts[5];  // resources, tool, owner, group, priority
  size_t at = 0;
  for (std::string_view& t : texts) {
    uint32_t n = 0;
    std::memcpy(&n, key.data() + at, sizeof n);
    t = key.substr(at + sizeof n, n);
    at += sizeof n + n;
  }
  return KindView{texts[0], command, texts[2], texts[3], texts[4], expected_duration, texts[1]};
}

void read_piece(const std::string& path, const LinePiece& piece, const vov::Wrappers& wrappers, KindTable& kinds,
                JobPiece& out) {
  KindTable::Local& my_kinds = kinds.local();
  static thread_local simdjson::dom::parser parser;
  std::string key;
  std::string numbers[6];  // a text field given as a number, as text
  out.first_line = piece.first_line;
  out.reset(piece.text.size());
  // The job of one line's document (`ln`: its line in the file). Throws LoadError.
  auto take = [&](const simdjson::dom::element& doc, size_t ln, std::string_view) {
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) throw LoadError(path, ln, "", "expected a JSON object");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double submit = 0, runtime = nan, walltime = nan;
    KindView r;
    std::string_view id;
    for (auto field : obj) {
      const std::string_view name = field.key;
      const simdjson::dom::element el = field.value;
      auto text = [&](std::string_view& out_text, int slot) {
        double d = 0;
        if (!el.get_string().get(out_text)) return;
        if (el.get_double().get(d)) throw LoadError(path, ln, std::string(name), "expected a string");
        numbers[slot] = fmt::format("{}", d);
        out_text = numbers[slot];
      };
      auto number = [&](double& out_num) {
        double v = 0;
        if (el.get_double().get(v) || !std::isfinite(v) || v < 0)
          throw LoadError(path, ln, std::string(name), "expected a number >= 0");
        out_num = v;
      };
      if (is(name, "id")) text(id, 0);
      else if (is(name, "resources")) text(r.resources, 1);
      else if (is(name, "command")) text(r.command, 2);
      else if (is(name, "owner")) text(r.owner, 3);
      else if (is(name, "group")) text(r.group, 4);
      else if (is(name, "priority")) text(r.priority, 5);
      else if (is(name, "expected_duration")) number(r.expected_duration);
      else if (is(name, "submit")) number(submit);
      else if (is(name, "runtime")) number(runtime);
      else if (is(name, "walltime")) number(walltime);
      else throw LoadError(path, ln, std::string(name), "unknown key");
    }
    if (id.empty()) throw LoadError(path, ln, "id", "a job needs an id");
    if (out.id_text.size() + id.size() > UINT32_MAX)  // a piece is at most a few lines of 64 MiB
      throw LoadError(path, ln, "id", "more than 4 GiB of ids in one piece of the file");
    r.tool = vov::tool_view(r.command, wrappers);
    kind_key(r, key);
    out.kind.push_back(kinds.find_or_add(my_kinds, key, r));
    out.line.push_back(static_cast<uint32_t>(ln - piece.first_line));
    out.id_text.append(id);
    out.id_end.push_back(static_cast<uint32_t>(out.id_text.size()));
    out.id_hash.push_back(std::hash<std::string_view>{}(id));
    out.push(out.submit, submit, 0.0);
    out.push(out.runtime, runtime, nan);
    out.push(out.walltime, walltime, nan);
    out.push(out.duration, r.expected_duration, 0.0);
  };
  jsonl::read_piece_documents(path, piece, parser, out, take);
}

}  // namespace colmatch::loaders::vov_jobs
