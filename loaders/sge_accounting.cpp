#include "loaders/sge_accounting.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::sge {
namespace {

// Field numbers (1-based) before the category, and how many follow it.
constexpr size_t kCategory = 40;
constexpr size_t kAfterCategory = 5;  // iow, pe_taskid, maxvmem, arid, ar_submission_time
constexpr size_t kFewest = 43;        // 8.1.9 writes 45; the last two (advance reservations) may be absent

double number(std::string_view text, const std::string& path, size_t line, const char* field) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
    throw LoadError(path, line, field, fmt::format("'{}' is not a number", text));
  return v;
}

}  // namespace

std::vector<AccountingRecord> read_accounting(const std::string& path) {
  require_not_directory(path);
  LineReader in(path);
  std::vector<AccountingRecord> out;
  std::vector<std::string_view> f;
  std::string_view line;
  while (in.next(line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t ln = in.line();
    f.clear();
    size_t b = 0;
    for (size_t i = 0; i <= line.size(); ++i)
      if (i == line.size() || line[i] == ':') {
        f.push_back(line.substr(b, i - b));
        b = i + 1;
      }
    if (f.size() < kFewest)
      throw LoadError(path, ln, "",
                      fmt::format("{} colon-separated fields, an accounting record (accounting(5)) has at least {}",
                                  f.size(), kFewest));
    if (out.size() >= kMaxAccountingRecords) throw LoadError(path, ln, "", "more than 100M records");
    // 43 or 44 fields: the category is field 40 and the rest follow; 45 or more: the category took the
    // extra colons, so the five after it are counted from the end
    const size_t after = f.size() >= kCategory + kAfterCategory ? kAfterCategory : f.size() - kCategory;
    const size_t cat_end = f.size() - after;  // one past the category's last piece (0-based)
    AccountingRecord r;
    r.line = ln;
    auto s = [&](size_t n) { return std::string(f[n - 1]); };
    r.qname = s(1);
    r.hostname = s(2);
    r.group = s(3);
    r.owner = s(4);
    r.job_name = s(5);
    r.job_number = s(6);
    r.account = s(7);
    r.project = s(32);
    r.department = s(33);
    r.granted_pe = s(34);
    if (r.job_number.empty()) throw LoadError(path, ln, "job_number", "empty");
    // a decimal number (accounting(5)): the ids a replay makes of it (`5.2` for a task, `5~2` for a rerun)
    // cannot then be a record's own
    if (r.job_number.size() > 19 || r.job_number.find_first_not_of("0123456789") != std::string::npos)
      throw LoadError(path, ln, "job_number", fmt::format("'{}' is not a job number", r.job_number));
    r.priority = number(f[7], path, ln, "priority");
    r.submission = number(f[8], path, ln, "submission_time");
    r.start = number(f[9], path, ln, "start_time");
    r.end = number(f[10], path, ln, "end_time");
    for (auto [v, name] : {std::pair{r.submission, "submission_time"}, {r.start, "start_time"}, {r.end, "end_time"}})
      if (v < 0) throw LoadError(path, ln, name, "a time before 1970");
    const double failed = number(f[11], path, ln, "failed");
    if (failed < 0 || failed != std::floor(failed) || failed > 1e6) throw LoadError(path, ln, "failed", "not a code");
    r.failed = static_cast<uint32_t>(failed);
    r.wallclock = number(f[13], path, ln, "ru_wallclock");
    if (r.wallclock < 0) throw LoadError(path, ln, "ru_wallclock", "negative");
    const double slots = number(f[34], path, ln, "slots");
    if (slots < 1 || slots != std::floor(slots) || slots > 2147483647.0)
      throw LoadError(path, ln, "slots", fmt::format("'{}' is not a slot count >= 1", f[34]));
    r.slots = static_cast<uint32_t>(slots);
    const double task = number(f[35], path, ln, "task_number");
    if (task < 0 || task != std::floor(task) || task > 9007199254740992.0)
      throw LoadError(path, ln, "task_number", "not a task number");
    r.task_number = static_cast<uint64_t>(task);
    for (size_t i = kCategory - 1; i < cat_end; ++i) {
      if (i > kCategory - 1) r.category += ':';
      r.category.append(f[i]);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> category_words(const std::string& category) {
  std::vector<std::string> out;
  if (category == "NONE") return out;
  size_t i = 0;
  while (i < category.size()) {
    while (i < category.size() && (category[i] == ' ' || category[i] == '\t')) ++i;
    const size_t b = i;
    while (i < category.size() && category[i] != ' ' && category[i] != '\t') ++i;
    if (i > b) out.push_back(category.substr(b, i - b));
  }
  return out;
}

}  // namespace colmatch::loaders::sge
